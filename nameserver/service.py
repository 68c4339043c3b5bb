"""The nameserver process: ``hrpsim run nameserver [--bind ADDR] [--ttl S]``."""

from __future__ import annotations

import argparse
import logging
from pathlib import Path
from typing import Any

from hrpsim.logs import setup_logging
from hrpsim.nameserver.registry import Registry
from hrpsim.naming import nameserver_address
from hrpsim.service import Operation, Service


class NameServer(Service):
    kind = "nameserver"

    def __init__(self, *, bind: str, ttl: float = 3.0, **kwargs: Any) -> None:
        self.registry = Registry(ttl=ttl)
        super().__init__("nameserver", bind=bind, register=False, **kwargs)

    def operations(self) -> dict[str, Operation]:
        r = self.registry
        return {
            "register": lambda name, kind, endpoint, owner, metadata=None: r.register(
                name, kind, endpoint, owner, {} if metadata is None else metadata
            ),
            "heartbeat": r.heartbeat,
            "unregister": r.unregister,
            "resolve": r.resolve,
            "list": lambda kind=None: r.list(kind),
        }

    def on_idle(self) -> None:
        for name in self.registry.expire():
            logging.getLogger("hrpsim.nameserver").info("%s expired (no heartbeat)", name)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="hrpsim run nameserver", description="Run the hrpsim nameserver.")
    parser.add_argument("--bind", help="address to bind (default: $HRPSIM_NAMESERVER or tcp://127.0.0.1:2809); "
                        "'tcp://HOST:*' binds an ephemeral port")
    parser.add_argument("--ttl", type=float, default=3.0, help="seconds a registration lives without heartbeat")
    parser.add_argument("--endpoint-file", type=Path,
                        help="write the endpoint actually bound to this file once serving")
    args = parser.parse_args(argv)
    setup_logging("nameserver")
    server = NameServer(bind=nameserver_address(args.bind), ttl=args.ttl)
    if args.endpoint_file:
        tmp = args.endpoint_file.with_suffix(".tmp")
        tmp.write_text(server.endpoint + "\n")
        tmp.rename(args.endpoint_file)
    print(f"nameserver serving at {server.endpoint}", flush=True)
    server.serve_forever()
    return 0
