"""``hrpsim sim COMMAND``: a running simulator, from the command line.

The subcommands are the simulator's operations that have a command-line form (simserver/operations.py:
status, start, pause, step N, reset, snapshot, restore, summary, push, stop), with their arguments
as declared there. The simulator is found through the nameserver by its registered name (``--name``,
default ``simserver``). ``start`` runs until the end time (or ``--until``) once the project's
controllers have attached; ``stop`` ends the simulator process (its controllers hear bye first).
``push ROBOT LINK FX FY FZ --duration S [--at T] [--point X Y Z] [--torque TX TY TZ]`` pushes a link
(force in N, world frame; point in m, link frame; see docs/controllers.md).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from hrpsim.cli_options import NAMESERVER, Option, add_everywhere
from hrpsim.client import Client
from hrpsim.errors import HrpsimError
from hrpsim.naming import NameClient
from hrpsim.operations import Op, add_subcommands, request
from hrpsim.simserver.operations import SIMULATOR
from hrpsim.summary_report import format_summary

CLIENT_OPTIONS = (
    Option(("--name",), "the simulator's registered name (default %(default)s)", "simserver"),
    NAMESERVER,
    Option(("--timeout",), "seconds to wait for each answer", 10.0, float),
    Option(("--json",), "print the simulator's answer as JSON", flag=True),
)


def parser(ops: tuple[Op, ...] = SIMULATOR) -> tuple[argparse.ArgumentParser, dict[str, Op]]:
    """The command line of ``ops`` (the simulator's): the parser and each subcommand's operation."""
    top = argparse.ArgumentParser(prog="hrpsim sim", description="Control a running simulator.")
    words, subparsers = add_subcommands(top, ops)
    add_everywhere(top, subparsers, CLIENT_OPTIONS)
    return top, words


def describe(result: Any, asked: dict[str, Any]) -> str:
    """A reply in a line or two: a status, a snapshot kept, or JSON for anything else."""
    if not isinstance(result, dict) or "tick" not in result:
        return json.dumps(result, indent=2, default=str)
    if "snapshots" in result:
        kept = ", ".join(result["snapshots"])
        return f"snapshot {result['name']!r} at t={result['time']:.4f} s, tick {result['tick']} (kept: {kept})"
    state = result.get("status") or ("running" if result.get("running") else "paused")
    text = f"t={result['time']:.4f} s, tick {result['tick']}, {state}"
    waiting = result.get("waiting_for") or []
    if waiting:
        text += f", waiting for {', '.join(waiting)}"
    if result.get("error"):
        text += f"; error: {result['error']}"
    elif state == "ended" or result.get("finished"):
        text += f": {result.get('reason')}"
    stepped = result.get("stepped")
    if stepped is not None and stepped < asked.get("n", stepped):
        text += f"\n{stepped} of the {asked['n']} ticks asked were made: the run {result.get('reason')}"
    return text


def main(argv: list[str] | None = None, ops: tuple[Op, ...] = SIMULATOR) -> int:
    top, words = parser(ops)
    args = top.parse_args(argv)
    op = words[args.command]
    call_args = request(op, args)
    try:
        with NameClient(args.nameserver, timeout=args.timeout) as ns:
            entry = ns.resolve(args.name)
        with Client(entry["endpoint"], peer=args.name, timeout=args.timeout) as client:
            result = client.call(op.name, **call_args)
    except HrpsimError as exc:
        print(f"hrpsim sim {args.command}: {exc}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(result, indent=2, default=str))
    else:  # the summary reads as hrpsim launch prints it: one summary, one verdict
        print(format_summary(result) if args.command == "summary" else describe(result, call_args))
    return 0
