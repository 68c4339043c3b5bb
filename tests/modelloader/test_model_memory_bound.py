"""Reading a model file takes at most MEMORY_PER_FILE_BYTE times its size beyond the process's
baseline: a real ``hrpsim model info`` runs under an address-space limit (prlimit --as) of its
baseline and that much, and its peak resident memory grows by no more."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from modelloader_helpers import write_model
from process_helpers import REPO

from hrpsim.modelloader import MEMORY_PER_FILE_BYTE

MESH_BYTES = 12_000_000  # large enough to dwarf the baseline's noise, cheap to parse (a second or two)
# Runs `hrpsim model info FILE`, then says the process's peak address space and peak resident
# memory (kB) on stderr.
DRIVER = """
import resource
import sys
from hrpsim.modelloader.cli import main
status = main(["info", sys.argv[1]])
peak = next(line for line in open("/proc/self/status") if line.startswith("VmPeak:"))
print("PEAK", peak.split()[1], resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)
sys.exit(status)
"""

pytestmark = pytest.mark.skipif(shutil.which("prlimit") is None, reason="needs util-linux prlimit")


def _mesh_model(folder: Path, name: str, points: int) -> Path:
    """One Segment with an IndexedFaceSet of ``points`` points and as many triangles."""
    rng = np.random.default_rng(7)
    coords = " ".join(f"{v:.6f}" for v in rng.random(points * 3))
    faces = " ".join(f"{a} {b} {c} -1" for a, b, c in rng.integers(0, points, size=(points, 3)))
    return write_model(
        folder,
        'DEF R Humanoid { name "mesh" humanoidBody [ DEF J Joint { jointType "free" children [\n'
        "  DEF S Segment { mass 1 momentsOfInertia [1 0 0 0 1 0 0 0 1] children [\n"
        f"    Shape {{ geometry IndexedFaceSet {{ coord Coordinate {{ point [ {coords} ] }}\n"
        f"      coordIndex [ {faces} ] }} }}\n"
        "  ] }\n] } ] }\n",
        name=name,
    )


def _model_info(path: Path, address_space: int | None = None) -> tuple[subprocess.CompletedProcess, int, int]:
    """Its run, and its peak address space and peak resident memory in bytes (-1: not reached)."""
    limit = ["prlimit", f"--as={address_space}"] if address_space else []
    done = subprocess.run(
        [*limit, sys.executable, "-c", DRIVER, str(path)], capture_output=True, text=True, timeout=600, cwd=REPO
    )
    peaks = [line.split()[1:] for line in done.stderr.splitlines() if line.startswith("PEAK ")]
    return done, *((int(peaks[0][0]) * 1024, int(peaks[0][1]) * 1024) if peaks else (-1, -1))


def test_a_large_mesh_reads_within_the_stated_bound(tmp_path: Path) -> None:
    tiny = _mesh_model(tmp_path, "tiny.wrl", 10)
    done, baseline, baseline_rss = _model_info(tiny)
    assert done.returncode == 0 and baseline > 0, done.stderr
    big = _mesh_model(tmp_path, "big.wrl", MESH_BYTES // 70)  # ~70 bytes of text per point and face
    size = big.stat().st_size
    assert size > MESH_BYTES * 0.7
    done, _, rss = _model_info(big, baseline + MEMORY_PER_FILE_BYTE * size)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "mesh" in done.stdout
    assert rss - baseline_rss <= MEMORY_PER_FILE_BYTE * size, f"{(rss - baseline_rss) / size:.1f} x the file"
