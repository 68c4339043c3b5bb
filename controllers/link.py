"""The controller's side of the tick protocol: one DEALER socket to the simulator's controller hub.

:class:`SimulatorLink` says hello, waits for the welcome, then hands out what the simulator sends
(states, errors, bye) and sends commands back. It watches its own connection through a socket
monitor, so a simulator that dies is reported as :class:`PeerGone` instead of silence.
"""

from __future__ import annotations

import time
from typing import Any

import zmq
from zmq.utils.monitor import parse_monitor_message

from hrpsim import tick as proto
from hrpsim.errors import AccessDenied, PeerGone, ProtocolError, Timeout
from hrpsim.security import connect_securely

MONITOR_SLICE_S = 0.1  # a waiting receive looks at the connection monitor this often
HEARTBEAT_MS = 1000  # zmq heartbeats find a peer that vanished without closing (a host gone)
MAX_WELCOME_BYTES = 64 * 1024 * 1024  # the welcome carries the robot's body, meshes and all


class SimulatorLink:
    def __init__(
        self, endpoint: str, *, context: zmq.Context | None = None, peer: str = "simulator", spin_s: float = 0.0
    ) -> None:
        self.endpoint = endpoint
        self.spin_s = spin_s  # how long receive() busy-polls before sleeping (lower latency, more CPU)
        self.peer = peer
        ctx = context or zmq.Context.instance()
        self._sock = ctx.socket(zmq.DEALER)
        self._sock.setsockopt(zmq.LINGER, 0)
        self._sock.setsockopt(zmq.HEARTBEAT_IVL, HEARTBEAT_MS)
        self._sock.setsockopt(zmq.HEARTBEAT_TIMEOUT, 3 * HEARTBEAT_MS)
        self._sock.setsockopt(zmq.MAXMSGSIZE, MAX_WELCOME_BYTES)
        connect_securely(self._sock)
        self._monitor = self._sock.get_monitor_socket(
            zmq.EVENT_CONNECTED | zmq.EVENT_DISCONNECTED | zmq.EVENT_HANDSHAKE_FAILED_AUTH
        )
        self._sock.connect(endpoint)
        self._connected = False

    def attach(
        self,
        controller: str,
        robot: str,
        *,
        period: float | None,
        timeout: float,
        policy: str | None = None,
        deadline: float | None = None,
        default_name: bool = False,
    ) -> proto.Welcome:
        """Say hello and return the welcome; RequestError if the simulator refuses (message says why).
        The welcome's ``controller`` is the name the simulator attached it under."""
        self._sock.send(
            proto.hello(controller, robot, period=period, policy=policy, deadline=deadline, default_name=default_name)
        )
        deadline_at = time.monotonic() + timeout
        while True:
            msg = self.receive(max(0.0, deadline_at - time.monotonic()))
            # states and errors about commands (they carry a tick) may still be on their way from
            # before this hello: the answer to the hello is a welcome or an error without a tick
            if msg is None or msg["type"] == proto.WELCOME or (msg["type"] == proto.ERROR and msg.get("tick") is None):
                break
        if msg is None:
            raise Timeout(
                f"no welcome from the {self.peer} at {self.endpoint} within {timeout:g} s"
                + ("" if self._connected else " (never connected: is the simulator running?)")
            )
        if msg["type"] == proto.ERROR:
            # the simulator's own exception type (RequestError, ...) with the field it refused
            raise proto.error_of(msg, prefix=f"the {self.peer} at {self.endpoint} refused controller {controller!r}: ")
        if msg["type"] != proto.WELCOME:
            raise ProtocolError(f"expected a welcome from the {self.peer}, got a {msg['type']!r} message")
        return proto.parse_welcome(msg)

    def receive(self, timeout: float) -> dict[str, Any] | None:
        """The next message (welcome/state/error/bye), or None after ``timeout`` s; PeerGone if the link dropped.

        Only the data socket is polled on the hot path; the connection monitor is read when that
        poll comes back empty, so a dropped simulator is noticed within ``timeout``."""
        sock = self._sock
        if self.spin_s > 0:
            spin_until = time.perf_counter() + min(self.spin_s, timeout)
            while time.perf_counter() < spin_until:  # busy-poll: the next state comes within a tick
                try:
                    return proto.decode(sock.recv(zmq.NOBLOCK), expect=proto.TO_CONTROLLER)
                except zmq.Again:
                    pass
        deadline = time.monotonic() + timeout
        while True:
            if sock.poll(max(0.0, min(deadline - time.monotonic(), MONITOR_SLICE_S)) * 1000):
                return proto.decode(sock.recv(), expect=proto.TO_CONTROLLER)
            self._check_monitor()
            if time.monotonic() >= deadline:
                return None

    def send_command(self, tick: int, **fields: Any) -> None:
        try:
            self._sock.send(proto.command(tick, **fields), zmq.NOBLOCK)
        except zmq.Again:
            raise PeerGone(f"cannot send to the {self.peer} at {self.endpoint}: its queue is full") from None

    def bye(self, reason: str) -> None:
        try:
            self._sock.send(proto.bye(reason), zmq.NOBLOCK)
        except zmq.ZMQError:
            pass

    def close(self) -> None:
        if self._sock.closed:
            return
        try:
            self._sock.disable_monitor()
        except zmq.ZMQError:
            pass
        self._monitor.close(linger=0)
        self._sock.close(linger=100)  # a moment for a bye to leave

    def _check_monitor(self) -> None:
        while self._monitor.poll(0):
            event = parse_monitor_message(self._monitor.recv_multipart())["event"]
            if event == zmq.EVENT_CONNECTED:
                self._connected = True
            elif event == zmq.EVENT_DISCONNECTED and self._connected:
                raise PeerGone(f"the {self.peer} at {self.endpoint} went away (its connection dropped)")
            elif event == zmq.EVENT_HANDSHAKE_FAILED_AUTH:
                raise AccessDenied(
                    f"the {self.peer} at {self.endpoint} refused this process's key: attaching "
                    "needs a key on its allow-list with the controller role (docs/security.md)"
                )
