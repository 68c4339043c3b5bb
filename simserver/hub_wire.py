"""The controller hub's wire: every way a controller process reaches the hub, behind one receive and
one send.

One ROUTER socket bound to tcp (and to an ipc:// path for controllers on this host) and, without
keys, the Unix channel (simserver/unix_peers.py). Each connection is known by an identity (a ZeroMQ
routing id, or ``unix/N``). ``receive`` hands every complete message to the hub's handler and tells
it which identities lost their connection: a ZeroMQ peer's TCP connection dropping is noticed at once
through the socket monitor, matched to the identity that said hello on that socket number.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import zmq

from hrpsim import shared_state, unix_channel
from hrpsim.rpc import bind_router
from hrpsim.security import identity as host_key
from hrpsim.simserver.shm_peers import CommandHandler, SharedMemoryPeer, SharedMemoryPeers
from hrpsim.simserver.unix_peers import UNIX_PREFIX, UnixPeers
from hrpsim.sockets import monitor_event, readable

log = logging.getLogger("hrpsim.simserver.hub")

MessageHandler = Callable[[bytes, Any], None]  # (identity, frame with .bytes and .get(option))
DropHandler = Callable[[bytes], None]  # identity whose connection dropped


class WireTransport:
    """The hub's sockets. ``on_message`` and ``on_dropped`` are the hub's handlers."""

    def __init__(
        self,
        context: zmq.Context,
        bind: str,
        *,
        max_message: int,
        spin_s: float,
        on_message: MessageHandler,
        on_dropped: DropHandler,
        on_command: CommandHandler,
    ) -> None:
        """``on_command``: a command read from a shared memory segment, as the message's fields."""
        self._on_message, self._on_dropped = on_message, on_dropped
        self._spin_s = spin_s  # busy-poll this long before sleeping in poll(): answers come back fast
        self._router, self.endpoint = bind_router(
            context, bind, "controller hub", mandatory=True, domain="controllers", max_message=max_message
        )
        self.ipc_endpoint = _bind_ipc(self._router)
        self._monitor = self._router.get_monitor_socket(zmq.EVENT_DISCONNECTED)
        self._poller = zmq.Poller()
        self._poller.register(self._router, zmq.POLLIN)
        self._poller.register(self._monitor, zmq.POLLIN)
        self._unix: UnixPeers | None = None
        self._shared: SharedMemoryPeers | None = None
        self.unix_endpoint: str | None = None
        if host_key() is None:  # with keys, every controller comes through CurveZMQ
            self._unix = UnixPeers(self._poller, max_message=max_message)
            self.unix_endpoint = self._unix.endpoint
            if shared_state.available():
                self._shared = SharedMemoryPeers(self._poller, send=self._send_unix, on_command=on_command)
        self._fd_owner: dict[int, bytes] = {}  # socket number of each connection that said hello
        self._stale_disconnects: dict[int, int] = {}

    @property
    def closed(self) -> bool:
        return self._router.closed

    def shared_memory_peer(self, identity: bytes, layout: shared_state.Layout) -> SharedMemoryPeer | None:
        """The fast path for the controller on connection ``identity``; None when that connection
        cannot take it (tcp or ipc: descriptors travel only on the Unix channel)."""
        if self._shared is None or not identity.startswith(UNIX_PREFIX):
            return None
        return self._shared.open(identity, layout)

    def send(self, identity: bytes, frame: bytes) -> bool:
        if identity.startswith(UNIX_PREFIX):
            return self._send_unix(identity, frame, ())
        try:
            self._router.send_multipart([identity, frame], zmq.NOBLOCK)
            return True
        except zmq.ZMQError:  # EHOSTUNREACH: that peer is gone; EAGAIN: its queue is full
            return False

    def receive(self, timeout: float) -> None:
        """Handle every waiting message, waiting up to ``timeout`` s for the first. Only what was
        found ready is read: a command found in shared memory costs no look at the sockets."""
        ready = self._ready(timeout)
        if not ready:
            return
        sources = [source for source, _ in ready]
        if self._router in sources:  # messages first: a controller's bye arrives before its connection drops
            self._read_router()
        for source in sources:
            if isinstance(source, int) and not (self._shared is not None and self._shared.read(source)):
                self._read_unix(source)
        if self._monitor in sources:
            self.handle_disconnects()

    def note_hello(self, identity: bytes, frame: Any) -> int | None:
        """A hello came on ``frame``'s connection: remember which socket number it is, so that the
        connection's disconnect event detaches the right controller. Returns the socket number."""
        fd = _source_fd(frame)
        if fd is not None:
            # Noted for refused hellos too: when that peer's socket number is reused by the next
            # connection, its late disconnect event must not detach the newcomer.
            previous = self._fd_owner.get(fd)
            if previous is not None and previous != identity:
                # The socket number was reused: that connection closed and its disconnect event is
                # still queued behind this hello. Act on it now, and skip the event when it comes.
                self._stale_disconnects[fd] = self._stale_disconnects.get(fd, 0) + 1
                self._on_dropped(previous)
            self._fd_owner[fd] = identity
        # The peer this controller replaces may have closed on another socket number, its disconnect
        # event queued behind this hello: act on it first, or the newcomer is refused for a robot
        # that only a dead connection still holds.
        self.handle_disconnects()
        return fd

    def handle_disconnects(self) -> None:
        while readable(self._monitor):
            event = monitor_event(self._monitor.recv_multipart())
            fd = int(event["value"])
            if self._stale_disconnects.get(fd):
                self._stale_disconnects[fd] -= 1
                continue
            identity = self._fd_owner.pop(fd, None)
            if identity is not None:
                self._on_dropped(identity)

    def close(self) -> None:
        if self._router.closed:
            return
        try:
            self._router.disable_monitor()
        except zmq.ZMQError:
            pass
        self._monitor.close(linger=0)
        self._router.close(linger=0)
        if self.ipc_endpoint is not None:
            Path(self.ipc_endpoint[len("ipc://") :]).unlink(missing_ok=True)
        if self._shared is not None:
            self._shared.close()
        if self._unix is not None:
            self._unix.close()

    def _read_router(self) -> None:
        while True:
            try:
                frames = self._router.recv_multipart(zmq.NOBLOCK, copy=False)
            except zmq.Again:
                return
            if len(frames) != 2:
                log.warning("dropped a controller message of %d frames (expected 2)", len(frames))
                continue
            self._on_message(frames[0].bytes, frames[1])

    def _send_unix(self, identity: bytes, frame: bytes, fds: tuple[int, ...]) -> bool:
        return self._unix is not None and self._unix.send(identity, frame, fds)

    def _ready(self, timeout: float) -> list[tuple[Any, int]]:
        """What has something to read, busy-polling the first ``spin_s`` of the wait."""
        spin_until = time.perf_counter() + min(timeout, self._spin_s)
        shared = self._shared
        while True:
            ready = (shared is not None and shared.written()) or self._poller.poll(0)
            if ready or time.perf_counter() >= spin_until:
                break
        remaining_ms = (timeout - self._spin_s) * 1000
        if ready or remaining_ms <= 0:
            return ready
        return self._poller.poll(remaining_ms)

    def _read_unix(self, fd: int) -> None:
        got = self._unix.read(fd) if self._unix is not None else None
        if got is None:
            return
        who, messages, closed = got
        for message in messages:
            self._on_message(who, _UnixFrame(message))
        if closed:
            self._on_dropped(who)


