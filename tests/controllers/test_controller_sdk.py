"""The controller SDK in one process: state by name, the command builder, loading controller files."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from controller_helpers import EXAMPLES, write_controller

from hrpsim.controllers.command import Command
from hrpsim.controllers.runner import controller_class, load_controller, make_controller
from hrpsim.controllers.state import JointIndex, State
from hrpsim.errors import ConfigError, NotFound, RequestError

JOINTS = JointIndex(["HIP", "KNEE", "ANKLE"])


def make_state() -> State:
    msg = {
        "tick": 7,
        "time": 0.007,
        "q": np.array([0.1, 0.2, 0.3]),
        "dq": np.zeros(3),
        "tau": np.ones(3),
        "root_position": np.zeros(3),
        "root_rotation": np.eye(3),
        "root_velocity": np.zeros(6),
        "sensors": {"wrist": np.arange(6.0)},
    }
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
    two = write_controller(
        tmp_path,
        "two",
        """
        from hrpsim.controllers import Controller
        class A(Controller):
            pass
        class B(Controller):
            pass
    """,
    )
    with pytest.raises(ConfigError, match=r"defines 2 Controller subclasses \(A, B\): name one as"):
        load_controller(str(two))
    assert type(load_controller(f"{two}:B")).__name__ == "B"
    with pytest.raises(ConfigError, match="no Controller subclass named 'C'"):
        load_controller(f"{two}:C")
    with pytest.raises(ConfigError, match="does not exist"):
        load_controller(str(tmp_path / "missing.py"))


OPTIONED = """
    from pathlib import Path
    from hrpsim.controllers import Controller
    class Tuned(Controller):
        def __init__(self, *, gain: float = 1.0, steps: int = 1, verbose: bool = False, log: Path | None = None,
                     label: str = "", scale=2.0) -> None:
            super().__init__()
            self.gain, self.steps, self.verbose, self.log = gain, steps, verbose, log
            self.label, self.scale = label, scale
"""


def test_keyword_options_are_converted_by_the_constructors_type_hints(tmp_path):
    cls = controller_class(str(write_controller(tmp_path, "tuned", OPTIONED)))
    ctl = make_controller(cls, ["gain=1e3", "steps=20", "verbose=no", "log=~/x.log", "label=1e3", "scale=3"])
    assert (ctl.gain, ctl.steps, ctl.verbose, ctl.label, ctl.scale) == (1000.0, 20, False, "1e3", 3.0)
    assert ctl.log == Path("~/x.log").expanduser()
    assert make_controller(cls, ["verbose=true"]).verbose is True


@pytest.mark.parametrize(
    "pair, message",
    [
        ("gain=fast", "gain takes a number"),
        ("steps=2.5", "steps takes a whole number"),
        ("verbose=maybe", "verbose is a flag"),
        ("gian=1", "takes no option 'gian'"),
        ("oops", "KEY=VALUE"),
    ],
)
def test_an_option_that_cannot_be_converted_is_named(tmp_path, pair, message):
    cls = controller_class(str(write_controller(tmp_path, "tuned", OPTIONED)))
    with pytest.raises(ConfigError, match=message):
        make_controller(cls, [pair])


def test_the_controller_command_refuses_a_bad_option_naming_it(tmp_path):
    path = write_controller(tmp_path, "tuned", OPTIONED)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "hrpsim",
            "controller",
            str(path),
            "--robot",
            "r",
            "-o",
            "steps=lots",
            "--connect-timeout",
            "1",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and "steps takes a whole number" in done.stderr, done.stderr


def test_a_controller_calls_the_simulator_and_a_missing_service_by_name(nameserver, tmp_path):
    """self.services reaches the stack's services through the nameserver, with a deadline; a name that
    is not registered is a NotFound naming it."""
    from controller_helpers import EXAMPLES, Stack, write_controller

    out = tmp_path / "services.txt"
    asker = write_controller(
        tmp_path,
        "asker",
        f"""
        from hrpsim.controllers import Controller
        from hrpsim.errors import NotFound

        class Asker(Controller):
            def start(self, body):
                models = self.services.call("simserver", "models")
                try:
                    self.services.call("no_such_service", "ping", timeout=2.0)
                    missing = "answered"
                except NotFound as exc:
                    missing = str(exc)
                open({str(out)!r}, "w").write(repr(sorted(models)) + "\\n" + missing)

            def control(self, state):
                return None
    """,
    )
    with Stack(tmp_path, nameserver, EXAMPLES / "sample_stand.yaml", until=0.02) as stack:
        stack.controller(asker, name="asker")
        stack.run()
    models, missing = out.read_text().splitlines()
    assert models == "['floor', 'robot']"
    assert "no_such_service" in missing
