"""One key cannot crowd a nameserver: past its bound of connections, that key's idlest
connection is closed, and other keys' connections (even idler ones) are left alone."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import zmq
from process_helpers import REPO, ManagedProcess, spawn, wait_for_file

from hrpsim.client import Client
from hrpsim.codec import CODEC
from hrpsim.connections import WARN_INTERVAL_S
from hrpsim.security import connect_securely

PER_KEY = 4
OBSERVER_CONNECTIONS = 10


def _keyed_nameserver(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, bounds: dict[str, str]
) -> Iterator[ManagedProcess]:
    """A nameserver with keys (admin and the observer "eye") and these connection bounds."""
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
        env=bounds,
    )
    try:
        proc.address = wait_for_file(endpoint_file, proc)
        yield proc
        assert proc.popen.poll() is None
    finally:
        proc.stop()


@pytest.fixture
def keyed_nameserver(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    for proc in _keyed_nameserver(tmp_path, monkeypatch, {"HRPSIM_MAX_CONNECTIONS_PER_KEY": str(PER_KEY)}):
        yield proc.address


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


class Unannounced:
    """A connection under the current key that never makes a request (its key is unknown to the
    server), and that comes back whenever the server closes it, as a flood's connections would."""

    def __init__(self, address: str) -> None:
        self.sock = zmq.Context.instance().socket(zmq.DEALER)
        self.sock.setsockopt(zmq.LINGER, 0)
        self.monitor = self.sock.get_monitor_socket(zmq.EVENT_DISCONNECTED)
        connect_securely(self.sock)
        self.sock.connect(address)

    def close(self) -> None:
        self.sock.disable_monitor()
        self.monitor.close(0)
        self.sock.close(0)


TOTAL_BOUND = 12
FLOOD = 40


@pytest.fixture
def small_keyed_nameserver(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, Path]]:
    bounds = {"HRPSIM_MAX_CONNECTIONS_PER_KEY": str(PER_KEY), "HRPSIM_MAX_CONNECTIONS": str(TOTAL_BOUND)}
    for proc in _keyed_nameserver(tmp_path, monkeypatch, bounds):
        yield proc.address, proc.log


def test_a_flood_past_the_total_bound_closes_the_crowding_keys_connections_only(
    small_keyed_nameserver: tuple[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Connections that never ask (so the per-key bound never sees their key) and come back when closed
    fill the service past its total bound: they lose their own, the idle admin keeps its connections,
    and the warnings are a few lines, not one per connection closed."""
    address, log = small_keyed_nameserver
    opened: list[Connection | Unannounced] = []
    try:
        monkeypatch.setenv("HRPSIM_KEY", "admin")
        admin = [Connection(address) for _ in range(2)]  # the idlest of all
        opened += admin
        monkeypatch.setenv("HRPSIM_KEY", "eye")
        started = time.monotonic()
        flood = [Unannounced(address) for _ in range(FLOOD)]
        opened += flood
        closed_floods = sum(1 for c in flood if c.monitor.poll(30_000))  # the bound bites
        assert closed_floods >= FLOOD - TOTAL_BOUND, "the flood's connections are closed past the bound"
        # asked under admin: a connection under the flood's key may lose its place to a flood connection
        # that came back after it asked, before the answer
        monkeypatch.setenv("HRPSIM_KEY", "admin")
        with Client(address, peer="nameserver", timeout=30.0) as asker:  # the server has seen all of it
            assert asker.call("ping")["kind"] == "nameserver"
        assert not any(c.closed(0) for c in admin), "the admin's idle connections stay"
        with Client(address, peer="nameserver", timeout=30.0) as other:
            assert other.call("ping")["kind"] == "nameserver"
        elapsed = time.monotonic() - started
        warnings = [line for line in log.read_text().splitlines() if "connections: closing" in line]
        assert 1 <= len(warnings) <= 2 + elapsed / WARN_INTERVAL_S, warnings[:5]
        assert closed_floods > len(warnings)
    finally:
        for connection in opened:
            connection.close()
