"""A controller process facing a simulator that sends nonsense: a bad welcome or a non-finite state
is refused with the field named, never a traceback, and the controller exits."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import zmq
from process_helpers import spawn, start_nameserver
from sim_helpers import pendulum_body

from hrpsim import tick_protocol as proto
from hrpsim.naming import Registration

IDLE_CONTROLLER = """
from hrpsim.controllers import Controller


class Idle(Controller):
    def control(self, state):
        return None
"""
DEADLINE_S = 60.0


class FakeSimulator:
    """A registered ``simserver`` whose controller socket answers as a test tells it to."""

    def __init__(self, nameserver: str) -> None:
        self.sock = zmq.Context.instance().socket(zmq.ROUTER)
        self.sock.setsockopt(zmq.LINGER, 0)
        self.sock.bind("tcp://127.0.0.1:*")
        endpoint = self.sock.getsockopt_string(zmq.LAST_ENDPOINT)
        metadata = {"controllers": endpoint, "robots": ["robot"]}
        self.registration = Registration("simserver", "simserver", endpoint, nameserver=nameserver, metadata=metadata)
        self.registration.start()

    def receive(self, kind: str) -> tuple[bytes, dict[str, Any]]:
        """The next message of ``kind`` from a controller (its identity and the message)."""
        deadline = time.monotonic() + DEADLINE_S
        while time.monotonic() < deadline:
            if self.sock.poll(100):
                identity, frame = self.sock.recv_multipart()
                msg = proto.decode(frame, expect=proto.TO_SIMULATOR)
                if msg["type"] == kind:
                    return identity, msg
        raise AssertionError(f"no {kind} from the controller within {DEADLINE_S} s")

    def send(self, identity: bytes, msg_type: str, **fields: Any) -> None:
        self.sock.send_multipart([identity, proto.encode(msg_type, **fields)])

    def close(self) -> None:
        self.registration.stop()
        self.sock.close()


def good_welcome() -> dict[str, Any]:
    body = pendulum_body()
    return {
        "controller": "idle",
        "robot": "robot",
        "period": 0.001,
        "every": 1,
        "timestep": 0.001,
        "sync": "lockstep",
        "policy": "hold",
        "deadline": 3.0,
        "joints": body.joint_names,
        "end_time": 10.0,
        "sensors": [],
        "body": body.to_wire(),
    }


def good_state(tick: int = 0) -> dict[str, Any]:
    return {
        "tick": tick,
        "time": tick * 0.001,
        "q": np.zeros(1),
        "dq": np.zeros(1),
        "tau": np.zeros(1),
        "root_position": np.zeros(3),
        "root_rotation": np.eye(3),
        "root_velocity": np.zeros(6),
        "sensors": {},
    }


@pytest.fixture
def simulator(nameserver: str) -> Iterator[FakeSimulator]:
    fake = FakeSimulator(nameserver)
    try:
        yield fake
    finally:
        fake.close()


@pytest.fixture(scope="module")
def shared_nameserver(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    proc = start_nameserver(tmp_path_factory.mktemp("nameserver"))
    try:
        yield proc.address
    finally:
        proc.stop()


@pytest.fixture(scope="module")
def shared_simulator(shared_nameserver: str) -> Iterator[FakeSimulator]:
    """One fake simulator for the tests whose controller is refused at the welcome: each test's
    controller says hello on a connection of its own and exits before it registers anything."""
    fake = FakeSimulator(shared_nameserver)
    try:
        yield fake
    finally:
        fake.close()


def _controller(tmp_path: Path, nameserver: str):  # -> ManagedProcess
    (tmp_path / "idle.py").write_text(IDLE_CONTROLLER)
    return spawn(
        [
            *("controller", str(tmp_path / "idle.py"), "--robot", "robot", "--nameserver", nameserver),
            *("--connect-timeout", str(DEADLINE_S), "--reconnect-wait", "0"),
        ],
        tmp_path / "controller.log",
    )


def _ends_with_an_error_naming(proc, field: str) -> str:
    status = proc.popen.wait(DEADLINE_S)
    log = proc.log_text()
    assert status != 0, log
    assert "Traceback" not in log and "TypeError" not in log, log
    assert f"field {field!r}" in log, log
    return log


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("joints", 5),
        ("body", "garbage"),
        ("body", {"name": "x", "links": "garbage"}),
        ("period", 0),
        ("period", float("nan")),
        ("timestep", -1.0),
        ("every", "2"),
        ("sensors", [1, 2]),
        ("gravity", [0.0, -9.8]),
        ("gravity", [0.0, 0.0, float("inf")]),
        ("root_position", [0.0, 0.0]),
        ("root_rotation", [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]),
    ],
)
def test_a_bad_welcome_is_refused_naming_the_field(
    tmp_path: Path, shared_nameserver: str, shared_simulator: FakeSimulator, field, value
) -> None:
    proc = _controller(tmp_path, shared_nameserver)
    try:
        identity, hello = shared_simulator.receive(proto.HELLO)
        assert hello["robot"] == "robot"
        shared_simulator.send(identity, proto.WELCOME, **{**good_welcome(), field: value})
        _ends_with_an_error_naming(proc, field)
    finally:
        proc.stop()


@pytest.mark.parametrize("field", ["q", "dq", "root_position"])
def test_a_non_finite_state_is_refused_naming_the_field(tmp_path: Path, nameserver: str, simulator, field) -> None:
    proc = _controller(tmp_path, nameserver)
    try:
        identity, _ = simulator.receive(proto.HELLO)
        simulator.send(identity, proto.WELCOME, **good_welcome())
        unknown_torque = {**good_state(0), "tau": np.full(1, np.nan)}  # nothing applied yet: not a fault
        simulator.send(identity, proto.STATE, **unknown_torque)
        assert simulator.receive(proto.COMMAND)[1]["tick"] == 0  # a good state is answered
        bad = good_state(1)
        bad[field] = np.full_like(bad[field], np.nan)
        simulator.send(identity, proto.STATE, **bad)
        _, bye = simulator.receive(proto.BYE)
        assert f"field {field!r}" in bye["reason"] and "non-finite" in bye["reason"]
        _ends_with_an_error_naming(proc, field)
    finally:
        proc.stop()
