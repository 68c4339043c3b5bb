"""One key cannot crowd a nameserver: past its bound of connections, that key's idlest
connection is closed, and other keys' connections (even idler ones) are left alone."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import zmq
from process_helpers import REPO, spawn, wait_for_file

from hrpsim.client import Client
from hrpsim.codec import CODEC
from hrpsim.security import connect_securely

PER_KEY = 4
OBSERVER_CONNECTIONS = 10


@pytest.fixture
def keyed_nameserver(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    folder = tmp_path / "keys"
    for args in ([folder], [folder, "--name", "eye", "--role", "observer"]):
        done = subprocess.run(
            [sys.executable, "-m", "hrpsim", "keys", "new", *map(str, args)],
            capture_output=True,
            text=True,
            timeout=60,
            cwd=REPO,
        )
        assert done.returncode == 0, done.stderr
    monkeypatch.setenv("HRPSIM_KEYS", str(folder))
    endpoint_file = tmp_path / "ns.endpoint"
    proc = spawn(
        ["run", "nameserver", "--bind", "tcp://127.0.0.1:*", "--endpoint-file", str(endpoint_file)],
        tmp_path / "nameserver.log",
        env={"HRPSIM_MAX_CONNECTIONS_PER_KEY": str(PER_KEY)},
    )
    try:
        yield wait_for_file(endpoint_file, proc)
        assert proc.popen.poll() is None
    finally:
        proc.stop()


class Connection:
    """A raw connection under the current key that asks once, then sits idle and is not reopened."""

    def __init__(self, address: str) -> None:
        self.sock = zmq.Context.instance().socket(zmq.DEALER)
        self.sock.setsockopt(zmq.LINGER, 0)
        self.sock.setsockopt(zmq.RECONNECT_IVL, -1)  # once closed, stays closed: it can be counted
        self.monitor = self.sock.get_monitor_socket(zmq.EVENT_DISCONNECTED)
        connect_securely(self.sock)
        self.sock.connect(address)
        self.sock.send(CODEC.request(1, "list", {}))
        assert self.sock.poll(30_000), "the nameserver answers"
        self.sock.recv()

    def closed(self, wait_ms: int) -> bool:
        return bool(self.monitor.poll(wait_ms))

    def close(self) -> None:
        self.sock.disable_monitor()
        self.monitor.close(0)
        self.sock.close(0)


def test_past_its_bound_a_keys_idlest_connections_are_closed(
    keyed_nameserver: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    opened: list[Connection] = []
    try:
        monkeypatch.setenv("HRPSIM_KEY", "admin")
        admin = [Connection(keyed_nameserver) for _ in range(2)]  # the idlest of all, but another key's
        opened += admin
        monkeypatch.setenv("HRPSIM_KEY", "eye")
        eye = []
        for _ in range(OBSERVER_CONNECTIONS):
            eye.append(Connection(keyed_nameserver))
            opened.append(eye[-1])
        surplus = OBSERVER_CONNECTIONS - PER_KEY
        assert all(c.closed(30_000) for c in eye[:surplus]), "the key's idlest connections go"
        assert not any(c.closed(0) for c in eye[surplus:]), "its latest ones stay"
        assert not any(c.closed(0) for c in admin), "another key's connections stay"
        monkeypatch.setenv("HRPSIM_KEY", "admin")
        with Client(keyed_nameserver, peer="nameserver", timeout=30.0) as other:
            assert other.call("ping")["kind"] == "nameserver"
    finally:
        for connection in opened:
            connection.close()
