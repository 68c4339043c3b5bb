"""A Choreonoid body through the collision service: the Tank (Tank.body, on floor.body) driven on
its tracks with ``world.collision: service`` moves as with the simulator's built-in contacts
(real ``hrpsim launch`` runs; the launcher starts the collision process)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from collision_helpers import example_project
from process_helpers import REPO, launch_summary

EXAMPLE = REPO / "examples" / "tank_drive.yaml"


def launch(tmp_path: Path, mode: str, until: float) -> dict:
    folder = tmp_path / mode
    folder.mkdir()
    path = example_project(EXAMPLE, folder / "tank.yaml", collision=mode, end_time=until)
    return launch_summary(path, folder, timeout=600).summary


def test_tank_body_drives_the_same_with_the_collision_service(tmp_path: Path) -> None:
    builtin, service = launch(tmp_path, "builtin", 1.0), launch(tmp_path, "service", 1.0)
    assert builtin["error"] is None and service["error"] is None
    start = np.array(builtin["robots"]["tank"]["root_start"])
    end_builtin = np.array(builtin["robots"]["tank"]["root_end"])
    end_service = np.array(service["robots"]["tank"]["root_end"])
    assert end_builtin[0] - start[0] > 0.15  # it drove
    assert end_service == pytest.approx(end_builtin, abs=5e-3)
    assert (tmp_path / "service" / "run" / "collision.log").exists()
