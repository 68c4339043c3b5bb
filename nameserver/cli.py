"""``hrpsim ns list|resolve NAME [--nameserver ADDR] [--json]``: what is registered.

The subcommands are the nameserver's operations that have a command-line form
(nameserver/operations.py), with their arguments as declared there."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from hrpsim.cli_options import NAMESERVER, Option, add_everywhere
from hrpsim.errors import HrpsimError
from hrpsim.nameserver.operations import NAMESERVER as OPERATIONS
from hrpsim.naming import NameClient
from hrpsim.operations import add_subcommands, request

CLIENT_OPTIONS = (
    NAMESERVER,
    Option(("--timeout",), "seconds to wait for the answer", 2.0, float),
    Option(("--json",), "print JSON", flag=True),
)


def _entries(entries: list[dict[str, Any]]) -> str:
    if not entries:
        return "(nothing registered)"
    return "\n".join(
        f"{e['name']:<24} {e['kind']:<12} {e['endpoint']:<32} expires in {e['expires_in']:.1f}s" for e in entries
    )


def main(argv: list[str] | None = None) -> int:
    top = argparse.ArgumentParser(prog="hrpsim ns", description="Query the nameserver.")
    words, subparsers = add_subcommands(top, OPERATIONS)
    add_everywhere(top, subparsers, CLIENT_OPTIONS)
    args = top.parse_args(argv)
    op = words[args.command]
    try:
        with NameClient(args.nameserver, timeout=args.timeout) as ns:
            result = ns.call(op.name, **request(op, args))
    except HrpsimError as exc:
        print(f"hrpsim ns {args.command}: {exc}", file=sys.stderr)
        return 1
    if args.json or not isinstance(result, list):
        print(json.dumps(result, indent=2))
    else:
        print(_entries(result))
    return 0
