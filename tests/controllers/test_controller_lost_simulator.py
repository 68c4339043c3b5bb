"""A controller whose simulator's registered address refuses connections (the simulator died;
its entry lives until it expires) says so once, tries again without flooding its log, and gives
up after --reconnect-wait with exit status 3."""

from __future__ import annotations

import socket
from pathlib import Path

from process_helpers import spawn

from hrpsim import unix_channel
from hrpsim.naming import Registration, host_identity

IDLE_CONTROLLER = """
from hrpsim.controllers import Controller


class Idle(Controller):
    def control(self, state):
        return None
"""
EXIT_SIMULATOR_GONE = 3


def _dead_unix_socket(folder: Path) -> Path:
    """A socket file nobody listens on any more: connecting to it is refused at once."""
    path = folder / "hub.unix"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(str(path))
    sock.close()
    return path


def test_a_refusing_simulator_is_reported_once_and_given_up_on(tmp_path: Path, nameserver: str) -> None:
    dead = _dead_unix_socket(tmp_path)
    metadata = {
        "controllers": "tcp://127.0.0.1:9",
        "controllers_unix": f"{unix_channel.SCHEME}{dead}",
        "host": host_identity(),
        "robots": ["robot"],
    }
    registration = Registration("simserver", "simserver", "tcp://127.0.0.1:9", nameserver=nameserver, metadata=metadata)
    registration.start()
    (tmp_path / "idle.py").write_text(IDLE_CONTROLLER)
    proc = spawn(
        [
            *("controller", str(tmp_path / "idle.py"), "--robot", "robot", "--nameserver", nameserver),
            *("--connect-timeout", "30", "--reconnect-wait", "3"),
        ],
        tmp_path / "controller.log",
    )
    try:
        status = proc.popen.wait(120)
    finally:
        proc.stop()
        registration.stop()
    log = proc.log_text()
    assert status == EXIT_SIMULATOR_GONE, log
    assert log.count("cannot connect") == 1, log
    assert log.count("waiting up to 3 s for a simulator to come back") == 1, log
    assert "Traceback" not in log