class NoWire:
    """The hub of a simulation in one process (the Python API): no sockets, in-process controllers only."""

    endpoint = ipc_endpoint = unix_endpoint = None
    closed = False

    def send(self, identity: bytes, frame: bytes) -> bool:
        return False

    def shared_memory_peer(self, identity: bytes, layout: shared_state.Layout) -> SharedMemoryPeer | None:
        return None

    def receive(self, timeout: float) -> None:
        if timeout > 0:
            time.sleep(timeout)

    def note_hello(self, identity: bytes, frame: Any) -> int | None:
        return None

    def handle_disconnects(self) -> None:
        pass

    def close(self) -> None:
        self.closed = True


class _UnixFrame:
    """A message from the Unix channel, looking like the ZeroMQ frame the handlers take: it has
    no metadata (no socket number, no authenticated key)."""

    __slots__ = ("bytes",)

    def __init__(self, data: bytes) -> None:
        self.bytes = data

    def get(self, option: Any) -> Any:
        raise zmq.ZMQError(zmq.EINVAL)


def _source_fd(frame: Any) -> int | None:
    try:
        return int(frame.get(zmq.SRCFD))
    except (zmq.ZMQError, ValueError, TypeError):
        return None


def _bind_ipc(router: zmq.Socket) -> str | None:
    """Also bind an ipc:// endpoint: controllers on this host skip the TCP stack (a shorter round trip)."""
    path = unix_channel.fresh_path(".sock")
    try:
        router.bind(f"ipc://{path}")
    except zmq.ZMQError as exc:  # a platform without ipc: tcp alone still works
        log.info("no ipc endpoint for the controller hub: %s", exc)
        return None
    return f"ipc://{path}"
