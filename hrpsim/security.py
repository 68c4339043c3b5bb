"""Who may talk to hrpsim's sockets, and as what: CurveZMQ with an allow-list and roles.

With keys (``$HRPSIM_KEYS``, ``--keys DIR``, or the project's ``security.keys``) every socket
hrpsim makes is encrypted and authenticated: a server socket checks each connecting key against
the folder's allow-list through a ZAP handler (one per zmq context), which names the peer to the
socket as ``role:name`` (its User-Id); a client socket proves its own pair and checks the
server's. A key that is not on the list never completes the handshake, so it gets nothing.

Each server socket has a domain with the least role it admits: ``service`` (any allowed key;
each operation then checks its own role), ``controllers`` (the controller hub: controller and
up), ``state`` (the state stream: any allowed key).

Without keys nothing is authenticated, so binding beyond loopback is refused unless
``--insecure`` (``$HRPSIM_INSECURE=1``) says the network is closed; every peer then has every role.
"""

from __future__ import annotations

import logging
import os
import threading
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import zmq
from zmq.utils import z85

from hrpsim.cli_options import ENV_INSECURE, ENV_KEY, ENV_KEYS
from hrpsim.errors import AccessDenied, ConfigError, RequestError
from hrpsim.keys import Grant, Identity, load_identity, rank, read_allowed

DOMAIN_ROLES = {"service": "observer", "controllers": "controller", "state": "observer"}
_LOOPBACK = ("127.0.0.1", "localhost", "[::1]", "::1", "lo")

log = logging.getLogger("hrpsim.security")


@dataclass(frozen=True)
class Peer:
    """The far end of a request, as its key's grant says (everything, without keys)."""

    name: str
    role: str
    robots: tuple[str, ...] = ()

    def has(self, role: str) -> bool:
        return rank(self.role) >= rank(role)

    def require(self, role: str, what: str) -> None:
        if not self.has(role):
            raise AccessDenied(
                f"{what} needs the {role} role; key {self.name!r} has {self.role} "
                f"(grant it with 'hrpsim keys new DIR --name NAME --role {role}')"
            )

    def may_drive(self, robot: str) -> bool:
        return not self.robots or robot in self.robots


UNAUTHENTICATED = Peer("anyone", "service")


def keys_folder() -> Path | None:
    folder = os.environ.get(ENV_KEYS)
    return Path(folder).expanduser() if folder else None


def insecure() -> bool:
    return os.environ.get(ENV_INSECURE, "") not in ("", "0")


@lru_cache(maxsize=4)
def _identity(folder: Path, name: str | None) -> Identity:
    return load_identity(folder, name)


def identity() -> Identity | None:
    """This process's key pair, or None without keys."""
    folder = keys_folder()
    return None if folder is None else _identity(folder, os.environ.get(ENV_KEY) or None)


def is_loopback(bind: str) -> bool:
    scheme, _, rest = bind.partition("://")
    if scheme in ("ipc", "inproc"):
        return True
    host = rest.rpartition(":")[0] or rest
    return host in _LOOPBACK or host.startswith("127.")


def check_bind(bind: str, who: str) -> None:
    """Refuse an unauthenticated socket that others on the network could reach."""
    if is_loopback(bind) or keys_folder() is not None:
        return
    if not insecure():
        raise ConfigError(
            f"{who}: refusing to bind {bind!r} without keys: anyone who can reach this host could drive "
            f"the robot. Make keys with 'hrpsim keys new DIR' and give every process --keys DIR (or "
            f"${ENV_KEYS}=DIR); on a closed network, --insecure binds anyway"
        )
    log.warning("%s binds %s WITHOUT authentication (--insecure): anyone who can reach it may do anything", who, bind)


def check_web_bind(host: str, port: int, who: str) -> None:
    """A web server (the 3D view, the Foxglove server) has no CurveZMQ: it binds beyond loopback only
    as our sockets may (keys, or --insecure), and then with a warning, since its clients are never
    authenticated whatever the keys."""
    bind = f"tcp://{host}:{port}"
    check_bind(bind, who)
    if not is_loopback(bind):
        log.warning(
            "%s on %s:%d is not authenticated: anyone who reaches it sees the run (docs/security.md)", who, host, port
        )


def serve_securely(sock: zmq.Socket, bind: str, domain: str, who: str) -> None:
    """Make ``sock`` a CURVE server of ``domain`` when keys are set; refuse a bare wide bind."""
    check_bind(bind, who)
    me = identity()
    if me is None:
        return
    _authenticator(sock.context, keys_folder())
    log.info("%s: CurveZMQ with the %r key; peers checked against %s", who, me.name, keys_folder() / "allowed")
    sock.curve_secretkey = me.secret
    sock.curve_publickey = me.public
    sock.curve_server = True
    sock.zap_domain = domain.encode()


