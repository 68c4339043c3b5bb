"""The sample walk with its controller in process (hrpsim.Simulation) and as a process (hrpsim launch).

Both in lockstep, the same project (examples/sample_walk.yaml) and controller class, one after the other
in the same run: `inprocess_rtf` and `external_rtf` are simulated over wall seconds (the launch's
figure is the simulator's own, from its summary, so process start-up is not counted); `ratio` =
external / in-process. HRPSIM_BENCH_API_S sets the simulated seconds (default 16, the whole walk).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

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
    data = yaml.safe_load(WALK.read_text())
    data["world"]["end_time"] = until
    for model in data["models"]:
        model["file"] = str((WALK.parent / model["file"]).resolve())
    for controller in data["controllers"]:
        controller["cwd"] = str((WALK.parent / controller.get("cwd", ".")).resolve())
    project = folder / "walk.yaml"
    project.write_text(yaml.safe_dump(data))
    summary = folder / "summary.json"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "hrpsim",
            "launch",
            str(project),
            "--nameserver",
            "tcp://127.0.0.1:*",
            "--summary",
            str(summary),
            "--run-dir",
            str(folder / "run"),
            "--quiet",
        ],
        cwd=REPO,
        check=True,
        capture_output=True,
        timeout=600,
    )
    return json.loads(summary.read_text())["real_time_factor"]


def run() -> dict[str, float]:
    until = float(os.environ.get("HRPSIM_BENCH_API_S", "16"))
    with tempfile.TemporaryDirectory() as tmp:
        external = _external(until, Path(tmp))
    inprocess = _inprocess(until)
    return {"inprocess_rtf": inprocess, "external_rtf": external, "ratio": external / inprocess}
