"""A hinge range wider than ODE's (-pi, pi] reading (MJCF models have them, e.g. dm_control's
cheetah foot, -230 to 50 degrees) is stopped inside the reading: the joint held against its stop
rests there instead of being driven round by the stop at the other end."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from sim_helpers import model, pendulum_body, project

from hrpsim.engines.base import JointCommand, make_engine
from hrpsim.engines.ode.model import HINGE_STOP_MARGIN


@pytest.mark.parametrize("torque", [-1.0, 1.0])
def test_a_joint_pushed_past_pi_rests_on_its_stop(torque: float, tmp_path: Path) -> None:
    body = pendulum_body()
    body.links[1].q_lower, body.links[1].q_upper = -4.0, 4.0  # beyond -pi and pi both
    proj, bodies = project(tmp_path, [(model("pend"), body)], gravity=[0.0, 0.0, 0.0], joint_limits=True, engine="ode")
    world = make_engine(proj, bodies)
    world.apply("pend", JointCommand(torque=[torque]))
    for _ in range(3000):
        world.step()
    state = world.read("pend")
    assert state.q[0] == pytest.approx(math.copysign(math.pi - HINGE_STOP_MARGIN, torque), abs=0.01)
    assert abs(state.dq[0]) < 0.01
