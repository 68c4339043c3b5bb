"""Reading every body from ODE's memory at once gives exactly what pyode's getters give."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from sim_helpers import FLOOR, SAMPLE1

from hrpsim.engines.base import JointCommand
from hrpsim.engines.ode.body_table import BodyTable
from hrpsim.engines.ode.engine import OdeEngine
from hrpsim.modelloader import load_body
from hrpsim.project import parse_project

BENT_KNEES = {
    "RLEG_HIP_P": -0.3,
    "RLEG_KNEE": 0.6,
    "RLEG_ANKLE_P": -0.3,
    "LLEG_HIP_P": -0.3,
    "LLEG_KNEE": 0.6,
    "LLEG_ANKLE_P": -0.3,
}


def _sample_world(tmp_path: Path, joints: dict[str, float] | None = None) -> OdeEngine:
    data = {
        "world": {"timestep": 0.001},
        "models": [
            {"name": "floor", "file": str(FLOOR), "static": True, "position": [0, 0, -0.1]},
            {"name": "robot", "file": str(SAMPLE1), "position": [0, 0, 0.8], "drive": "torque", "joints": joints or {}},
        ],
        "collisions": [{"a": "floor", "b": "robot", "friction": 0.5}],
    }
    project = parse_project(data, str(tmp_path / "world.yaml"))
    return OdeEngine(project, {m.name: load_body(m.file) for m in project.models})


def _pyode_rows(bodies: list) -> np.ndarray:
    return np.array(
        [
            [*b.getPosition(), *b.getRotation(), *b.getQuaternion(), *b.getLinearVel(), *b.getAngularVel()]
            for b in bodies
        ]
    )


def _table_rows(table: BodyTable) -> np.ndarray:
    r = table.read()
    n = len(table.bodies)
    return np.hstack([r.positions, r.rotations.reshape(n, 9), r.quaternions, r.linear, r.angular])


def _move(world: OdeEngine, ticks: int) -> None:
    n = len(world.model("robot").joint_names)
    world.apply("robot", JointCommand(torque=np.linspace(-20.0, 20.0, n)))
    for _ in range(ticks):
        world.step()


def test_a_falling_robot_reads_the_same_from_memory_as_through_pyode(tmp_path: Path) -> None:
    world = _sample_world(tmp_path)
    model = world.model("robot")
    table = model.bodies
    assert table.direct, "libode's body memory should be readable on this system"
    _move(world, 300)  # falling, hitting the floor, joints swinging: every vector non-trivial
    expected = _pyode_rows(table.bodies)
    assert np.ptp(expected[:, 16:22]) > 0.1  # the bodies really move
    np.testing.assert_array_equal(_table_rows(table), expected)
    motion = table.motion()
    np.testing.assert_array_equal(motion[:, 0], expected[:, 0:3])
    np.testing.assert_array_equal(motion[:, 1], expected[:, 16:19])
    np.testing.assert_array_equal(motion[:, 2], expected[:, 19:22])


def test_link_states_are_the_link_frames_computed_from_pyode(tmp_path: Path) -> None:
    world = _sample_world(tmp_path)
    _move(world, 200)
    model = world.model("robot")
    states = world.link_states("robot")
    for i, sim in enumerate(model.links):
        origin, rotation = model.link_origin(sim)
        linear, angular = model.link_velocity(sim)
        np.testing.assert_allclose(states.positions[i], origin, atol=1e-12)
        np.testing.assert_allclose(states.linear[i], linear, atol=1e-12)
        np.testing.assert_allclose(states.angular[i], angular, atol=1e-12)
        np.testing.assert_allclose(states.quaternions[i], sim.body.getQuaternion(), atol=1e-12)
        assert np.allclose(rotation @ rotation.T, np.eye(3))


def test_a_reset_world_reads_its_new_bodies_not_the_released_ones(tmp_path: Path) -> None:
    world = _sample_world(tmp_path)
    start = world.link_states("robot").positions.copy()
    _move(world, 200)
    assert not np.allclose(world.link_states("robot").positions, start)
    world.reset()
    np.testing.assert_allclose(world.link_states("robot").positions, start, atol=1e-12)
    _move(world, 50)
    np.testing.assert_array_equal(
        _table_rows(world.model("robot").bodies), _pyode_rows(world.model("robot").bodies.bodies)
    )


def test_without_memory_access_the_table_reads_through_pyode(tmp_path: Path) -> None:
    world = _sample_world(tmp_path)
    _move(world, 100)
    bodies = world.model("robot").bodies.bodies
    fallback = BodyTable(bodies)
    fallback._view = fallback._index = None  # as on a libode without ctypes access
    assert not fallback.direct
    np.testing.assert_array_equal(_table_rows(fallback), _pyode_rows(bodies))
    np.testing.assert_array_equal(fallback.motion()[:, 1], _pyode_rows(bodies)[:, 16:19])


def _effort_through_pyode(model, sim) -> float:
    """A joint's effort from pyode's getters alone: the constraint wrench on the child body about
    the joint's anchor, along its axis."""
    f, t, _, _ = sim.joint.getFeedback()
    axis = np.array(sim.joint.getAxis())
    if sim.kind == "slider":
        return float(np.dot(f, axis))
    lever = np.array(sim.body.getPosition()) - np.array(sim.joint.getAnchor())
    return float(np.dot(np.array(t) + np.cross(lever, f), axis))


def test_joint_efforts_from_memory_match_the_wrench_pyode_reports(tmp_path: Path) -> None:
    world = _sample_world(tmp_path, BENT_KNEES)
    model = world.model("robot")
    world.apply("robot", JointCommand(modes=dict.fromkeys(model.joint_names, "high_gain")))
    for _ in range(400):  # motors holding bent knees on the floor: real efforts
        world.step()
    assert model.wrenches.direct
    efforts = model.joint_efforts(model.bodies.read())
    expected = [_effort_through_pyode(model, sim) if sim.kind in ("hinge", "slider") else 0.0 for sim in model.joints]
    assert np.max(np.abs(expected)) > 1.0  # the legs carry the robot
    np.testing.assert_allclose(efforts, expected, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(world.read("robot").tau, expected, rtol=1e-9, atol=1e-9)
