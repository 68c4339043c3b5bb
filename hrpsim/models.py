"""Asking the modelloader service for a body: what other components use instead of reading
model files themselves."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from hrpsim.bodyinfo import Body
from hrpsim.client import Client
from hrpsim.errors import PeerGone
from hrpsim.naming import NameClient

DEFAULT_LOAD_TIMEOUT = 60.0  # a large model (house.wrl, 583 KB) parses in well under this
CONNECT_TIMEOUT = 2.0  # a registered modelloader that accepts no connection within this is gone


def fetch_body(
    path: str | Path,
    *,
    nameserver: str | None = None,
    options: dict[str, Any] | None = None,
    timeout: float = DEFAULT_LOAD_TIMEOUT,
    service: str = "modelloader",
    wait: float = 10.0,
    exclude: str = "",
) -> Body:
    """Load ``path`` through the modelloader service registered as ``service``.

    The path is made absolute here, since the service may run in another directory. Raises
    ModelError for a model that cannot be loaded, NotFound when no such service is registered,
    Timeout when it does not answer within ``timeout`` seconds, PeerGone when its registered
    address accepts no connection (it died). A service that is not registered yet is waited for
    up to ``wait`` seconds; so is one registered anew in place of ``exclude``, the endpoint of one
    that died (a PeerGone from here carries it as ``endpoint``).
    """
    text = os.fspath(path)
    absolute = text if text.startswith("file:") else os.path.abspath(text)
    with NameClient(nameserver, timeout=min(timeout, 5.0)) as ns:
        endpoint = ns.wait_for(service, wait, exclude=exclude)["endpoint"]
    with Client(endpoint, peer=service, timeout=timeout, connect_timeout=min(timeout, CONNECT_TIMEOUT)) as client:
        try:
            wire = client.call("load", path=absolute, options=options)
        except PeerGone as exc:
            exc.endpoint = endpoint  # type: ignore[attr-defined]
            raise
    return Body.from_wire(wire)
