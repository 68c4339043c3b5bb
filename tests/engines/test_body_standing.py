"""Choreonoid's GR001 and SR1 humanoids, read from their body files, stand for 5 s in high-gain
mode on ODE and on MuJoCo: real ``hrpsim launch`` runs of the example projects."""

from __future__ import annotations

from pathlib import Path

import pytest
from process_helpers import REPO, launch_summary

PROJECTS = ["gr001_stand.yaml", "gr001_stand_mujoco.yaml", "sr1_stand.yaml", "sr1_stand_mujoco.yaml"]


@pytest.mark.parametrize("project", PROJECTS)
def test_body_humanoid_stands_for_five_seconds(project: str, tmp_path: Path) -> None:
    if "mujoco" in project:
        pytest.importorskip("mujoco")
    launched = launch_summary(REPO / "examples" / project, tmp_path, timeout=600)
    summary = launched.summary
    robot = summary["robots"]["robot"]
    assert summary["error"] is None and summary["sim_time"] == pytest.approx(5.0)
    assert robot["has_joints"] and robot["upright_start"]
    assert "stayed up" in next(line for line in launched.stdout.splitlines() if "robot robot:" in line)
    start, end = robot["root_start"], robot["root_end"]
    assert end[:2] == pytest.approx(start[:2], abs=0.01)  # no drift, no step
    assert end[2] == pytest.approx(start[2], abs=0.01)  # the feet settle on the floor, nothing sinks
    assert robot["min_root_z"] > start[2] - 0.01
