"""The controller's side of the tick protocol: a link to the simulator's controller hub.

A link says hello, waits for the welcome, then hands out what the simulator sends (states,
errors, bye) and sends commands back. :class:`SimulatorLink` is one DEALER socket; it watches its
connection through a socket monitor, so a simulator that dies is reported as :class:`PeerGone`
instead of silence. :class:`UnixLink` is the same protocol over the hub's Unix channel
(hrpsim/unix_channel.py), for a controller on the simulator's host, and
:class:`~hrpsim.controllers.shm_link.SharedMemoryLink` adds shared memory to it (states and commands
written in place); :func:`open_link` picks by endpoint.
"""

from __future__ import annotations

import time
from typing import Any

import zmq

from hrpsim import shared_state, unix_channel
from hrpsim import tick_protocol as proto
from hrpsim.errors import AccessDenied, PeerGone, ProtocolError, Timeout
from hrpsim.security import connect_securely
from hrpsim.sockets import NOBLOCK, monitor_event, readable, receive_within

MONITOR_SLICE_S = 0.1  # a waiting receive looks at the connection monitor this often
HEARTBEAT_MS = 1000  # zmq heartbeats find a peer that vanished without closing (a host gone)
MAX_WELCOME_BYTES = 64 * 1024 * 1024  # the welcome carries the robot's body, meshes and all


