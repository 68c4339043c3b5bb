"""The stack's services from inside a controller: ``self.services.call("collision", "scan", ...)``.

A controller may need more than its robot's state: the simulator's operations (``status``,
``forward_kinematics``, ...), the collision service's queries (``ray``, ``scan``, ``distance``), or
a service of its own. :class:`Services` finds each by its registered name through the nameserver and
calls it with a deadline; errors come back as the service raised them (RequestError, NotFound, ...)
and a service that is not registered or does not answer is a NotFound or Timeout naming it.
"""

from __future__ import annotations

from typing import Any

from hrpsim.client import Client
from hrpsim.errors import NotFound
from hrpsim.naming import NameClient

DEFAULT_TIMEOUT = 5.0


class Services:
    def __init__(self, nameserver: str | None) -> None:
        self.nameserver = nameserver
        self._clients: dict[str, Client] = {}

    def call(self, service: str, op: str, *, timeout: float = DEFAULT_TIMEOUT, **args: Any) -> Any:
        """Call ``op`` of the service registered as ``service``, waiting ``timeout`` s at most."""
        client = self._clients.get(service)
        if client is None:
            client = self._clients[service] = Client(self._endpoint(service, timeout), peer=service, timeout=timeout)
        return client.call(op, timeout=timeout, **args)

    def _endpoint(self, service: str, timeout: float) -> str:
        if self.nameserver is None:
            raise NotFound(
                f"no nameserver to find service {service!r} through: this controller runs without "
                "one (in process, from Python); call the engine or the Simulation directly"
            )
        with NameClient(self.nameserver, timeout=timeout) as ns:
            return ns.resolve(service)["endpoint"]

    def close(self) -> None:
        for client in self._clients.values():
            client.close()
        self._clients.clear()