def connect_securely(sock: zmq.Socket) -> None:
    """Make ``sock`` a CURVE client with this process's pair, when keys are set."""
    me = identity()
    if me is None:
        return
    sock.curve_secretkey = me.secret
    sock.curve_publickey = me.public
    sock.curve_serverkey = me.server_public


def peer_of(frame: zmq.Frame) -> Peer:
    """Who sent ``frame`` (received with ``copy=False`` on a socket made by :func:`serve_securely`)."""
    if identity() is None:
        return UNAUTHENTICATED
    try:
        user = frame.get("User-Id")
    except zmq.ZMQError:  # no metadata: not an authenticated connection
        return Peer("unknown", "observer")
    role, _, rest = str(user).partition(":")
    name, _, robots = rest.partition(":")
    return Peer(name, role, tuple(r for r in robots.split(",") if r))


def admit_controller(frame: zmq.Frame, robot: str, holder: Any | None) -> str:
    """The name of the key a controller's hello came with, when that key may drive ``robot``
    and take the controller's name (``holder``: who has it now); RequestError saying why not."""
    peer = peer_of(frame)
    if rank(peer.role) < rank("controller"):
        raise RequestError(f"hello: key {peer.name!r} has the {peer.role} role; attaching needs controller")
    if not peer.may_drive(robot):
        raise RequestError(
            f"hello field 'robot': key {peer.name!r} may drive only {', '.join(peer.robots)}, not {robot!r}"
        )
    if holder is not None and identity() is not None and holder.key != peer.name:
        raise RequestError(
            f"hello field 'controller': {holder.name!r} is attached with another key; "
            "only that key may attach under this name"
        )
    return peer.name


class _AllowList:
    """The folder's ``allowed`` file, read again whenever it changes (so a deleted line revokes)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._stamp: float | None = None
        self._grants: dict[bytes, Grant] = {}

    def get(self, key: bytes) -> Grant | None:
        try:
            stamp = (self.folder / "allowed").stat().st_mtime_ns
            if stamp != self._stamp:
                self._grants, self._stamp = read_allowed(self.folder), stamp
        except (OSError, ConfigError) as exc:
            log.error("allow-list unreadable, refusing every key until it is fixed: %s", exc)
            self._grants, self._stamp = {}, None
        return self._grants.get(key)


class _Gate:
    """The ZAP credentials check of one domain: an allowed key with at least the domain's role."""

    def __init__(self, allowed: _AllowList, domain: str) -> None:
        self.allowed, self.domain, self.least = allowed, domain, DOMAIN_ROLES[domain]

    def callback(self, _domain: str, key: bytes) -> bool:
        grant = self.allowed.get(key)
        ok = grant is not None and rank(grant.role) >= rank(self.least)
        if not ok:
            log.warning(
                "refused a %s connection from key %s (%s)",
                self.domain,
                key.decode(),
                "not on the allow-list" if grant is None else f"role {grant.role} < {self.least}",
            )
        return ok


@lru_cache(maxsize=1)
def _authenticator_class() -> type:
    """The ZAP handler's class, made on first use: pyzmq's authenticator module loads asyncio, which
    a process without keys never needs."""
    from zmq.auth.thread import ThreadAuthenticator

    class Authenticator(ThreadAuthenticator):
        def __init__(self, context: zmq.Context, folder: Path) -> None:
            super().__init__(context, log=logging.getLogger("hrpsim.security.zap"))
            self.allowed = _AllowList(folder)

        def curve_user_id(self, client_public_key: bytes) -> str:
            grant = self.allowed.get(z85.encode(client_public_key))
            return grant.user_id if grant is not None else "observer:unknown"

    return Authenticator


_AUTHENTICATORS: dict[int, Any] = {}  # context id -> its started Authenticator
_LOCK = threading.Lock()


def _authenticator(context: zmq.Context, folder: Path) -> Any:
    """The ZAP handler of ``context`` (one per context, started before its first CURVE server)."""
    with _LOCK:
        auth = _AUTHENTICATORS.get(id(context))
        if auth is None:
            auth = _authenticator_class()(context, folder)
            auth.start()
            allowed = auth.allowed
            for domain in DOMAIN_ROLES:
                auth.configure_curve_callback(domain, _Gate(allowed, domain))
            _AUTHENTICATORS[id(context)] = auth
        return auth