class Link:
    """What every link does the same way; subclasses move the bytes."""

    endpoint: str
    peer: str
    _connected: bool
    transport = "zeromq"  # how states and commands travel, for the runner's log
    asks_shared_memory = False  # its hello asks for the fast path (hrpsim/shared_state.py)

    def receive(self, timeout: float) -> dict[str, Any] | None:
        raise NotImplementedError

    def _send(self, data: bytes) -> None:
        """Send one message now; PeerGone if it cannot go."""
        raise NotImplementedError

    def send_command(self, tick: int, **fields: Any) -> None:
        self._send(proto.command(tick, **fields))

    def bye(self, reason: str) -> None:
        try:
            self._send(proto.bye(reason))
        except PeerGone:
            pass

    def close(self) -> None:
        raise NotImplementedError

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
        self._send(
            proto.hello(
                controller,
                robot,
                period=period,
                policy=policy,
                deadline=deadline,
                default_name=default_name,
                shared_memory=self.asks_shared_memory,
            )
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
        welcome = proto.parse_welcome(msg)
        self._welcomed(msg)
        return welcome

    def _welcomed(self, msg: dict[str, Any]) -> None:
        """The welcome came: a link whose transport it sets up reads its fields here."""

    def checked_state(self, msg: dict[str, Any], n_joints: int) -> dict[str, Any]:
        """A state this link received, checked (kind, shape, finite values); ProtocolError naming
        the field. A link whose transport already guarantees part of it checks the rest."""
        return proto.check_state(msg, n_joints)


class SimulatorLink(Link):
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
        # A receive that waits one slice at most: cheaper than a poll and then a receive, and the
        # connection monitor is still read between slices.
        self._sock.setsockopt(zmq.RCVTIMEO, round(MONITOR_SLICE_S * 1000))
        connect_securely(self._sock)
        self._monitor = self._sock.get_monitor_socket(
            zmq.EVENT_CONNECTED | zmq.EVENT_DISCONNECTED | zmq.EVENT_HANDSHAKE_FAILED_AUTH
        )
        self._sock.connect(endpoint)
        self._connected = False

    def receive(self, timeout: float) -> dict[str, Any] | None:
        """The next message (welcome/state/error/bye), or None after ``timeout`` s; PeerGone if the link dropped.

        Only the data socket is polled on the hot path; the connection monitor is read when that
        poll comes back empty, so a dropped simulator is noticed within ``timeout``."""
        sock = self._sock
        if self.spin_s > 0:
            spin_until = time.perf_counter() + min(self.spin_s, timeout)
            while time.perf_counter() < spin_until:  # busy-poll: the next state comes within a tick
                try:
                    return proto.decode(sock.recv(NOBLOCK), expect=proto.TO_CONTROLLER)
                except zmq.Again:
                    pass
        deadline = time.monotonic() + timeout
        while True:
            data = receive_within(sock, deadline - time.monotonic(), MONITOR_SLICE_S)
            if data is not None:
                return proto.decode(data, expect=proto.TO_CONTROLLER)
            self._check_monitor()
            if time.monotonic() >= deadline:
                return None

    def _send(self, data: bytes) -> None:
        try:
            self._sock.send(data, NOBLOCK)
        except zmq.Again:
            raise PeerGone(f"cannot send to the {self.peer} at {self.endpoint}: its queue is full") from None
        except zmq.ZMQError as exc:
            raise PeerGone(f"cannot send to the {self.peer} at {self.endpoint}: {exc}") from None

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
        while readable(self._monitor):
            event = monitor_event(self._monitor.recv_multipart())["event"]
            if event == zmq.EVENT_CONNECTED:
                self._connected = True
            elif event == zmq.EVENT_DISCONNECTED and self._connected:
                raise PeerGone(f"the {self.peer} at {self.endpoint} went away (its connection dropped)")
            elif event == zmq.EVENT_HANDSHAKE_FAILED_AUTH:
                raise AccessDenied(
                    f"the {self.peer} at {self.endpoint} refused this process's key: attaching "
                    "needs a key on its allow-list with the controller role (docs/security.md)"
                )


class UnixLink(Link):
    """The link over the hub's Unix channel: one socket, one wake-up per message on each side."""

    transport = "unix channel"

    def __init__(self, endpoint: str, *, peer: str = "simulator", spin_s: float = 0.0, timeout: float = 5.0) -> None:
        self.endpoint = endpoint
        self.spin_s = spin_s
        self.peer = peer
        try:
            self._channel = unix_channel.connect(
                endpoint,
                timeout=timeout,
                max_message=MAX_WELCOME_BYTES,
                peer=f"{peer} at {endpoint}",
                takes_fds=self.asks_shared_memory,
            )
        except OSError as exc:
            raise PeerGone(f"cannot connect to the {peer} at {endpoint}: {exc}") from None
        self._connected = True
        self._closed = False

    def receive(self, timeout: float) -> dict[str, Any] | None:
        """The next message (welcome/state/error/bye), or None after ``timeout`` s; PeerGone if the link dropped."""
        channel = self._channel
        try:
            if self.spin_s > 0:
                spin_until = time.perf_counter() + min(self.spin_s, timeout)
                while time.perf_counter() < spin_until:  # busy-poll: the next state comes within a tick
                    data = channel.receive(0.0)
                    if data is not None:
                        return proto.decode(data, expect=proto.TO_CONTROLLER)
            data = channel.receive(timeout)
        except EOFError:
            raise PeerGone(f"the {self.peer} at {self.endpoint} went away (its connection dropped)") from None
        return None if data is None else proto.decode(data, expect=proto.TO_CONTROLLER)

    def _send(self, data: bytes) -> None:
        try:
            self._channel.send(data)
        except (BrokenPipeError, ConnectionResetError):
            raise PeerGone(f"the {self.peer} at {self.endpoint} went away (its connection dropped)") from None
        except OSError as exc:  # it reads nothing any more (TimeoutError), or the socket broke otherwise
            raise PeerGone(f"cannot send to the {self.peer} at {self.endpoint}: {exc}") from None

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._channel.close()


def open_link(
    endpoint: str,
    *,
    peer: str = "simulator",
    spin_s: float = 0.0,
    timeout: float = 5.0,
    shared_memory: bool = True,
) -> Link:
    """The link for ``endpoint``: for ``unix://``, shared memory over the Unix channel (where the
    platform has it and ``shared_memory``) or the channel alone; else ZeroMQ (tcp://, ipc://)."""
    if endpoint.startswith(unix_channel.SCHEME):
        from hrpsim.controllers.shm_link import SharedMemoryLink

        use_shared = shared_memory and shared_state.available()
        cls = SharedMemoryLink if use_shared else UnixLink
        return cls(endpoint, peer=peer, spin_s=spin_s, timeout=timeout)
    return SimulatorLink(endpoint, peer=peer, spin_s=spin_s)
