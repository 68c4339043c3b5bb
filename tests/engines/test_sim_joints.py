"""Joints beyond the tree: closed loops (extra joints), joint limits, crawler tracks."""

from __future__ import annotations

from pathlib import Path

import pytest
from sim_helpers import crawler_body, floor_body, four_bar_body, model, pendulum_body, project

from hrpsim.engines.base import JointCommand
from hrpsim.engines.ode.engine import OdeEngine
from hrpsim.engines.ode.extrajoints import loop_gap
from hrpsim.errors import ConfigError
from hrpsim.project import CollisionPair


@pytest.mark.parametrize("loop_type", ["ball", "xyz", "xy", "piston"])
def test_extra_joint_closes_a_four_bar_loop(tmp_path: Path, loop_type: str) -> None:
    body = four_bar_body(loop_type)
    proj, bodies = project(tmp_path, [(model("bar", joints={"A": 0.3, "B": 0.3, "C": -0.3}), body)])
    world = OdeEngine(proj, bodies)
    gaps = []
    for _ in range(1500):
        world.step()
        gaps.append(loop_gap(world.model("bar"), body.extra_joints[0]))
    q = world.read("bar").q
    assert abs(q[0]) < 0.3  # it swung down under gravity ...
    assert q[1] == pytest.approx(q[0], abs=1e-3)  # ... as a parallelogram
    assert max(gaps) < 1e-3


def test_extra_joint_type_ode_cannot_impose_is_refused_by_name(tmp_path: Path) -> None:
    proj, bodies = project(tmp_path, [(model("bar"), four_bar_body("z"))])
    with pytest.raises(ConfigError, match="extra joint 'AB' has type 'z'"):
        OdeEngine(proj, bodies)


def test_joint_limits_stop_a_driven_joint_when_the_world_asks(tmp_path: Path) -> None:
    body = pendulum_body()
    body.links[1].q_lower, body.links[1].q_upper = -0.2, 0.2
    for limits, expected in ((True, 0.2), (False, None)):
        proj, bodies = project(tmp_path, [(model("pend"), body)], gravity=[0.0, 0.0, 0.0], joint_limits=limits)
        world = OdeEngine(proj, bodies)
        world.apply("pend", JointCommand(torque=[1.0]))
        for _ in range(1000):
            world.step()
        q = world.read("pend").q[0]
        if expected is None:  # about a turn past ODE's +-pi reading: the value must not wrap
            i_pivot = 0.5**2 / 12 + 0.02**2 / 4 + 0.25**2
            assert q == pytest.approx(0.5 * 1.0 / i_pivot * 1.0**2, rel=0.02)
        else:
            assert q == pytest.approx(expected, abs=0.01)


def test_crawler_track_drives_its_body_at_the_commanded_surface_speed(tmp_path: Path) -> None:
    proj, bodies = project(
        tmp_path,
        [(model("floor", static=True), floor_body()), (model("crawler", position=(0.0, 0.0, 0.1251)), crawler_body())],
        collisions=[CollisionPair("floor", "crawler", friction=1.0)],
    )
    world = OdeEngine(proj, bodies)
    world.apply("crawler", JointCommand(torque=[0.5]))  # a crawler's torque command is its surface speed
    for _ in range(1000):
        world.step()
    state = world.read("crawler")
    assert abs(state.root_velocity[0]) == pytest.approx(0.5, rel=0.05)
    assert abs(state.root_velocity[1]) < 0.01
    assert abs(state.root_position[0]) > 0.3
