"""The base of every hrpsim service: a ROUTER socket, an explicit table of operations, and one
dispatcher that turns every failure into an error reply, so bad input never stops the service.

A subclass declares its operations (``declared``: hrpsim/operations.py, each one ``Op`` with its
name, arguments, role and serving method), or returns them from :meth:`Service.operations` (a
plain dict: the name on the wire maps to a bound method). Either way the table is built once, at
start: nothing is looked up by getattr on a wire string. Arguments arrive as keywords and are
checked against the method's signature before the call.

An operation that takes long may return a :class:`Pending` and settle it later: the service
answers other requests meanwhile and replies to that one when it is settled.

Every service also answers ``ping`` (name, kind, protocol version, pid) and ``quit`` (stop
after replying). SIGTERM and SIGINT go through the same path as a remote ``quit``.

Each operation needs a role of the calling key (hrpsim.security): its declaration's, or the one
:meth:`Service.roles` lists; an operation without one needs ``admin``, so an operation added
without thought is closed rather than open. Without keys every peer has every role.
"""

from __future__ import annotations

import inspect
import logging
import os
import signal
import threading
import time
from collections.abc import Callable
from functools import partial
from typing import Any

import zmq

from hrpsim.cli_options import DEFAULT_BIND
from hrpsim.codec import CODEC, PROTOCOL_VERSION, Codec
from hrpsim.connections import ConnectionBound, max_connections
from hrpsim.errors import HrpsimError, ProtocolError, RequestError
from hrpsim.naming import Registration, advertised
from hrpsim.operations import EVERY_SERVICE, Op
from hrpsim.security import UNAUTHENTICATED, Peer, peer_of, serve_securely
from hrpsim.sockets import NOBLOCK, readable

# Bounds on what a peer can make a service hold: a request's size (fitted per service), the
# requests queued per connection while the service is busy, and how long a connection may stay
# without finishing its handshake or answering heartbeats before it is closed.
DEFAULT_MAX_REQUEST = 1024 * 1024
RECEIVE_QUEUE = 32
HANDSHAKE_MS = 5000
HEARTBEAT_MS = 2000

log = logging.getLogger("hrpsim.rpc")

Operation = Callable[..., Any]


def bind_router(
    context: zmq.Context,
    bind: str,
    who: str,
    *,
    mandatory: bool = False,
    domain: str = "service",
    max_message: int = DEFAULT_MAX_REQUEST,
) -> tuple[zmq.Socket, str]:
    """A ROUTER bound to ``bind`` with hrpsim's limits, and the endpoint peers should use.
    ``mandatory``: sending to a peer that is gone raises instead of dropping silently.
    ``domain``: which keys may connect (hrpsim.security), when keys are set.
    ``max_message``: the largest message a peer may send; zmq drops the connection of one that
    sends more, before any of it is buffered."""
    sock = context.socket(zmq.ROUTER)
    sock.setsockopt(zmq.LINGER, 0)
    sock.setsockopt(zmq.MAXMSGSIZE, max_message)
    sock.setsockopt(zmq.RCVHWM, RECEIVE_QUEUE)
    sock.setsockopt(zmq.HANDSHAKE_IVL, HANDSHAKE_MS)
    sock.setsockopt(zmq.HEARTBEAT_IVL, HEARTBEAT_MS)
    sock.setsockopt(zmq.HEARTBEAT_TIMEOUT, 3 * HEARTBEAT_MS)
    sock.setsockopt(zmq.ROUTER_MANDATORY, int(mandatory))
    try:
        serve_securely(sock, bind, domain, who)
        sock.bind(bind)
    except HrpsimError:
        sock.close(linger=0)
        raise
    except zmq.ZMQError as exc:
        sock.close(linger=0)
        raise HrpsimError(f"{who} cannot bind {bind!r}: {exc}") from None
    return sock, advertised(sock.getsockopt_string(zmq.LAST_ENDPOINT))


# Plain integers: pyzmq's enum flags go through Python's enum machinery on every use.
_NOBLOCK_MORE = int(zmq.NOBLOCK | zmq.SNDMORE)
_RCVTIMEO = int(zmq.RCVTIMEO)


