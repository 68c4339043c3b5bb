"""Memory and descriptors of a long realtime run: RSS and fd growth per minute of every process.

`hrpsim launch` of the sample humanoid's walk (examples/sample_walk.yaml: sample1.wrl on floor.wrl,
its walking controller every 2 ms, sending high-gain joint targets) in realtime for
`HRPSIM_SOAK_SECONDS` of wall time (default 300), then Ctrl-C. Every process of the stack
(launcher, nameserver, modelloader, simserver, controller) is sampled every 2 s; after a warm-up of
a fifth of the run, each one's RSS growth is the slope of a least-squares line through its samples:
`rss_kb_per_min_<process>`, the steepest as `rss_kb_per_min_max`; `rss_mb_end_<process>` its RSS at
the end; `fds_growth_max`: the largest change of open descriptors over the measured part. Baseline:
the nameserver, which only answers heartbeats in the same run (`rss_kb_per_min_nameserver`):
growth no larger than its own is noise. A machine that cannot keep real time runs the walk slower
(the real-time factor it reaches is in the launch's summary); the figures are per wall minute.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import psutil

REPO = Path(__file__).resolve().parents[1]
MODELS = REPO / "models" / "openhrp3" / "model"
SAMPLE_EVERY_S = 2.0
ROLES = {
    "run nameserver": "nameserver",
    "run modelloader": "modelloader",
    "run simserver": "simserver",
    "sample_walk.py": "controller",
}  # a marker in the process's command line -> its role


def soak_seconds() -> float:
    return float(os.environ.get("HRPSIM_SOAK_SECONDS", "300"))


def walk_project(folder: Path) -> Path:
    text = (REPO / "examples" / "sample_walk.yaml").read_text()
    text = text.replace("../models/openhrp3/model", str(MODELS))
    text = text.replace("end_time: 16.0, sync: lockstep", "end_time: 100000.0, sync: realtime")
    text = text.replace("cwd: ..", f"cwd: {REPO}")
    # joint targets tracked by the simulator: a tick whose command comes late holds the last targets,
    # so a machine that cannot keep real time does not send the robot off the floor's edge
    text = text.replace("drive: torque", "drive: high_gain")
    text = text.replace("sample_walk.py", "sample_walk.py -o mode=high_gain")
    path = folder / "soak.yaml"
    path.write_text(text)
    return path


def role_of(proc: psutil.Process, launcher: int) -> str | None:
    if proc.pid == launcher:
        return "launcher"
    line = " ".join(proc.cmdline())
    return next((role for marker, role in ROLES.items() if marker in line), None)


def sample(launcher: psutil.Process) -> dict[str, tuple[float, int]]:
    """(RSS in kB, open fds) of each process of the stack, by role."""
    out = {}
    for proc in [launcher, *launcher.children(recursive=True)]:
        try:
            role = role_of(proc, launcher.pid)
            if role is not None:
                out[role] = (proc.memory_info().rss / 1024, proc.num_fds())
        except psutil.NoSuchProcess:
            continue
    return out


def run() -> dict[str, float]:
    duration = soak_seconds()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "hrpsim",
                "launch",
                str(walk_project(folder)),
                "--nameserver",
                "tcp://127.0.0.1:*",
                "--run-dir",
                str(folder / "run"),
                "--quiet",
            ],
            cwd=REPO,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        launcher = psutil.Process(proc.pid)
        series: dict[str, list[tuple[float, float, int]]] = {}
        try:
            started = time.monotonic()
            while time.monotonic() - started < duration and proc.poll() is None:
                now = (time.monotonic() - started) / 60.0
                for role, (rss, fds) in sample(launcher).items():
                    series.setdefault(role, []).append((now, rss, fds))
                time.sleep(SAMPLE_EVERY_S)
            ended = proc.poll()
        finally:
            proc.send_signal(signal.SIGINT)
            proc.wait(60)
        if ended is not None:
            log = "\n".join((folder / "run" / "simserver.log").read_text(errors="replace").splitlines()[-5:])
            raise RuntimeError(
                f"the run ended after {time.monotonic() - started:.0f} s (status {ended}), before "
                f"the soak's {duration:g} s; the simulator's log ends:\n{log}"
            )
    return figures(series, warmup_min=duration / 60.0 / 5)


def figures(series: dict[str, list[tuple[float, float, int]]], warmup_min: float) -> dict[str, float]:
    out: dict[str, float] = {}
    fds_growth = 0
    for role, samples in sorted(series.items()):
        kept = np.array([s for s in samples if s[0] >= warmup_min])
        if len(kept) < 3:
            continue
        slope = np.polyfit(kept[:, 0], kept[:, 1], 1)[0]
        out[f"rss_kb_per_min_{role}"] = float(slope)
        out[f"rss_mb_end_{role}"] = float(kept[-1, 1] / 1024)
        fds_growth = max(fds_growth, int(kept[-1, 2] - kept[0, 2]))
    slopes = {k: v for k, v in out.items() if k.startswith("rss_kb_per_min_")}
    if slopes:
        out["rss_kb_per_min_max"] = max(slopes.values())
    out["fds_growth_max"] = float(fds_growth)
    out["minutes"] = max((s[-1][0] for s in series.values() if s), default=0.0)
    return out
