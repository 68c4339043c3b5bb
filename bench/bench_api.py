"""The sample walk with its controller in process (hrpsim.Simulation) and as a process (hrpsim launch).

Both in lockstep, the same project (examples/sample_walk.yaml) and controller class, one after the other
in the same run: `inprocess_rtf` and `external_rtf` are simulated over wall seconds (the launch's
figure is the simulator's own, from its summary, so process start-up is not counted); `ratio` =
external / in-process. HRPSIM_BENCH_API_S sets the simulated seconds (default 16, the whole walk).
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from procs import launch_summary, walk_project  # noqa: E402

import hrpsim  # noqa: E402
from hrpsim.project import load_project  # noqa: E402

WALK = REPO / "examples" / "sample_walk.yaml"


def _inprocess(until: float) -> float:
    project = load_project(WALK)
    project.world.end_time = until
    walker = project.controllers[0]
    walker.in_process, walker.file = True, str(REPO / "examples" / "controllers" / "sample_walk.py")
    with hrpsim.Simulation(project) as sim:
        start = time.perf_counter()
        sim.run()
        return sim.time / (time.perf_counter() - start)


def _external(until: float, folder: Path) -> float:
    return launch_summary(walk_project(folder, "walk", end_time=until), folder)["real_time_factor"]


def run() -> dict[str, float]:
    until = float(os.environ.get("HRPSIM_BENCH_API_S", "16"))
    with tempfile.TemporaryDirectory() as tmp:
        external = _external(until, Path(tmp))
    inprocess = _inprocess(until)
    return {"inprocess_rtf": inprocess, "external_rtf": external, "ratio": external / inprocess}
