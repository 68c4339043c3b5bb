"""The hub's peers (simserver/peers.py): an in-process controller is a peer like a connection, under
the same admission rules, order and policies; one function turns what ``control()`` returned into a
command, for the runner and the in-process peer alike."""

from __future__ import annotations

import re

import numpy as np
import pytest
from controller_helpers import kinematic_project, sr1_body

from hrpsim import tick_protocol as proto
from hrpsim.controllers import Controller
from hrpsim.controllers.command import Command, answer_fields
from hrpsim.controllers.state import JointIndex
from hrpsim.engines.kinematic.engine import KinematicEngine
from hrpsim.errors import RequestError
from hrpsim.simserver.peers import InProcessPeer
from hrpsim.simserver.world import World


class _Targets(Controller):
    def control(self, state):
        return self.targets(np.full(len(self.joints), 0.25))


class _Raises(Controller):
    def control(self, state):
        raise ValueError("a bug in the controller")


def _world(tmp_path, controllers) -> World:
    """A World on the kinematic engine with its hub in process only (no socket)."""
    project = kinematic_project(tmp_path, controllers)
    return World(project, engine=KinematicEngine(project, {"robot": sr1_body()}), record=False)


def test_answer_fields_turns_each_kind_of_result_into_command_fields():
    joints = JointIndex(["a", "b"])
    assert answer_fields(None) == {}
    torque = answer_fields([1, 2])["torque"]
    assert torque.dtype == np.float64 and torque.tolist() == [1.0, 2.0]
    cmd = Command(joints)
    cmd.q_ref = np.array([0.1, 0.2])
    cmd.mode("a", "high_gain")
    fields = answer_fields(cmd)
    assert fields["q_ref"].tolist() == [0.1, 0.2] and fields["modes"] == {"a": "high_gain"}


def test_an_in_process_controller_is_a_peer_of_the_hub(tmp_path):
    world = _world(tmp_path, [{"name": "targets", "policy": "hold"}])
    hub = world.hub
    try:
        hub.attach_local(_Targets(), name="targets", robot="robot")
        ctl = hub.attachments.by_name["targets"]
        assert isinstance(ctl.peer, InProcessPeer) and ctl.peer.in_process and ctl.identity is None
        assert ctl.peer.send(b"anything") is False  # it reads no protocol messages
        for _ in range(3):
            world.loop.tick_once()
        np.testing.assert_allclose(world.engine.read("robot").q, 0.25)
        assert hub.summary()["targets"]["ticks"] == 3
    finally:
        world.close()


def test_in_process_peers_follow_the_admission_rules_of_connections(tmp_path):
    world = _world(tmp_path, [])
    hub = world.hub
    try:
        hub.attach_local(_Targets(), name="first", robot="robot")
        with pytest.raises(RequestError, match="already driven by controller 'first'"):
            hub.attach_local(_Targets(), name="second", robot="robot")
        with pytest.raises(RequestError, match="no robot named 'nobody'"):
            hub.attach_local(_Targets(), name="third", robot="nobody")
        assert hub.attached == ["first"]
    finally:
        world.close()


def test_an_in_process_controller_that_raises_gets_its_policy(tmp_path):
    world = _world(tmp_path, [{"name": "buggy", "policy": "hold"}])
    hub = world.hub
    try:
        hub.attach_local(_Raises(), name="buggy", robot="robot")
        world.loop.tick_once()
        report = hub.summary()["buggy"]
        assert report["errors"] == 1 and report["policy_applied"] == "hold" and not report["attached"]
        assert "raised ValueError: a bug in the controller" in report["events"][-1]
    finally:
        world.close()


class _Answers(Controller):
    """Answers each tick with the torque array it is given."""

    def __init__(self, torque) -> None:
        super().__init__()
        self.torque = torque

    def control(self, state):
        return self.torque


def _nan_at_1(n):
    torque = np.zeros(n)
    torque[1] = np.nan
    return torque, r"command field torque\[1\] \(joint \w+\) is nan: values must be finite"


def _infinite_at_0(n):
    torque = np.zeros(n)
    torque[0] = -np.inf
    return torque, r"command field torque\[0\] \(joint \w+\) is -inf: values must be finite"