def _receive(sock: zmq.Socket, flags: int = NOBLOCK) -> list[zmq.Frame] | None:
    """Every frame of the next message on ``sock``: waiting up to the socket's receive timeout for
    its first frame with ``flags`` 0, not at all with NOBLOCK (None when none came)."""
    try:
        frames = [sock.recv(flags, copy=False)]
        while frames[-1].more:  # the rest of a message is there with its first frame
            frames.append(sock.recv(NOBLOCK, copy=False))
    except zmq.Again:
        return None
    return frames


def _anyone(_frame: zmq.Frame) -> Peer:
    return UNAUTHENTICATED


# An operation's parameter annotated with one of these plain kinds gets a value of that kind or
# a RequestError naming it (parameters annotated Any, and numbers, whose ranges only the operation
# knows, are checked by the operation itself).
_KINDS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "str": (lambda v: isinstance(v, str), "a string"),
    "int": (lambda v: isinstance(v, int) and not isinstance(v, bool), "an integer"),
    "bool": (lambda v: isinstance(v, bool), "true or false"),
    "dict[str, str]": (lambda v: isinstance(v, dict), "a map"),
}


class _Params:
    """An operation's keyword parameters, checked before the call: a TypeError raised inside an
    operation is a bug of the operation, not a bad request, and must not be reported as one."""

    def __init__(
        self,
        required: frozenset[str],
        optional: frozenset[str],
        extra_ok: bool,
        kinds: dict[str, tuple[str, bool]] | None = None,
    ) -> None:
        self.required, self.known, self.extra_ok = required, required | optional, extra_ok
        self.kinds = kinds or {}  # parameter -> (its kind in _KINDS, whether nil is accepted)

    @classmethod
    def of(cls, fn: Operation) -> _Params:
        required, optional, extra_ok, kinds = set(), set(), False, {}
        for p in inspect.signature(fn).parameters.values():
            if p.kind is p.VAR_KEYWORD:
                extra_ok = True
            elif p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY):
                (required if p.default is p.empty else optional).add(p.name)
                annotation = str(p.annotation).removesuffix(" | None")
                if annotation in _KINDS:
                    nil_ok = str(p.annotation).endswith("| None") or (p.default is None)
                    kinds[p.name] = (annotation, nil_ok)
        return cls(frozenset(required), frozenset(optional), extra_ok, kinds)

    def check_kinds(self, op: str, args: dict[str, Any]) -> None:
        for name, value in args.items():
            if name not in self.kinds:
                continue
            kind, nil_ok = self.kinds[name]
            valid, what = _KINDS[kind]
            if not (valid(value) or (nil_ok and value is None)):
                raise RequestError(
                    f"{op}: {name} must be {what}{' or nil' if nil_ok else ''}, got {value!r:.80}", field=name
                )

    def check(self, op: str, args: dict[str, Any]) -> None:
        # the comparisons build no set on the way every good request takes
        if not args.keys() >= self.required:
            missing = self.required.difference(args)
            raise RequestError(f"{op}: missing argument(s) {', '.join(sorted(missing))}", field=min(missing))
        if not (self.extra_ok or self.known.issuperset(args)):
            unknown = set(args).difference(self.known)
            raise RequestError(
                f"{op}: unknown argument(s) {', '.join(sorted(unknown))}; "
                f"it takes {', '.join(sorted(self.known)) or 'none'}",
                field=min(unknown),
            )
        if self.kinds:
            self.check_kinds(op, args)


