"""Commands are checked: a raw DEALER speaking the tick protocol (as a controller in another language
would) gets an error naming the field or joint, and the run goes on under the controller's policy."""

from __future__ import annotations

import time

import msgpack
import numpy as np
import pytest
from controller_helpers import HubUnderTest, attach_by_hand, hub_dealer, kinematic_project, sr1_body

from hrpsim import tick_protocol as proto
from hrpsim.codec import CODEC


@pytest.fixture
def sim(shared_nameserver, tmp_path):
    body = sr1_body()
    project = kinematic_project(tmp_path, [{"name": "raw", "policy": "hold", "deadline": 2.0}])
    with HubUnderTest(shared_nameserver, project, body) as hub:
        yield hub


class RawController:
    """The tick protocol by hand: hello, welcome, then state/command per tick."""

    def __init__(self, sim: HubUnderTest, name: str = "raw") -> None:
        self.sock, welcome = attach_by_hand(sim, name)
        self.welcome = proto.parse_welcome(welcome)

    def receive(self) -> dict:
        assert self.sock.poll(5000), "no message from the hub within 5 s"
        return proto.decode(self.sock.recv(), expect=proto.TO_CONTROLLER)

    def send_raw(self, frame: bytes) -> None:
        self.sock.send(frame)


def one_tick(sim: HubUnderTest, ctl: RawController, answer) -> dict:
    """Run one tick; ``answer(state)`` returns the frame to send. Returns the state the controller saw."""
    record = sim.record()
    sim.hub.poll()
    sim.hub.before_collide(record)
    state = ctl.receive()
    ctl.send_raw(answer(state))
    sim.engine.collide()
    sim.hub.after_collide(record)
    sim.engine.integrate()
    return state


def test_welcome_describes_the_robot(sim):
    ctl = RawController(sim)
    body = sim.engine.body("robot")
    assert ctl.welcome.joints == body.joint_names
    assert ctl.welcome.every == 1 and ctl.welcome.policy == "hold"
    assert ctl.welcome.body["name"] == body.name


def test_state_carries_numpy_arrays(sim):
    ctl = RawController(sim)
    state = one_tick(sim, ctl, lambda s: proto.command(s["tick"]))
    n = len(ctl.welcome.joints)
    assert state["q"].dtype == np.float64 and state["q"].shape == (n,)
    assert state["root_rotation"].shape == (3, 3)
    assert sim.hub.summary()["raw"]["ticks"] == 1


@pytest.mark.parametrize(
    ("build", "names", "field"),
    [
        (lambda s, n: proto.command(s["tick"], torque=np.zeros(n - 1)), ["torque", "expected"], "torque"),
        (lambda s, n: proto.command(s["tick"], q_ref=np.r_[np.zeros(n - 1), np.nan]), ["q_ref", "is nan"], "q_ref[28]"),
        (lambda s, n: proto.command(s["tick"], modes={"NO_SUCH_JOINT": "torque"}), ["NO_SUCH_JOINT"], "modes"),
        (lambda s, n: proto.command(s["tick"], modes={"WAIST_P": "floppy"}), ["WAIST_P", "floppy"], "modes.WAIST_P"),
        (lambda s, n: proto.command(s["tick"] + 7), ["tick"], "tick"),
        (lambda s, n: proto.encode(proto.COMMAND, tick=s["tick"], torgue=np.zeros(n)), ["torgue"], "torgue"),
        (lambda s, n: b"\xc1 not msgpack", ["malformed"], None),
        (lambda s, n: msgpack.packb({"v": 99, "type": "command", "tick": s["tick"]}), ["version"], None),
    ],
)
def test_bad_commands_get_an_error_naming_the_field_and_the_run_goes_on(sim, build, names, field):
    ctl = RawController(sim)
    n = len(ctl.welcome.joints)
    good = np.full(n, 0.25)
    one_tick(sim, ctl, lambda s: proto.command(s["tick"], q_ref=good, dq_ref=np.zeros(n)))
    one_tick(sim, ctl, lambda s: build(s, n))
    error = ctl.receive()
    assert error["type"] == proto.ERROR and not error["fatal"]
    assert (error["kind"], error["field"]) == (("RequestError", field) if field is not None else ("ProtocolError", ""))
    for word in names:
        assert word in error["message"]
    summary = sim.hub.summary()["raw"]
    assert summary["errors"] == 1 and summary["policy_applied"] == "hold"
    # hold: the last good command still drives the robot, and the next good tick is accepted
    np.testing.assert_allclose(sim.engine.read("robot").q, good)
    one_tick(sim, ctl, lambda s: proto.command(s["tick"]))
    assert sim.hub.summary()["raw"]["ticks"] == 2
    assert sim.hub.attached == ["raw"]


