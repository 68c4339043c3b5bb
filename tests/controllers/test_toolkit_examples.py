"""The toolkit's examples, run as a user runs them: ``hrpsim launch`` with the controller in its own
process, checked from the recording with the engine-independent forward kinematics
(hrpsim.kinematics), not with the toolkit's model."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from process_helpers import REPO, launch_summary

from hrpsim.kinematics import forward_kinematics, link_values
from hrpsim.recording.reader import open_recording
from hrpsim.recording.schemas import state_topic

sys.path.insert(0, str(REPO / "examples" / "controllers"))
from pa10_circle import HAND, circle_point


def hand_positions(recording: Path, robot: str, link: str) -> tuple[np.ndarray, np.ndarray]:
    """(times, world positions of ``link``) of every recorded state."""
    rec = open_recording(recording)
    body, joints = rec.bodies()[robot], rec.joints(robot)
    index = body.link_index(link)
    times, positions = [], []
    for _, _, state in rec.messages([state_topic(robot)]):
        values = link_values(body, dict(zip(joints, state["q"], strict=True)))
        rotation = np.array(state["root_rotation"], float).reshape(3, 3)
        poses = forward_kinematics(body, np.array(state["root_position"], float), rotation, values)
        times.append(state["time"])
        positions.append(poses[index][0])
    return np.array(times), np.array(positions)


def test_pa10_draws_its_circle_within_5_mm(tmp_path: Path) -> None:
    recording = tmp_path / "circle.mcap"
    launched = launch_summary(REPO / "examples/pa10_circle.yaml", tmp_path, "--record", str(recording), timeout=600)
    assert launched.summary["error"] is None
    times, hands = hand_positions(recording, "pa10", HAND)
    assert times[-1] >= 4.99  # the whole turn was drawn
    goals = np.array([circle_point(t, hands[0], radius=0.1, turn=4.0, ramp=1.0) for t in times])
    errors = np.linalg.norm(hands - goals, axis=1)
    assert errors.max() < 5e-3
    # it did draw the circle: the wrist went round, 0.2 m across
    assert np.ptp(hands[:, 0]) > 0.19 and np.ptp(hands[:, 1]) > 0.19 and np.ptp(hands[:, 2]) < 5e-3


def test_sample1_balances_through_the_push_the_hold_falls_from(tmp_path: Path) -> None:
    hold = launch_summary(REPO / "examples/sample_push_hold.yaml", tmp_path / "hold", timeout=600).summary
    assert hold["error"] is None
    assert hold["robots"]["robot"]["root_end"][2] < 0.4  # fallen flat
    balance = launch_summary(REPO / "examples/sample_push.yaml", tmp_path / "balance", timeout=600).summary
    assert balance["error"] is None
    robot = balance["robots"]["robot"]
    assert robot["root_end"][2] > 0.6 and robot["min_root_z"] > 0.6  # never went down
    assert abs(robot["root_end"][0]) < 0.2  # where it stood (it did not fall and slide)
