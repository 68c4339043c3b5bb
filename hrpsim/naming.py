"""Finding services: the nameserver's address, a client for it, and a registration that keeps
itself alive by heartbeating (and re-registers when a restarted nameserver has forgotten it)."""

from __future__ import annotations

import logging
import os
import secrets
import socket
import threading
import time
from pathlib import Path
from typing import Any

import zmq

from hrpsim.client import Client
from hrpsim.errors import AccessDenied, HrpsimError, NotFound

DEFAULT_NAMESERVER = "tcp://127.0.0.1:2809"
ENV_NAMESERVER = "HRPSIM_NAMESERVER"
ENV_ADVERTISE_HOST = "HRPSIM_ADVERTISE_HOST"
ENV_REGISTRATION_OWNER = "HRPSIM_REGISTRATION_OWNER"  # the owner secret a process's registrations use
ADDRESS_FILE = "file:"  # a nameserver address that names the file the address will be written to
ADDRESS_FILE_WAIT_S = 60.0
ADDRESS_FILE_POLL_S = 0.01
WAIT_POLL_S = 0.02  # between asks of a name that is not registered yet: one is starting beside this process
_WILDCARD_HOSTS = ("0.0.0.0", "*", "[::]", "::")

log = logging.getLogger("hrpsim.naming")


def nameserver_address(explicit: str | None = None) -> str:
    """``--nameserver`` if given, else ``$HRPSIM_NAMESERVER``, else OpenHRP's port 2809.

    ``file:PATH`` is the address written to the file PATH, waited for while the file is not there
    (up to ADDRESS_FILE_WAIT_S): ``hrpsim launch`` starts its processes beside their nameserver so,
    and writes the file once the nameserver serves."""
    address = explicit or os.environ.get(ENV_NAMESERVER) or DEFAULT_NAMESERVER
    if address.startswith(ADDRESS_FILE):
        return address_from_file(Path(address[len(ADDRESS_FILE) :]))
    return address


def address_from_file(path: Path, timeout: float = ADDRESS_FILE_WAIT_S) -> str:
    """The address in ``path`` once it is there; NotFound naming the file after ``timeout`` s."""
    deadline = time.monotonic() + timeout
    said = False
    while True:
        try:
            address = path.read_text().strip()
        except FileNotFoundError:
            address = ""
        if address:
            return address
        if not said:
            log.info("waiting for the nameserver's address in %s", path)
            said = True
        if time.monotonic() >= deadline:
            raise NotFound(
                f"no nameserver address was written to {path} within {timeout:g} s (the process that "
                "started this one writes it once its nameserver serves: did it fail to start one?)"
            )
        time.sleep(ADDRESS_FILE_POLL_S)


def write_address_file(path: Path, address: str) -> None:
    """``address`` into ``path`` whole (a reader never sees half of it)."""
    part = path.with_name(path.name + ".part")
    part.write_text(address + "\n")
    part.replace(path)


def advertised(endpoint: str) -> str:
    """The endpoint others should connect to. A socket bound to every interface
    (``tcp://0.0.0.0:PORT``) is advertised at ``$HRPSIM_ADVERTISE_HOST``, else at this host's
    address, so a peer on another machine can reach it."""
    scheme, sep, rest = endpoint.partition("://")
    host, colon, port = rest.rpartition(":")
    if scheme != "tcp" or not sep or not colon or host not in _WILDCARD_HOSTS:
        return endpoint
    advertise = os.environ.get(ENV_ADVERTISE_HOST)
    if not advertise:
        try:
            advertise = socket.gethostbyname(socket.gethostname())
        except OSError:
            advertise = "127.0.0.1"
    return f"tcp://{advertise}:{port}"


def sibling_bind(bind: str, role: str) -> str:
    """Where a process's second socket binds, beside its main one: the same interface with a
    free port (tcp), or a path next to the main one (ipc), so that a process bound for other
    hosts is reachable on all its sockets."""
    scheme, sep, rest = bind.partition("://")
    if scheme == "tcp" and sep:
        host = rest.rpartition(":")[0] or rest
        return f"tcp://{host}:*"
    if scheme in ("ipc", "inproc") and sep:
        return f"{bind}.{role}"
    return bind


def new_owner() -> str:
    """A secret that proves who registered a name: the nameserver never shows it to anyone."""
    return secrets.token_hex(16)


