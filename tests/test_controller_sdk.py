"""The controller SDK in one process: state by name, the command builder, loading controller files."""

from __future__ import annotations

import numpy as np
import pytest
from controller_helpers import EXAMPLES, write_controller

from hrpsim.controllers.command import Command
from hrpsim.controllers.runner import _controller_options, load_controller
from hrpsim.controllers.state import JointIndex, State
from hrpsim.errors import ConfigError, NotFound, RequestError

JOINTS = JointIndex(["HIP", "KNEE", "ANKLE"])


def make_state() -> State:
    msg = {"tick": 7, "time": 0.007, "q": np.array([0.1, 0.2, 0.3]), "dq": np.zeros(3), "tau": np.ones(3),
           "root_position": np.zeros(3), "root_rotation": np.eye(3), "root_velocity": np.zeros(6),
           "sensors": {"wrist": np.arange(6.0)}}
    return State(msg, JOINTS)


def test_state_by_joint_and_sensor_name():
    state = make_state()
    assert state.joint("KNEE").q == 0.2 and state.joint("KNEE").tau == 1.0
    np.testing.assert_array_equal(state.sensor("wrist"), np.arange(6.0))
    with pytest.raises(NotFound, match="no joint named 'ELBOW'; joints: HIP, KNEE, ANKLE"):
        state.joint("ELBOW")
    with pytest.raises(NotFound, match="readings: wrist"):
        state.sensor("gyro")


def test_command_builder_names_what_is_wrong():
    cmd = Command(JOINTS)
    cmd.q_ref = np.zeros(3)
    cmd.set("ANKLE", q_ref=0.5).mode("ANKLE", "high_gain")
    assert cmd.q_ref[2] == 0.5 and cmd.fields()["modes"] == {"ANKLE": "high_gain"}
    with pytest.raises(RequestError, match="set the whole torque array"):
        cmd.set("HIP", torque=1.0)
    with pytest.raises(RequestError, match="unknown drive mode 'soft'"):
        cmd.mode("HIP", "soft")
    with pytest.raises(NotFound):
        cmd.mode("TOE", "torque")


def test_loading_a_controller_file(tmp_path):
    ctl = load_controller(f"{EXAMPLES / 'controllers' / 'hold_pose.py'}", p_gain=10.0)
    assert type(ctl).__name__ == "HoldPose" and ctl.p_gain == 10.0
    two = write_controller(tmp_path, "two", """
        from hrpsim.controllers import Controller
        class A(Controller):
            pass
        class B(Controller):
            pass
    """)
    with pytest.raises(ConfigError, match=r"defines 2 Controller subclasses \(A, B\): name one as"):
        load_controller(str(two))
    assert type(load_controller(f"{two}:B")).__name__ == "B"
    with pytest.raises(ConfigError, match="no Controller subclass named 'C'"):
        load_controller(f"{two}:C")
    with pytest.raises(ConfigError, match="does not exist"):
        load_controller(str(tmp_path / "missing.py"))


def test_keyword_options_from_the_command_line():
    assert _controller_options(["p_gain=400", "mode=torque", "x=-1.5"]) == {"p_gain": 400.0, "mode": "torque",
                                                                              "x": -1.5}
    with pytest.raises(ConfigError, match="KEY=VALUE"):
        _controller_options(["oops"])
