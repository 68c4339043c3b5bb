"""`hrpsim launch` on the simulator's example projects: the run summaries show the physics."""

from __future__ import annotations

from pathlib import Path

import pytest
from process_helpers import REPO, launch_summary


def _launch(project: str, tmp_path: Path, *extra: str) -> dict:
    return launch_summary(REPO / "examples" / project, tmp_path, *extra).summary


def _launch_with_output(project: str, tmp_path: Path, *extra: str) -> tuple[dict, str]:
    launched = launch_summary(REPO / "examples" / project, tmp_path, *extra)
    return launched.summary, launched.stdout


def test_launch_box_drop_lands_the_box_on_the_floor(tmp_path: Path) -> None:
    summary, printed = _launch_with_output("box_drop.yaml", tmp_path)
    box = summary["robots"]["box"]
    assert box["has_joints"] is False
    box_line = next(line for line in printed.splitlines() if "robot box:" in line)
    assert "FELL" not in box_line and "stayed up" not in box_line  # a box has nothing to fall from
    assert summary["error"] is None and summary["sim_time"] == pytest.approx(2.0)
    assert box["root_start"][2] == pytest.approx(1.0)
    assert box["root_end"][2] == pytest.approx(0.1, abs=2e-3)
    assert box["min_root_z"] == pytest.approx(0.1, abs=0.01)


def test_launch_sample_stand_keeps_sample1_upright(tmp_path: Path) -> None:
    summary, printed = _launch_with_output("sample_stand.yaml", tmp_path, "--until", "2.0")
    robot = summary["robots"]["robot"]
    assert robot["has_joints"] and robot["upright_start"]
    assert "stayed up" in next(line for line in printed.splitlines() if "robot robot:" in line)
    assert summary["error"] is None and summary["sim_time"] == pytest.approx(2.0)
    assert robot["root_end"] == pytest.approx(robot["root_start"], abs=5e-3)
    assert robot["min_root_z"] > robot["root_start"][2] - 5e-3