class Pending:
    """An operation's answer that comes later: the operation returns it, keeps it, and calls
    :meth:`resolve` or :meth:`fail` from the service's loop (``on_idle``) once it has returned."""

    def __init__(self) -> None:
        self._encode: Callable[[Any], bytes] | None = None
        self._encode_error: Callable[[HrpsimError], bytes] | None = None
        self._send: Callable[[bytes], None] | None = None

    def resolve(self, result: Any) -> None:
        self._deliver(lambda: self._encode(result))

    def fail(self, error: HrpsimError) -> None:
        self._deliver(lambda: self._encode_error(error))

    def _encode_with(self, encode: Callable[[Any], bytes], encode_error: Callable[[HrpsimError], bytes]) -> None:
        self._encode, self._encode_error = encode, encode_error

    def _send_with(self, send: Callable[[bytes], None]) -> None:
        self._send = send

    def _deliver(self, reply: Callable[[], bytes]) -> None:
        send, self._send = self._send, None
        if send is None or self._encode_error is None:
            raise RuntimeError("a Pending is settled once, after its operation has returned it")
        try:
            data = reply()
        except HrpsimError as exc:  # a result the codec cannot carry
            data = self._encode_error(exc)
        send(data)


class Service:
    """Subclass, set ``kind``, implement :meth:`operations`; then ``serve_forever()``."""

    kind = "service"
    max_request_bytes = DEFAULT_MAX_REQUEST
    declared: tuple[Op, ...] = ()  # this service's operations; ping and quit are every service's

    def __init__(
        self,
        name: str,
        *,
        bind: str = DEFAULT_BIND,
        nameserver: str | None = None,
        register: bool = True,
        context: zmq.Context | None = None,
        codec: Codec = CODEC,
    ) -> None:
        self.name = name
        self._codec = codec
        self._ctx = context or zmq.Context.instance()
        self.socket, self.endpoint = bind_router(
            self._ctx, bind, f"{self.kind} {name!r}", max_message=self.max_request_bytes
        )
        self._connections = ConnectionBound(self.socket, max_connections(), f"{self.kind} {name!r}")
        self._wait_ms = -1  # the socket's receive timeout (ms) as last set: zmq's default, none
        # A socket made without keys carries no key on any request: every peer has every role.
        self._peer_of = peer_of if self.socket.get(zmq.CURVE_SERVER) else _anyone
        self._stopping = threading.Event()
        self._ops: dict[str, Operation] = {name: op.serving(self) for op in EVERY_SERVICE for name in op.names}
        self._ops.update(self.operations())
        self._roles = {name: op.role for op in EVERY_SERVICE for name in op.names}
        self._roles.update(self.roles())
        self.peer: Peer = UNAUTHENTICATED  # who sent the request being answered
        self._params = {op: _Params.of(fn) for op, fn in self._ops.items()}
        self.registration: Registration | None = None
        if register:
            self.registration = Registration(
                name, self.kind, self.endpoint, nameserver=nameserver, metadata=self.metadata()
            )

    # --- for subclasses ---

    def operations(self) -> dict[str, Operation]:
        """Each operation's serving method by its names on the wire: the declared ones'."""
        return {name: op.serving(self) for op in self.declared for name in op.names}

    def roles(self) -> dict[str, str]:
        """The least role each operation needs (hrpsim.keys.ROLES); unlisted ones need ``admin``."""
        return {name: op.role for op in self.declared for name in op.names}

    def metadata(self) -> dict[str, Any]:
        return {"pid": os.getpid()}

    def on_idle(self) -> None:
        """Called at least every ``idle_interval`` seconds from the serving loop."""

    idle_interval = 0.1

    # --- the loop ---

    def start(self) -> None:
        """Register with the nameserver (when asked to)."""
        if self.registration is not None:
            self.registration.start()
        log.info("%s %r serving at %s", self.kind, self.name, self.endpoint)

    def serve_forever(self, *, install_signals: bool = True) -> None:
        if install_signals:
            self.install_signal_handlers()
        self.start()
        try:
            while not self._stopping.is_set():
                self._serve_one(self.idle_interval)
                self.on_idle()
        finally:
            self.close()

    def serve_pending(self, timeout: float = 0.0) -> int:
        """Answer every request that is waiting (waiting up to ``timeout`` s for the first)."""
        handled = 0
        while self._serve_one(0.0 if handled else timeout):
            handled += 1
        return handled

    def _serve_one(self, timeout: float) -> bool:
        """Answer one request, waiting up to ``timeout`` s for it; False when none came."""
        self._connections.enforce()
        if timeout > 0:
            # A receive that waits (a receive timeout set only when the wait changes) costs less
            # than a poll and then a receive: the poll builds and reads its item list every call.
            wait_ms = max(1, round(timeout * 1000))
            if wait_ms != self._wait_ms:
                self.socket.setsockopt(_RCVTIMEO, wait_ms)
                self._wait_ms = wait_ms
            frames = _receive(self.socket, 0)
        else:  # without a wait, a look at the socket's events costs less than a receive that fails
            frames = _receive(self.socket) if readable(self.socket) else None
        if frames is None:
            return False
        self._handle(frames)
        return True

    def stop(self) -> None:
        self._stopping.set()

    @property
    def stopping(self) -> bool:
        return self._stopping.is_set()

    def close(self) -> None:
        if self.registration is not None:
            self.registration.stop()
            self.registration = None
        if not self.socket.closed:
            self._connections.close()
            self.socket.close(linger=0)
        log.info("%s %r stopped", self.kind, self.name)

    def install_signal_handlers(self) -> None:
        def on_signal(signum: int, _frame: object) -> None:
            log.info("%s %r got signal %d: stopping", self.kind, self.name, signum)
            self.stop()

        signal.signal(signal.SIGTERM, on_signal)
        signal.signal(signal.SIGINT, on_signal)

    # --- dispatch ---

    def _handle(self, frames: list[zmq.Frame]) -> None:
        if len(frames) < 2:
            log.warning("dropped a message of %d frame(s): no routing id", len(frames))
            return
        self._connections.seen(frames[-1])
        self.peer = self._peer_of(frames[-1])
        reply = self.dispatch(frames[-1].bytes)
        routing = [frame.bytes for frame in frames[:-1]]
        if isinstance(reply, Pending):
            reply._send_with(lambda data: self._send_reply(routing, data))
        else:
            self._send_reply(routing, reply)

    def _send_reply(self, routing: list[bytes], reply: bytes) -> None:
        try:
            for frame in routing:  # the routing id(s), then the reply
                self.socket.send(frame, _NOBLOCK_MORE)
            self.socket.send(reply, NOBLOCK)
        except zmq.ZMQError as exc:
            log.warning("could not send a reply: %s", exc)

    def dispatch(self, payload: bytes) -> bytes | Pending:
        """One request frame in, one reply frame out (or the Pending that will send it); never raises."""
        try:
            req = self._codec.parse_request(payload)
        except ProtocolError as exc:
            return self._codec.error(self._codec.request_id_of(payload), "ProtocolError", str(exc))
        try:
            result = self._call(req.op, req.args)
            if isinstance(result, Pending):
                result._encode_with(lambda value: self._codec.reply(req.id, value), partial(self._error_reply, req.id))
                return result
            return self._codec.reply(req.id, result)
        except HrpsimError as exc:
            return self._error_reply(req.id, exc)
        except Exception as exc:  # a bug in an operation must not kill the service
            log.exception("operation %r failed", req.op)
            return self._codec.error(req.id, type(exc).__name__, f"{req.op}: {exc}")

    def _error_reply(self, req_id: int | None, exc: HrpsimError) -> bytes:
        details = exc.to_wire()  # type, message and what makes the error usable: field, problems
        return self._codec.error(req_id, details.pop("type"), details.pop("message"), **details)

    def _call(self, op: str, args: dict[str, Any]) -> Any:
        fn = self._ops.get(op)
        if fn is None:
            raise RequestError(f"unknown operation {op!r}; this {self.kind} offers: {', '.join(sorted(self._ops))}")
        role = self._roles.get(op, "admin")
        if not self.peer.has(role):  # the message is made only for a refusal
            self.peer.require(role, f"{self.kind} operation {op!r}")
        self._params[op].check(op, args)
        return fn(**args)

    def _ping(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": self.kind,
            "version": PROTOCOL_VERSION,
            "pid": os.getpid(),
            "time": time.time(),
        }

    def _quit(self) -> bool:
        self.stop()
        return True
