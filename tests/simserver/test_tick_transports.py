"""The tick protocol over each way a controller reaches the hub: tcp, ipc, the Unix channel alone, and
the shared memory a controller on the simulator's host takes by default (over the Unix channel).
Real hub, real controller processes, real sockets and segments."""

from __future__ import annotations

import signal
import socket
import struct

import numpy as np
import pytest
from controller_helpers import HubUnderTest, attach, kinematic_project, sr1_body, start_controller, write_controller

from hrpsim import tick_protocol as proto
from hrpsim import unix_channel

TRANSPORTS = ["tcp", "ipc", "unix", "shm"]
REGISTERED = {"tcp": "tcp", "ipc": "ipc", "unix": "unix", "shm": "unix"}  # what the hub's registration offers
SDK_OPTIONS = {"unix": ["--no-shared-memory"]}
VIA = {"tcp": "zeromq", "ipc": "zeromq", "unix": "unix channel", "shm": "shared memory"}

FOLLOWER = """
    import math
    from hrpsim.controllers import Command, Controller

    class Follower(Controller):
        # Each target depends on the state just read: a lost or late command changes the path.

        def control(self, state):
            cmd = Command(self.joints)
            cmd.q_ref = 0.9 * state.q + 0.05 * math.sin(0.05 * state.tick)
            cmd.dq_ref = 0.0 * state.q
            return cmd
"""


def _endpoint_in(log: str, sim: HubUnderTest) -> str:
    for endpoint in (sim.hub.unix_endpoint, sim.hub.ipc_endpoint, sim.hub.endpoint):
        if f"at {endpoint}" in log:
            return endpoint
    raise AssertionError(f"the controller's log names none of the hub's endpoints:\n{log}")


def _follow(nameserver: str, tmp_path, transport: str, *, command_delay: int = 0) -> tuple[np.ndarray, dict, str]:
    body = sr1_body()
    project = kinematic_project(tmp_path, [{"name": "follow", "policy": "stop"}], command_delay=command_delay)
    spec = write_controller(tmp_path, f"follower_{transport}", FOLLOWER)
    with HubUnderTest(nameserver, project, body, transport=REGISTERED[transport]) as sim:
        proc = _start(tmp_path, spec, nameserver, transport)
        try:
            attach(sim, ["follow"], [proc])
            path = []
            for _ in range(150):
                sim.step()
                path.append(sim.engine.read("robot").q.copy())
            summary = sim.hub.summary()["follow"]
            used = _endpoint_in(proc.log_text(), sim)
            expected = {"tcp": sim.hub.endpoint, "ipc": sim.hub.ipc_endpoint, "unix": sim.hub.unix_endpoint}
            assert used == expected[REGISTERED[transport]]
            assert f"via {VIA[transport]}" in proc.log_text()
        finally:
            proc.stop()
    return np.array(path), summary, used


def test_a_lockstep_run_is_the_same_over_every_transport(nameserver, tmp_path):
    runs = {}
    for transport in TRANSPORTS:
        (tmp_path / transport).mkdir()
        runs[transport] = _follow(nameserver, tmp_path / transport, transport)
    for transport, (_, summary, _) in runs.items():
        assert summary["ticks"] == 150 and summary["missed"] == 0 and summary["errors"] == 0, transport
    reference = runs["tcp"][0]
    assert np.ptp(reference) > 0.01  # the joints really moved
    for transport in ("ipc", "unix", "shm"):
        np.testing.assert_array_equal(runs[transport][0], reference, err_msg=transport)


def test_a_pipelined_run_is_the_same_over_shared_memory_as_over_tcp(nameserver, tmp_path):
    runs = {}
    for transport in ("tcp", "shm"):
        (tmp_path / transport).mkdir()
        runs[transport] = _follow(nameserver, tmp_path / transport, transport, command_delay=1)
    for transport, (_, summary, _) in runs.items():
        # the answer to the last tick would act from the next one, which does not run
        assert summary["ticks"] == 149 and summary["missed"] == 0 and summary["errors"] == 0, (transport, summary)
    assert np.ptp(runs["tcp"][0]) > 0.01
    np.testing.assert_array_equal(runs["shm"][0], runs["tcp"][0])


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_killed_controller_is_noticed_by_its_dropped_connection(nameserver, tmp_path, transport):
    """Its deadline is a minute: the hub must learn of the death from the connection, not the clock."""
    body = sr1_body()
    project = kinematic_project(tmp_path, [{"name": "follow", "policy": "hold", "deadline": 60.0}])
    spec = write_controller(tmp_path, "follower", FOLLOWER)
    with HubUnderTest(nameserver, project, body, transport=REGISTERED[transport]) as sim:
        proc = _start(tmp_path, spec, nameserver, transport)
        try:
            attach(sim, ["follow"], [proc])
            sim.run(20)
            proc.popen.send_signal(signal.SIGKILL)
            proc.popen.wait(10)
            sim.run(20)
            report = sim.hub.summary()["follow"]
        finally:
            proc.stop()
    assert sim.hub.attached == []
    assert report["policy_applied"] == "hold"
    assert any("connection dropped" in event for event in report["events"]), report["events"]
    assert not any("deadline" in event for event in report["events"]), report["events"]


