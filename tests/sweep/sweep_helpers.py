"""Helpers for the sweep tests: small sweep files over the real example projects, and running
``hrpsim sweep`` as a user does (a real process)."""

from __future__ import annotations

import subprocess
import textwrap
from pathlib import Path

from process_helpers import HRPSIM, REPO

from hrpsim.sweep.table import TIMING, read_table

SLOPE = REPO / "examples" / "slope.yaml"  # a box on a 28 degree slope: it slides when friction < 0.53

METRICS = '''
import math


def slid(run):
    """How far the box moved: root_end from root_start, in metres."""
    box = run.summary["robots"]["box"]
    return math.dist(box["root_start"], box["root_end"])


def broken(run):
    if run.params["collisions[0].friction"] > 0.8:
        raise ValueError("this metric fails on purpose")
    return 1.0
'''


def write_sweep(folder: Path, body: str, *, metrics: bool = True) -> Path:
    if metrics:
        (folder / "metrics.py").write_text(METRICS)
    path = folder / "sweep.yaml"
    path.write_text(f"project: {SLOPE}\n" + textwrap.dedent(body))
    return path


def sweep(*args: str, cwd: Path, timeout: float = 600.0) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*HRPSIM, "sweep", *args], cwd=cwd, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL
    )


def table_without_timing(path: Path) -> list[dict]:
    _, rows = read_table(path)
    return [{k: v for k, v in row.items() if k not in TIMING} for row in rows]
