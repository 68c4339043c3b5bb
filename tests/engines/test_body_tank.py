"""Choreonoid's Tank, read from its body file, drives straight ahead on its pseudo continuous
tracks under a controller (a real ``hrpsim launch`` of examples/tank_drive.yaml, on ODE)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from process_helpers import REPO, launch_summary

PROJECT = REPO / "examples" / "tank_drive.yaml"


def test_tank_drives_forward_at_its_tracks_surface_speed(tmp_path: Path) -> None:
    project = yaml.safe_load(PROJECT.read_text())
    speed = float(project["controllers"][0]["command"].rsplit("speed=", 1)[1])
    seconds = float(project["world"]["end_time"])
    launched = launch_summary(PROJECT, tmp_path, timeout=600)
    summary = launched.summary
    tank = summary["robots"]["tank"]
    assert summary["error"] is None and summary["sim_time"] == pytest.approx(seconds)
    start, end = tank["root_start"], tank["root_end"]
    # both tracks at the same surface speed: straight along the tank's x, at about that speed
    assert end[0] - start[0] == pytest.approx(speed * seconds, rel=0.15)
    assert abs(end[1] - start[1]) < 0.05
    assert end[2] == pytest.approx(start[2], abs=0.01)
    # a vehicle, wider than tall: no verdict, its root's height band (docs/architecture.md, "The run summary")
    line = next(line for line in launched.stdout.splitlines() if "robot tank:" in line)
    assert tank["kind"] == "free body" and "stayed up" not in line and "FELL" not in line
    assert f"root height {tank['min_root_z']:.3f}-{tank['max_root_z']:.3f} m" in line