def _start(folder, spec, nameserver: str, transport: str):
    return start_controller(folder, spec, nameserver=nameserver, name="follow", extra=SDK_OPTIONS.get(transport))


def _raw_unix(sim: HubUnderTest) -> socket.socket:
    return _connect_unix(unix_channel.path_of(sim.hub.unix_endpoint))


def _connect_unix(path: str) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(10.0)
    try:
        sock.connect(path)
    except OSError:
        sock.close()
        raise
    return sock


def _send_frame(sock: socket.socket, data: bytes) -> None:
    sock.sendall(struct.pack("<I", len(data)) + data)


def _read_frame(sim: HubUnderTest, sock: socket.socket) -> dict:
    sock.setblocking(False)
    buffer = b""
    for _ in range(200):
        sim.hub.poll()
        sim.hub.wait_for_controllers(["nobody"], 0.02)
        try:
            buffer += sock.recv(1 << 20)
        except BlockingIOError:
            continue
        if len(buffer) >= 4 and len(buffer) >= 4 + struct.unpack_from("<I", buffer)[0]:
            return proto.decode(buffer[4 : 4 + struct.unpack_from("<I", buffer)[0]], expect=proto.TO_CONTROLLER)
    raise AssertionError("no answer from the hub on the Unix channel")


def test_bad_frames_on_the_unix_channel_get_an_error_or_a_closed_connection(nameserver, tmp_path):
    project = kinematic_project(tmp_path, [{"name": "raw", "policy": "hold"}])
    with HubUnderTest(nameserver, project, sr1_body(), transport="unix") as sim:
        garbage = _raw_unix(sim)
        _send_frame(garbage, b"\x93not msgpack at all")
        error = _read_frame(sim, garbage)
        assert error["type"] == proto.ERROR and error["kind"] == "ProtocolError"
        assert "malformed" in error["message"]

        oversized = _raw_unix(sim)
        oversized.sendall(struct.pack("<I", 1 << 30))  # announces a gigabyte
        for _ in range(20):
            sim.hub.poll()
        oversized.settimeout(10.0)
        assert oversized.recv(16) == b""  # the hub closed that connection

        good = _raw_unix(sim)
        _send_frame(good, proto.hello("raw", "robot"))
        welcome = _read_frame(sim, good)
        assert welcome["type"] == proto.WELCOME and welcome["controller"] == "raw"
        assert sim.hub.attached == ["raw"]
        for sock in (garbage, oversized, good):
            sock.close()


def test_the_unix_channel_is_not_there_once_the_hub_closes(nameserver, tmp_path):
    project = kinematic_project(tmp_path, [{"name": "raw"}])
    sim = HubUnderTest(nameserver, project, sr1_body(), transport="unix")
    path = unix_channel.path_of(sim.hub.unix_endpoint)
    sock = _raw_unix(sim)
    sim.close()
    with pytest.raises(OSError):
        _connect_unix(path)
    sock.close()


MIXED = """
    import math
    from hrpsim.controllers import Command, Controller

    class Mixed(Controller):
        # A bad command at tick 3 (non-finite), a command with drive modes at tick 6 (not in the
        # shared memory layout: it goes as a message), plain targets otherwise.

        def control(self, state):
            cmd = Command(self.joints)
            cmd.q_ref = 0.9 * state.q
            if state.tick == 3:
                cmd.q_ref[0] = math.nan
            if state.tick == 6:
                cmd.mode_all("high_gain")
            return cmd
"""


@pytest.mark.parametrize("transport", ["unix", "shm"])
def test_a_refused_command_and_drive_modes_are_the_same_over_shared_memory(nameserver, tmp_path, transport):
    project = kinematic_project(tmp_path, [{"name": "follow", "policy": "hold"}])
    spec = write_controller(tmp_path, "mixed", MIXED)
    with HubUnderTest(nameserver, project, sr1_body(), transport="unix") as sim:
        proc = _start(tmp_path, spec, nameserver, transport)
        try:
            attach(sim, ["follow"], [proc])
            sim.run(10)
            report = sim.hub.summary()["follow"]
            modes = sim.engine.drive_modes("robot")
        finally:
            proc.stop()
        log = proc.log_text()
    assert f"via {VIA[transport]}" in log
    assert report["ticks"] == 9 and report["errors"] == 1 and report["attached"], report
    assert any("tick 3" in e and "q_ref[0]" in e for e in report["events"]), report["events"]
    assert "field 'q_ref[0]'" in log  # the error reached the controller on its channel
    assert set(modes) == {"high_gain"}