def _one_short(n):
    return np.zeros(n - 1), f"command field 'torque' has {n - 1} values, expected {n}"


def _two_dimensional(n):
    return np.zeros((n, 1)), "command field 'torque' must be a 1-D numeric array"


def _booleans(n):
    return np.ones(n, dtype=bool), "command field 'torque' must be a 1-D numeric array, got bool"


@pytest.mark.parametrize("bad", [_nan_at_1, _infinite_at_0, _one_short, _two_dimensional, _booleans])
def test_an_in_process_torque_array_gets_the_checks_of_a_wire_command(tmp_path, bad):
    world = _world(tmp_path, [{"name": "bad", "policy": "hold"}])
    hub = world.hub
    try:
        names, _ = hub.actuation.joint_table("robot")
        torque, text = bad(len(names))
        hub.attach_local(_Answers(torque), name="bad", robot="robot")
        world.loop.tick_once()
        report = hub.summary()["bad"]
        assert report["errors"] == 1 and report["ticks"] == 0 and not report["attached"]
        assert re.search(text, report["events"][-1]), report["events"][-1]
    finally:
        world.close()


def test_an_in_process_torque_array_is_recorded_as_the_command_it_stands_for(tmp_path):
    world = _world(tmp_path, [{"name": "pd", "policy": "hold"}])
    hub = world.hub
    try:
        names, _ = hub.actuation.joint_table("robot")
        torque = np.arange(len(names), dtype=np.int64)  # integers: taken as float torques
        hub.attach_local(_Answers(torque), name="pd", robot="robot")
        loop = world.loop
        seen = []
        keep = {"begin": lambda self, engine: None, "end": lambda self, summary: None}
        loop.observers.append(type("Keep", (), {**keep, "observe": lambda self, record: seen.append(record)})())
        loop.tick_once()
        (applied,) = seen[0].commands
        assert sorted(applied.received) == ["tick", "torque"] and applied.received["tick"] == 0
        assert applied.received["torque"].dtype == np.float64
        np.testing.assert_array_equal(applied.torque, torque.astype(np.float64))
    finally:
        world.close()


def test_an_in_process_torque_answer_keeps_huge_finite_values_and_names_a_bad_one():
    names = ["a", "b", "c"]
    cmd = proto.torque_answer(7, np.array([1e200, -1e300, 0.0]), joint_names=names)
    assert cmd.tick == 7 and cmd.torque.tolist() == [1e200, -1e300, 0.0]
    with pytest.raises(RequestError, match=r"torque\[2\] \(joint c\) is nan"):
        proto.torque_answer(7, np.array([1e200, -1e300, np.nan]), joint_names=names)


def test_a_full_command_from_shared_memory_gets_the_checks_and_errors_of_a_wire_command():
    names = ["a", "b", "c"]
    index_of = {n: i for i, n in enumerate(names)}
    fields = {"tick": 4, "torque": np.array([1.0, -2.0, 0.5]), "dq_ref": np.zeros(3)}
    full = proto.parse_full_command(dict(fields), joint_names=names, index_of=index_of, expected_tick=4)
    wire = proto.parse_command(dict(fields), joint_names=names, index_of=index_of, expected_tick=4)
    for key in ("torque", "q_ref", "dq_ref"):
        assert (getattr(full, key) is None) == (getattr(wire, key) is None), key
        if getattr(wire, key) is not None:
            np.testing.assert_array_equal(getattr(full, key), getattr(wire, key))
    assert full.tick == 4 and full.indices.tolist() == [0, 1, 2] and sorted(full.received) == sorted(wire.received)
    for bad, expected in (
        ({**fields, "tick": 3}, "command field 'tick' is 3, expected 4"),
        ({**fields, "dq_ref": np.array([0.0, np.inf, 0.0])}, r"dq_ref\[1\] \(joint b\) is inf"),
    ):
        for parse in (proto.parse_full_command, proto.parse_command):
            with pytest.raises(RequestError, match=expected):
                parse(bad, joint_names=names, index_of=index_of, expected_tick=4)
