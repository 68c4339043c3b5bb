"""The walking example (sample1 on floor.wrl, SampleController's pattern through a controller
process) as ``hrpsim launch`` runs it, with the contacts from the built-in generator or from the
collision service: the project, and a run of it to its end."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import yaml
from process_helpers import HRPSIM, REPO

EXAMPLE_WALK = REPO / "examples" / "sample_walk.yaml"
WALK_END_TIME = 3.0  # s: the robot stands, then walks; feet lift and land, contacts come and go


def walk_project(folder: Path, mode: str) -> Path:
    """The walking example, its paths made absolute, with ``world.collision: mode``, until ``WALK_END_TIME``."""
    project = yaml.safe_load(EXAMPLE_WALK.read_text())
    project["world"].update(collision=mode, end_time=WALK_END_TIME)
    for model in project["models"]:
        model["file"] = str((EXAMPLE_WALK.parent / model["file"]).resolve())
    for controller in project["controllers"]:
        controller["cwd"] = str((EXAMPLE_WALK.parent / controller.get("cwd", ".")).resolve())
    path = folder / f"walk_{mode}.yaml"
    path.write_text(yaml.safe_dump(project))
    return path


def launch_walk(folder: Path, mode: str) -> dict:
    """The summary of the walk run to its end by ``hrpsim launch``, its logs in ``folder / f"run_{mode}"``."""
    summary = folder / f"{mode}.json"
    argv = [*HRPSIM, "launch", str(walk_project(folder, mode)), "--summary", str(summary)]
    argv += ["--nameserver", "tcp://127.0.0.1:*", "--run-dir", str(folder / f"run_{mode}"), "--quiet"]
    done = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(summary.read_text())