def test_wrong_length_names_the_joint_count(sim):
    ctl = RawController(sim)
    n = len(ctl.welcome.joints)
    one_tick(sim, ctl, lambda s: proto.command(s["tick"], torque=np.zeros(n + 3)))
    error = ctl.receive()
    assert f"has {n + 3} values, expected {n}" in error["message"] and error["field"] == "torque"


def test_commands_by_joint_name(sim):
    ctl = RawController(sim)
    names = ctl.welcome.joints
    one_tick(sim, ctl, lambda s: proto.command(s["tick"], q_ref=[0.5], joints=[names[3]]))
    q = sim.engine.read("robot").q
    assert q[3] == pytest.approx(0.5) and np.count_nonzero(q) == 1


def test_a_hello_for_an_unknown_robot_is_refused_by_name(sim):
    sock = hub_dealer(sim)
    sock.send(proto.hello("raw", "no_such_robot"))
    sim.hub.wait_for_controllers(["raw"], 0.5)
    assert sock.poll(5000)
    error = proto.decode(sock.recv(), expect=proto.TO_CONTROLLER)
    assert error["fatal"] and "no_such_robot" in error["message"] and "robot" in error["message"]
    assert (error["kind"], error["field"]) == ("RequestError", "robot")
    assert sim.hub.attached == []


def test_a_command_before_hello_is_refused(sim):
    sock = hub_dealer(sim)
    sock.send(proto.command(0, torque=np.zeros(3)))
    sim.hub.poll()
    sim.hub.wait_for_controllers(["nobody"], 0.3)
    assert sock.poll(5000)
    error = proto.decode(sock.recv(), expect=proto.TO_CONTROLLER)
    assert "hello" in error["message"]


def test_codec_lists_travel_too(sim):
    """A controller without the numpy extension may send plain lists of numbers."""
    ctl = RawController(sim)
    n = len(ctl.welcome.joints)
    one_tick(
        sim,
        ctl,
        lambda s: CODEC.encode({"v": 1, "type": "command", "tick": s["tick"], "q_ref": [0.1] * n, "dq_ref": [0.0] * n}),
    )
    np.testing.assert_allclose(sim.engine.read("robot").q, 0.1)


def test_a_reused_socket_number_does_not_detach_the_newcomer(sim):
    """A closes; B connects (often on the same socket number) before the hub reads A's disconnect."""
    a = RawController(sim, "raw")
    a.sock.close(linger=0)
    time.sleep(0.3)  # A's connection closes on the hub's side; its disconnect event waits in the queue
    b = hub_dealer(sim)
    b.send(proto.hello("other", "robot"))
    time.sleep(0.3)
    sim.hub.poll()
    sim.hub.poll()
    assert sim.hub.attached == ["other"]
    assert sim.hub.summary()["raw"]["policy_applied"] == "hold"
    assert any("connection dropped" in e for e in sim.hub.summary()["raw"]["events"])


def test_a_newcomer_on_another_socket_number_replaces_a_closed_controller(sim):
    """B connects while A is still open (so on another socket number); A closes; B's hello comes first."""
    a = RawController(sim, "raw")
    b = hub_dealer(sim)
    time.sleep(0.3)  # B's connection is up before A's goes down
    a.sock.close(linger=0)
    time.sleep(0.3)  # A's disconnect event waits in the queue
    b.send(proto.hello("other", "robot"))
    time.sleep(0.3)
    sim.hub.poll()
    sim.hub.poll()
    assert sim.hub.attached == ["other"]
    assert sim.hub.summary()["raw"]["policy_applied"] == "hold"


def test_the_sdk_raises_the_simulators_error_type_with_its_field_for_a_refused_hello(sim):
    from concurrent.futures import ThreadPoolExecutor

    from hrpsim.controllers.link import SimulatorLink
    from hrpsim.errors import RequestError

    link = SimulatorLink(sim.hub.endpoint, context=sim.context)
    try:
        with ThreadPoolExecutor(1) as pool:
            attached = pool.submit(link.attach, "raw", "robot", period=0.0015, timeout=10.0)
            while not attached.done():
                sim.hub.poll()
                time.sleep(0.01)
            with pytest.raises(RequestError) as refused:
                attached.result()
    finally:
        link.close()
    assert refused.value.field == "period" and "differs from the project" in str(refused.value)
    assert "refused controller 'raw'" in str(refused.value)
