"""The simulator's connection to the collision service, kept through the service's restarts.

:class:`ServiceLink` finds the service through the nameserver, connects and registers the world
with it (``register``, given by the caller). A call that finds the service gone (it died, or hangs
past the request timeout) waits up to ``wait_s`` for a collision service to be registered under
the same name again (``hrpsim launch`` restarts it; the new one registers once the dead one's
entry has expired, one TTL), connects to it, registers the world again and makes the call again.
The collision service keeps nothing but what the simulator registered and each query's poses, so
the answer is the one the lost service would have given.

While it waits, ``waiting.serve`` (set by the simulator) is called every :data:`POLL_S`, so the
simulator answers its own requests and takes in its controllers' answers; it may raise
:class:`SimulationError` (a quit) to end the wait.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from hrpsim.client import Client
from hrpsim.errors import NotFound, PeerGone, SimulationError, Timeout
from hrpsim.naming import NameClient
from hrpsim.project import COLLISION_WAIT_S

POLL_S = 0.02  # between looks for the new service, and between answers to the simulator's requests
NAMESERVER_TIMEOUT = 0.25  # s per nameserver request while waiting: it answers in milliseconds

log = logging.getLogger("hrpsim.simserver.remote_contacts")


class Waiting:
    """What the simulator does while a tick waits for the service: ``serve(what)``, or nothing.

    A holder of its own, not a reference to the engine: the contact generator must not point back
    at the world (see OdeEngine.release)."""

    def __init__(self) -> None:
        self.serve: Callable[[str], None] | None = None


class ServiceLink:
    """``call(op, **args)`` on the collision service named ``service``, whichever process serves it."""

    def __init__(
        self,
        nameserver: str | None,
        service: str,
        register: Callable[[Client], None],
        *,
        timeout: float,
        wait_s: float = COLLISION_WAIT_S,
        waiting: Waiting | None = None,
    ) -> None:
        self.service = service
        self.label = f"collision service {service!r}"
        self._register = register
        self._timeout = timeout
        self.wait_s = wait_s
        self._waiting = waiting or Waiting()
        self._candidate: Client | None = None  # the endpoint being tried while waiting
        with NameClient(nameserver, timeout=timeout) as ns:
            self.nameserver = ns.address
            try:  # started beside the simulator (hrpsim launch starts them together): it may register later
                endpoint = ns.wait_for(service, wait_s)["endpoint"]
            except NotFound:
                raise SimulationError(
                    f"world collision is 'service' but no collision service named {service!r} "
                    f"registered with the nameserver at {ns.address} within {wait_s:g} s; start it with "
                    "`hrpsim run collision` (hrpsim launch does)"
                ) from None
        self.client = self._connect(endpoint)
        self.connected = True  # False once the service is lost for good (the client is closed)
        try:
            register(self.client)
        except BaseException:
            self.client.close()
            raise

    def call(self, op: str, **args: Any) -> Any:
        """``op`` answered by the service; if it is gone, by the one registered next (within ``wait_s``)."""
        lost_at: float | None = None
        while True:
            try:
                if self.client.dropped():  # it died between two calls: asking it would wait the whole timeout
                    raise PeerGone(f"{self.label} at {self.client.endpoint} went away")
                return self.client.call(op, **args)
            except (PeerGone, Timeout) as exc:
                if lost_at is None:  # one bound for the whole call, however often the service is lost
                    lost_at = time.monotonic()
                    log.warning(
                        "lost the %s (%s); waiting up to %g s for it to come back", self.label, exc, self.wait_s
                    )
                self._reconnect(lost_at)

    def close(self) -> None:
        self._drop_candidate()
        self.client.close()

    def release(self) -> None:
        """Forget the simulator's callbacks (the world is going away)."""
        self._waiting = Waiting()

    def _connect(self, endpoint: str) -> Client:
        return Client(endpoint, peer=self.label, timeout=self._timeout)

    def _reconnect(self, lost_at: float) -> None:
        self.client.close()
        self.connected = False
        try:
            with NameClient(self.nameserver, timeout=NAMESERVER_TIMEOUT) as ns:
                while (client := self._attempt(ns)) is None:
                    if time.monotonic() - lost_at >= self.wait_s:
                        raise SimulationError(
                            f"no contacts from the {self.label}: it went away and no collision service "
                            f"registered as {self.service!r} with the nameserver at {self.nameserver} "
                            f"within {self.wait_s:g} s"
                        )
                    self._serve()
        finally:
            self._drop_candidate()
        self.client, self.connected = client, True
        log.info(
            "the collision service is back at %s (after %.1f s); the world is registered with it again",
            client.endpoint,
            time.monotonic() - lost_at,
        )

    def _attempt(self, ns: NameClient) -> Client | None:
        """One look: the registered endpoint answers, and takes the world's bodies and pairs."""
        try:
            endpoint = ns.endpoint_of(self.service)
        except (NotFound, PeerGone, Timeout):  # not registered again yet, or the nameserver restarts too
            time.sleep(POLL_S)
            return None
        if self._candidate is None or self._candidate.endpoint != endpoint:
            self._drop_candidate()
            self._candidate = self._connect(endpoint)
        try:  # the dead one's entry stays until it expires: its endpoint answers nothing meanwhile
            self._candidate.call("ping", timeout=POLL_S)
        except (PeerGone, Timeout):
            return None  # the same client tries again: a connection under way is not started over
        try:
            self._register(self._candidate)
        except (PeerGone, Timeout):  # lost again while registering
            self._drop_candidate()
            return None
        client, self._candidate = self._candidate, None
        return client

    def _drop_candidate(self) -> None:
        if self._candidate is not None:
            self._candidate.close()
            self._candidate = None

    def _serve(self) -> None:
        if self._waiting.serve is not None:
            self._waiting.serve(self.label)