class NameClient:
    """Typed calls to the nameserver."""

    def __init__(self, address: str | None = None, *, timeout: float = 2.0, context: zmq.Context | None = None):
        self.address = nameserver_address(address)
        self._client = Client(self.address, peer="nameserver", timeout=timeout, context=context)

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> NameClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def register(
        self, name: str, kind: str, endpoint: str, *, owner: str, metadata: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        return self._client.call(
            "register", name=name, kind=kind, endpoint=endpoint, owner=owner, metadata=metadata or {}
        )

    def call(self, op: str, **args: Any) -> Any:
        """Any of the nameserver's operations (nameserver/operations.py) by name."""
        return self._client.call(op, **args)

    def heartbeat(self, name: str, *, owner: str) -> dict[str, Any]:
        return self._client.call("heartbeat", name=name, owner=owner)

    def unregister(self, name: str, *, owner: str) -> None:
        self._client.call("unregister", name=name, owner=owner)

    def resolve(self, name: str, *, timeout: float | None = None) -> dict[str, Any]:
        """The entry for ``name``: {name, kind, endpoint, metadata, ...}; NotFound if absent."""
        return self._client.call("resolve", name=name, timeout=timeout)

    def wait_for(self, name: str, timeout: float, *, exclude: str = "") -> dict[str, Any]:
        """Like :meth:`resolve`, but waits up to ``timeout`` seconds for ``name`` to register:
        components started by hand start in any order. ``exclude``: an endpoint known to be dead,
        whose registration (until it expires, or its supervisor removes it) is not the answer."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                entry = self.resolve(name)
                if not exclude or entry["endpoint"] != exclude:
                    return entry
                problem = f"{name!r} is still registered at {exclude}, where nothing answers"
            except NotFound as exc:
                problem = str(exc)
            if time.monotonic() >= deadline:
                raise NotFound(f"{problem} (waited {timeout:g} s for it to register)")
            time.sleep(WAIT_POLL_S)

    def list(self, kind: str | None = None) -> list[dict[str, Any]]:
        return self._client.call("list", kind=kind)

    def endpoint_of(self, name: str) -> str:
        return self.resolve(name)["endpoint"]


class Registration:
    """Registers ``name`` and heartbeats it from a background thread until :meth:`stop`.

    The nameserver says how often to beat (a third of its TTL). When a beat is answered with
    NotFound (the nameserver restarted, or the entry expired), the name is registered again.
    An unreachable nameserver is logged and retried; it never stops the service.
    """

    TAKEN_RETRY_S = 0.1  # between tries at a name another process still holds (see start(wait_if_taken=True))

    def __init__(
        self,
        name: str,
        kind: str,
        endpoint: str,
        *,
        nameserver: str | None = None,
        metadata: dict[str, Any] | None = None,
        timeout: float = 2.0,
    ) -> None:
        self.name, self.kind, self.endpoint = name, kind, endpoint
        self.metadata = metadata or {}
        # a supervisor that gave this process its secret can remove the entry the moment it dies
        self.owner = os.environ.get(ENV_REGISTRATION_OWNER) or new_owner()
        self.address = nameserver_address(nameserver)
        self._timeout = timeout
        self._interval = 1.0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.registered = False

    def start(self, *, wait_if_taken: bool = False) -> None:
        """Register now (raising if the nameserver refuses), then keep the entry alive.

        ``wait_if_taken``: when another process holds the name, do not raise; take the name as soon
        as that process lets it go (it unregisters, or its entry expires), trying in the background.
        For a controller that the simulator attached in place of an older one of the same name: the
        old one still holds the name until it has stopped."""
        with NameClient(self.address, timeout=self._timeout) as ns:
            try:
                self._register(ns)
            except AccessDenied as exc:
                if not wait_if_taken:
                    raise
                log.info("%s; taking the name once that process lets it go", exc)
                self._interval = self.TAKEN_RETRY_S
        self._thread = threading.Thread(target=self._beat, name=f"heartbeat-{self.name}", daemon=True)
        self._thread.start()

    def stop(self, *, unregister: bool = True) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=self._timeout + 1.0)
        if unregister and self.registered:
            try:
                with NameClient(self.address, timeout=min(self._timeout, 1.0)) as ns:
                    ns.unregister(self.name, owner=self.owner)
            except HrpsimError as exc:
                log.info("could not unregister %s: %s", self.name, exc)

    def _note(self, reply: dict[str, Any]) -> None:
        self._interval = max(0.05, float(reply.get("ttl", 3.0)) / 3.0)

    def _register(self, ns: NameClient) -> None:
        self._note(ns.register(self.name, self.kind, self.endpoint, owner=self.owner, metadata=self.metadata))
        self.registered = True

    def _beat(self) -> None:
        ns = NameClient(self.address, timeout=self._timeout)
        try:
            while not self._stop.wait(self._interval):
                try:
                    if not self.registered:
                        self._take(ns)
                        continue
                    self._note(ns.heartbeat(self.name, owner=self.owner))
                except NotFound:
                    log.warning("nameserver at %s forgot %s; registering again", self.address, self.name)
                    self._reregister(ns)
                except HrpsimError as exc:
                    log.warning("heartbeat for %s failed: %s", self.name, exc)
                    ns.close()
                    ns = NameClient(self.address, timeout=self._timeout)
        finally:
            ns.close()

    def _reregister(self, ns: NameClient) -> None:
        try:
            self._register(ns)
        except HrpsimError as exc:
            log.warning("re-registering %s failed: %s", self.name, exc)

    def _take(self, ns: NameClient) -> None:
        """Another try at a name another process held (AccessDenied while it still does)."""
        try:
            self._register(ns)
        except AccessDenied:
            return
        log.info(
            "registered %s with the nameserver at %s (the process that held the name let it go)",
            self.name,
            self.address,
        )


def host_identity() -> str:
    """Who shares this machine's ipc:// sockets: the host name and, on Linux, the network namespace
    (processes in another namespace are another host as far as the stack is concerned)."""
    try:
        namespace = os.stat("/proc/self/ns/net").st_ino
    except OSError:
        namespace = 0
    return f"{socket.gethostname()}/{namespace}"
