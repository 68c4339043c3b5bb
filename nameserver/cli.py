"""``hrpsim ns list [--nameserver ADDR] [--json]``: what is registered."""

from __future__ import annotations

import argparse
import json
import sys

from hrpsim.cli_options import add_everywhere, nameserver_option
from hrpsim.errors import HrpsimError
from hrpsim.naming import NameClient


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="hrpsim ns", description="Query the nameserver.")
    sub = parser.add_subparsers(dest="command", required=True)
    ls = sub.add_parser("list", help="list registered services")
    ls.add_argument("--kind", help="only services of this kind")
    ls.add_argument("--json", action="store_true", help="print JSON")
    add_everywhere(
        parser,
        [ls],
        [
            nameserver_option(),
            (("--timeout",), {"type": float, "default": 2.0, "help": "seconds to wait for the answer"}),
        ],
    )
    args = parser.parse_args(argv)
    try:
        with NameClient(args.nameserver, timeout=args.timeout) as ns:
            entries = ns.list(args.kind)
    except HrpsimError as exc:
        print(f"hrpsim ns: {exc}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(entries, indent=2))
        return 0
    if not entries:
        print("(nothing registered)")
    for e in entries:
        print(f"{e['name']:<24} {e['kind']:<12} {e['endpoint']:<32} expires in {e['expires_in']:.1f}s")
    return 0
