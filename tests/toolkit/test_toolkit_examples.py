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


def trunk_and_legs(recording: Path, robot: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(times, the root link's pitch in the world (rad, forward positive), the leg joints) of every
    recorded state."""
    rec = open_recording(recording)
    legs = [i for i, name in enumerate(rec.joints(robot)) if "LEG" in name]
    times, pitches, joints = [], [], []
    for _, _, state in rec.messages([state_topic(robot)]):
        rotation = np.array(state["root_rotation"], float).reshape(3, 3)
        times.append(state["time"])
        pitches.append(np.arctan2(rotation[0, 2], rotation[2, 2]))
        joints.append(np.asarray(state["q"], float)[legs])
    return np.array(times), np.array(pitches), np.array(joints)


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
    # to t = 5 s, as long as the hold runs: staying up is told by then (straightening up after it,
    # which takes the project's whole 12 s, is the next test's)
    balance = launch_summary(
        REPO / "examples/sample_push.yaml", tmp_path / "balance", "--until", "5.0", timeout=600
    ).summary
    assert balance["error"] is None
    robot = balance["robots"]["robot"]
    assert robot["root_end"][2] > 0.6 and robot["min_root_z"] > 0.6  # never went down
    assert abs(robot["root_end"][0]) < 0.2  # where it stood (it did not fall and slide)


def test_sample1_straightens_up_once_the_push_is_over(tmp_path: Path) -> None:
    recording = tmp_path / "push.mcap"
    summary = launch_summary(
        REPO / "examples/sample_push.yaml", tmp_path, "--record", str(recording), timeout=600
    ).summary
    assert summary["error"] is None
    assert summary["robots"]["robot"]["min_root_z"] > 0.6  # stayed up throughout
    times, pitch, legs = trunk_and_legs(recording, "robot")
    assert times[-1] >= 11.99  # the whole run was recorded
    assert pitch[times > 1.5].max() > 0.25  # it leant into the push (the hip strategy)
    assert np.abs(pitch[times > times[-1] - 0.5]).max() < 0.05  # upright again, and staying so
    # straightened up gradually: from its last lean beyond 0.2 rad on, the trunk turns no faster
    # than the controller's return rate (0.15 rad/s), with a margin
    last_bent = np.nonzero(pitch > 0.2)[0][-1]
    assert np.abs(np.diff(pitch[last_bent:]) / np.diff(times[last_bent:])).max() < 0.2
    # ... into the stance it stood in before the push
    stance = legs[np.nonzero(times <= 1.5)[0][-1]]
    assert np.abs(legs[-1] - stance).max() < 0.01
