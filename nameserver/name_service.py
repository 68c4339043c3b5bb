"""The nameserver process: ``hrpsim run nameserver [--bind ADDR] [--ttl S]``."""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path
from typing import Any

from hrpsim.cli_options import BIND, add_security_options
from hrpsim.errors import HrpsimError
from hrpsim.logs import setup_logging
from hrpsim.nameserver.operations import NAMESERVER
from hrpsim.nameserver.registry import Registry
from hrpsim.naming import nameserver_address
from hrpsim.rpc import Service


class NameServer(Service):
    kind = "nameserver"
    declared = NAMESERVER  # nameserver/operations.py
    max_request_bytes = 64 * 1024  # a name, an endpoint and a little metadata

    def __init__(self, *, bind: str, ttl: float = 3.0, **kwargs: Any) -> None:
        self.registry = Registry(ttl=ttl)
        super().__init__("nameserver", bind=bind, register=False, **kwargs)

    def op_register(self, name: Any, kind: Any, endpoint: Any, owner: Any, metadata: Any = None) -> dict[str, Any]:
        if kind != "controller":  # a key that may run controllers must not pose as a service
            self.peer.require("service", f"registering {name!r} as a {kind}")
        return self.registry.register(name, kind, endpoint, owner, {} if metadata is None else metadata, self.peer.name)

    def op_heartbeat(self, name: Any, owner: Any) -> dict[str, Any]:
        return self.registry.heartbeat(name, owner, self.peer.name)

    def op_unregister(self, name: Any, owner: Any) -> bool:
        return self.registry.unregister(name, owner, self.peer.name)

    def op_list(self, kind: Any = None) -> list[dict[str, Any]]:
        return self.registry.list(kind)

    def on_idle(self) -> None:
        for name in self.registry.expire():
            logging.getLogger("hrpsim.nameserver").info("%s expired (no heartbeat)", name)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="hrpsim run nameserver", description="Run the hrpsim nameserver.")
    BIND.add(
        parser,
        default=None,
        help="address to bind (default: $HRPSIM_NAMESERVER or tcp://127.0.0.1:2809); "
        "'tcp://HOST:*' binds an ephemeral port",
    )
    add_security_options(parser)
    parser.add_argument("--ttl", type=float, default=3.0, help="seconds a registration lives without heartbeat")
    parser.add_argument(
        "--endpoint-file", type=Path, help="write the endpoint actually bound to this file once serving"
    )
    args = parser.parse_args(argv)
    setup_logging("nameserver")
    try:
        server = NameServer(bind=nameserver_address(args.bind), ttl=args.ttl)
    except HrpsimError as exc:  # cannot bind, or may not (a wide bind without keys)
        print(f"hrpsim run nameserver: {exc}", file=sys.stderr)
        return 1
    if args.endpoint_file:
        tmp = args.endpoint_file.with_suffix(".tmp")
        tmp.write_text(server.endpoint + "\n")
        tmp.rename(args.endpoint_file)
    print(f"nameserver serving at {server.endpoint}", flush=True)
    server.serve_forever()
    return 0
