"""The walking example (sample1 on floor.wrl, SampleController's pattern through a controller
process) as ``hrpsim launch`` runs it, with the contacts from the built-in generator or from the
collision service: the project, and a run of it to its end."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from collision_helpers import example_project
from process_helpers import HRPSIM, REPO

EXAMPLE_WALK = REPO / "examples" / "sample_walk.yaml"
WALK_END_TIME = 3.0  # s: the robot stands, then walks; feet lift and land, contacts come and go


def walk_project(folder: Path, mode: str) -> Path:
    """The walking example, its paths made absolute, with ``world.collision: mode``, until ``WALK_END_TIME``."""
    return example_project(EXAMPLE_WALK, folder / f"walk_{mode}.yaml", collision=mode, end_time=WALK_END_TIME)


def launch_walk(folder: Path, mode: str) -> dict:
    """The summary of the walk run to its end by ``hrpsim launch``, its logs in ``folder / f"run_{mode}"``."""
    summary = folder / f"{mode}.json"
    argv = [*HRPSIM, "launch", str(walk_project(folder, mode)), "--summary", str(summary)]
    argv += ["--nameserver", "tcp://127.0.0.1:*", "--run-dir", str(folder / f"run_{mode}"), "--quiet"]
    done = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(summary.read_text())
