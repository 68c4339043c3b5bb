"""A client of one hrpsim service: every call has a deadline, replies are matched by request id.

A reply that arrives after its call gave up carries an old id and is dropped, so a slow peer
never makes a later call read the wrong answer. Errors name the peer, its address and the
operation: :class:`Timeout` when nothing came back in time, :class:`PeerGone` when the
connection to the peer dropped while waiting, :class:`RemoteError` (or the typed error the
peer named) when it answered with an error.
"""

from __future__ import annotations

import itertools
import time
from typing import Any

import zmq

from hrpsim.codec import CODEC, MAX_MESSAGE_BYTES, Codec, Reply
from hrpsim.errors import AccessDenied, PeerGone, ProtocolError, RemoteError, Timeout, error_from_wire
from hrpsim.security import connect_securely
from hrpsim.sockets import NOBLOCK, monitor_event, readable, receive_within

DEFAULT_TIMEOUT = 5.0


class Client:
    """``Client(endpoint, peer="nameserver").call("resolve", name="sim")``.

    Not thread-safe (a zmq socket belongs to one thread): give each thread its own client.
    """

    SLICE = 0.05  # seconds between looks at connection events while waiting

    def __init__(
        self,
        endpoint: str,
        *,
        peer: str = "",
        timeout: float = DEFAULT_TIMEOUT,
        context: zmq.Context | None = None,
        codec: Codec = CODEC,
        connect_timeout: float | None = None,
    ) -> None:
        self.endpoint = endpoint
        self.peer = peer or endpoint
        self.timeout = timeout
        # a peer that never accepts the connection within this many seconds, or refuses it outright
        # (nothing listens at its address), is reported gone (None: wait the whole timeout), so a
        # dead service's stale address does not cost a long call's full timeout
        self.connect_timeout = connect_timeout
        self._codec = codec
        self._ids = itertools.count(1)
        self._ctx = context or zmq.Context.instance()
        self._sock = self._ctx.socket(zmq.DEALER)
        self._sock.setsockopt(zmq.LINGER, 0)
        self._sock.setsockopt(zmq.MAXMSGSIZE, MAX_MESSAGE_BYTES)  # a model's body is the largest reply
        self._sock.setsockopt(zmq.RCVTIMEO, round(self.SLICE * 1000))  # a receive waits one slice at most
        connect_securely(self._sock)
        self._monitor = self._sock.get_monitor_socket(
            zmq.EVENT_DISCONNECTED
            | zmq.EVENT_CONNECTED
            | zmq.EVENT_CONNECT_RETRIED
            | zmq.EVENT_HANDSHAKE_FAILED_AUTH
            | zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL
        )
        self._connected_once = False
        self._up = False  # connected now, as far as the connection events read so far tell
        self._connect_refused = False  # a connection attempt failed before any succeeded
        self._refused: str | None = None  # why the peer refused our key, once it has
        try:
            self._sock.connect(endpoint)
        except zmq.ZMQError as exc:
            self.close()
            raise ProtocolError(f"cannot connect to {self.peer} at {endpoint!r}: {exc}") from None

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if getattr(self, "_monitor", None) is not None:
            try:
                self._sock.disable_monitor()
            except zmq.ZMQError:
                pass
            self._monitor.close(linger=0)
            self._monitor = None
        if not self._sock.closed:
            self._sock.close(linger=0)

    def dropped(self) -> bool:
        """True when the connection to the peer was made, then dropped, and has not come back: a
        call now would wait its whole timeout (a request to nobody), so a caller that can do better
        (look for the peer elsewhere) asks first."""
        self._drain_monitor()
        return self._connected_once and not self._up

    def call(self, op: str, *, timeout: float | None = None, **args: Any) -> Any:
        """Send ``op(**args)`` and return its result, or raise within ``timeout`` seconds."""
        limit = self.timeout if timeout is None else timeout
        deadline = time.monotonic() + limit
        req_id = next(self._ids)
        if self._refused is not None:
            raise AccessDenied(self._refused)
        self._drain_monitor()
        try:
            self._sock.send(self._codec.request(req_id, op, args), NOBLOCK)
        except zmq.Again:
            raise Timeout(f"{self.peer} at {self.endpoint} cannot take {op!r} now (send queue full)") from None
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise Timeout(
                    f"no answer from {self.peer} at {self.endpoint} to {op!r} within {limit:g} s"
                    + ("" if self._connected_once else " (never connected: is it running?)")
                )
            # Wait for the answer in short slices and look at connection events between them. A
            # receive that waits (the socket's receive timeout is the slice) is the path every
            # answered call takes: cheaper than a poll and then a receive.
            reply = self._read_reply(remaining)
            if reply is not None:
                if reply.id != req_id:
                    continue  # an answer to an earlier call that gave up
                if reply.ok:
                    return reply.result
                raise self._remote_error(reply.error or {"type": reply.error_type, "message": reply.error_message}, op)
            if self._disconnected():
                raise PeerGone(f"{self.peer} at {self.endpoint} went away while answering {op!r}")
            if self._connect_refused and not self._connected_once and self.connect_timeout is not None:
                # Services bind before they register, and a restarted one registers a new address:
                # a registered address that refuses is a service that has died.
                raise PeerGone(
                    f"{self.peer} at {self.endpoint} does not accept connections (refused: nothing "
                    f"listens there) for {op!r}: is it running?"
                )
            if (
                not self._connected_once
                and self.connect_timeout is not None
                and limit - remaining >= self.connect_timeout
            ):
                raise PeerGone(
                    f"{self.peer} at {self.endpoint} does not accept connections (waited "
                    f"{self.connect_timeout:g} s for {op!r}): is it running?"
                )

    def _read_reply(self, remaining: float) -> Reply | None:
        """The next reply, waiting up to a slice (less when ``remaining`` s is less); None if none came."""
        frame = receive_within(self._sock, remaining, self.SLICE, copy=False)
        if frame is None:
            return None
        while frame.more:  # the answer is the last frame (a DEALER's reply has one)
            frame = self._sock.recv(NOBLOCK, copy=False)
        try:
            return self._codec.parse_reply(frame.bytes)
        except ProtocolError as exc:
            raise ProtocolError(f"bad reply from {self.peer} at {self.endpoint}: {exc}") from None

    def _remote_error(self, error: dict[str, Any], op: str) -> Exception:
        """The peer's error as its own type, with its field and problems, naming peer and operation."""
        exc = error_from_wire(error, prefix=f"{self.peer} at {self.endpoint} failed {op!r}: ")
        if isinstance(exc, RemoteError):
            exc.peer, exc.op = self.peer, op
        return exc

    def _drain_monitor(self) -> None:
        while readable(self._monitor):
            self._note_event(monitor_event(self._monitor.recv_multipart()))

    def _disconnected(self) -> bool:
        gone = False
        while readable(self._monitor):
            event = monitor_event(self._monitor.recv_multipart())
            gone = self._note_event(event) or gone
        return gone

    def _note_event(self, event: dict[str, Any]) -> bool:
        if event["event"] in (zmq.EVENT_HANDSHAKE_FAILED_AUTH, zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL):
            self._refused = (
                f"{self.peer} at {self.endpoint} refused this process's key (or it speaks "
                "without keys): is the key on its allow-list, and do both sides use --keys?"
            )
        if self._refused is not None:  # every later call too: the refusal does not go away by itself
            raise AccessDenied(self._refused)
        if event["event"] == zmq.EVENT_CONNECTED:
            self._connected_once = self._up = True
            return False
        if event["event"] == zmq.EVENT_CONNECT_RETRIED:
            self._connect_refused = True
            return False
        if event["event"] == zmq.EVENT_DISCONNECTED:
            self._up = False
            return True
        return False
