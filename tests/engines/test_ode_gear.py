"""The gear contact's geometry (engines/ode/gear.py): one contact row that reads
c (dq - multiplier dq_master) for every pair of rates, found where it exists and refused where none
does; and the two links each mimic's contact joins."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from hrpsim.engines.ode.gear import ZERO, JointMotion, gear_bodies, gear_mesh
from hrpsim.modelloader import load_body

WAM = "openrave/robots/barrett-wam-sensors.zae"


def hinge(axis, anchor) -> JointMotion:
    axis = np.asarray(axis, float) / np.linalg.norm(axis)
    return JointMotion(tuple(axis), tuple(float(v) for v in anchor), ZERO)


def slider(axis) -> JointMotion:
    axis = np.asarray(axis, float) / np.linalg.norm(axis)
    return JointMotion(ZERO, ZERO, tuple(axis))


def row_reading(mesh, mimic: JointMotion, master: JointMotion, dq: float, dq_master: float) -> float:
    """What the contact's friction row reads when the two joints move at these rates."""
    velocity = dq * np.array(mimic.velocity_at(mesh.point)) + dq_master * np.array(master.velocity_at(mesh.point))
    return float(np.asarray(mesh.direction) @ velocity)


def test_parallel_hinges_mesh_at_the_pitch_point_of_two_wheels() -> None:
    master, mimic = hinge([0, 0, 1], [0.0, 0.0, 0.0]), hinge([0, 0, 1], [0.07, 0.0, 0.0])
    mesh = gear_mesh(mimic, master, 1 / 3, lambda: 0.07)
    # master turning 1 moves P by -1/3 of what the mimic turning 1 does: P = (A_master + m A_mimic) / (1 + m)
    assert mesh.point == pytest.approx((0.07 / 4, 0.0, 0.0))
    assert mesh.leverage == pytest.approx(0.07 * 3 / 4)  # P's distance from the mimic's axis
    assert row_reading(mesh, mimic, master, 1 / 3, 1.0) == pytest.approx(0.0, abs=1e-12)
    assert row_reading(mesh, mimic, master, 1.0, 0.0) == pytest.approx(mesh.leverage)


@pytest.mark.parametrize("seed", range(40))
def test_the_row_reads_the_relation_for_any_two_joints_it_accepts(seed: int) -> None:
    rng = np.random.default_rng(seed)
    kinds = rng.integers(0, 4)  # both hinges (twice as likely), hinge and slider, slider and hinge
    mimic = slider(rng.normal(size=3)) if kinds == 2 else hinge(rng.normal(size=3), rng.normal(size=3) * 0.1)
    master = slider(rng.normal(size=3)) if kinds == 3 else hinge(rng.normal(size=3), rng.normal(size=3) * 0.1)
    multiplier = float(rng.choice([-2.0, -0.5, 0.3, 1.0, 3.0]))
    mesh = gear_mesh(mimic, master, multiplier, lambda: 0.1)
    assert mesh is not None  # joints in general position always admit one
    assert mesh.leverage > 0.0
    assert np.linalg.norm(mesh.direction) == pytest.approx(1.0)
    for dq, dq_master in rng.normal(size=(5, 2)):
        assert row_reading(mesh, mimic, master, dq, dq_master) == pytest.approx(
            mesh.leverage * (dq - multiplier * dq_master), abs=1e-12
        )
    # the normal's row never pushes: neither joint moves P along it
    for motion in (mimic, master):
        assert float(np.asarray(mesh.normal) @ motion.velocity_at(mesh.point)) == pytest.approx(0.0, abs=1e-12)
    assert float(np.asarray(mesh.normal) @ mesh.direction) == pytest.approx(0.0, abs=1e-12)


def test_crossing_axes_mesh_away_from_the_crossing() -> None:
    # axes through one point: the combined motion's axis passes through it, where the mimic moves nothing
    mimic, master = hinge([0, 1, 0], [0.0, 0.0, 0.0]), hinge([0, 0, 1], [0.0, 0.0, 0.0])
    mesh = gear_mesh(mimic, master, -0.5, lambda: 0.1)
    assert mesh is not None and np.linalg.norm(mesh.point) == pytest.approx(0.1)
    assert row_reading(mesh, mimic, master, 0.7, 0.2) == pytest.approx(mesh.leverage * (0.7 + 0.5 * 0.2))


@pytest.mark.parametrize(
    ("mimic", "master"),
    [
        (slider([0, 1, 0]), slider([0, -1, 0])),  # a gripper's fingers on one line: only their sum shows
        (hinge([0, 0, 1], [0.1, 0.0, 0.0]), hinge([0, 0, 1], [0.1, 0.0, 0.0])),  # one axis: only the difference
    ],
)
def test_motions_that_show_one_combination_of_the_rates_have_no_gear(mimic: JointMotion, master: JointMotion) -> None:
    assert gear_mesh(mimic, master, 0.5, lambda: 0.1) is None


def test_each_wam_mimic_is_geared_to_the_links_its_two_joints_move_apart(models_dir: Path) -> None:
    links = load_body(models_dir / WAM).links
    index = {lk.joint_label: i for i, lk in enumerate(links)}
    by_name = {lk.name: i for i, lk in enumerate(links)}
    # a finger's distal joint is carried by its master: the distal link against the master's parent
    assert gear_bodies(links, index["JF1mimic"], index["JF1"]) == (by_name["Finger0-2"], by_name["Finger0-0"], (1, 1))
    assert gear_bodies(links, index["JF2mimic"], index["JF2"]) == (by_name["Finger1-2"], by_name["Finger1-0"], (1, 1))
    # the two spread joints hang from the palm side by side: one finger base against the other
    assert gear_bodies(links, index["JF4mimic"], index["JF4"]) == (by_name["Finger1-0"], by_name["Finger0-0"], (1, -1))
    # a finger's distal joint and another finger's master: the palm's joints lie between
    assert gear_bodies(links, index["JF1mimic"], index["JF2"]) is None
