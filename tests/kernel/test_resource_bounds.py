"""What a peer can make a service hold: message sizes fitted to each socket, and numbers in a
hello that would overflow a timeout. Real processes and sockets."""

from __future__ import annotations

from pathlib import Path

import pytest
import zmq
from sim_helpers import start_simserver, write_box_drop_project

from hrpsim.client import Client
from hrpsim.codec import CODEC
from hrpsim.controllers.link import SimulatorLink
from hrpsim.errors import RequestError


def test_an_oversized_request_loses_its_connection_and_the_service_goes_on(nameserver: str) -> None:
    ctx = zmq.Context.instance()
    big = ctx.socket(zmq.DEALER)
    big.setsockopt(zmq.LINGER, 0)
    big.connect(nameserver)
    try:
        # 1 MB to the nameserver, whose requests are names and endpoints (64 KB at most)
        big.send(CODEC.request(1, "resolve", {"name": "x" * (1024 * 1024)}))
        with Client(nameserver, peer="nameserver", timeout=10.0) as client:
            assert client.call("ping")["kind"] == "nameserver"
            assert client.call("list") == []
        assert not big.poll(1000), "an oversized request gets no answer: its connection is dropped"
    finally:
        big.close()


@pytest.mark.parametrize("field", ["deadline", "period"])
def test_an_absurd_time_in_a_hello_is_an_error_naming_the_field(tmp_path: Path, nameserver: str, field: str) -> None:
    project = write_box_drop_project(tmp_path, publish_every=5)
    proc, client, entry = start_simserver(tmp_path, nameserver, project)
    link = SimulatorLink(entry["metadata"]["controllers"])
    try:
        args = {"period": None, field: 1e300}
        with pytest.raises(RequestError, match=f"'{field}' must be a positive number of seconds up to 3600"):
            link.attach("absurd", "box", timeout=10.0, **args)
        assert client.call("status")["tick"] == 0
    finally:
        link.close()
        client.close()
        proc.stop()


def test_past_the_connection_bound_the_idlest_connections_are_closed(tmp_path: Path) -> None:
    from process_helpers import spawn, wait_for_file

    endpoint_file = tmp_path / "ns.endpoint"
    proc = spawn(
        ["run", "nameserver", "--bind", "tcp://127.0.0.1:*", "--endpoint-file", str(endpoint_file)],
        tmp_path / "nameserver.log",
        env={"HRPSIM_MAX_CONNECTIONS": "4"},
    )
    address = wait_for_file(endpoint_file, proc)
    ctx = zmq.Context.instance()
    idle, monitors = [], []
    try:
        for _ in range(10):  # ten clients that each ask once, then sit idle
            sock = ctx.socket(zmq.DEALER)
            sock.setsockopt(zmq.LINGER, 0)
            sock.setsockopt(zmq.RECONNECT_IVL, -1)  # once closed, stay closed: they can be counted
            monitors.append(sock.get_monitor_socket(zmq.EVENT_DISCONNECTED))
            sock.connect(address)
            sock.send(CODEC.request(1, "ping", {}))
            assert sock.poll(10_000), "the nameserver answers while under its bound"
            sock.recv()
            idle.append(sock)
        with Client(address, peer="nameserver", timeout=10.0) as fresh:
            assert fresh.call("ping")["kind"] == "nameserver"
        closed = [i for i, m in enumerate(monitors) if m.poll(10_000 if i < 6 else 0)]
        assert closed[:6] == list(range(6)), "the six idlest of ten went first"
        assert proc.popen.poll() is None
    finally:
        for sock, monitor in zip(idle, monitors, strict=False):
            sock.disable_monitor()
            monitor.close(0)
            sock.close(0)
        proc.stop()
