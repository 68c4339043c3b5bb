"""``hrpsim sim status|start|pause|step N|reset|stop``: a running simulator, from the command line.

The simulator is found through the nameserver by its registered name (``--name``, default
``simserver``). ``start`` runs until the project's end time (or ``--until``) once the project's
controllers have attached; ``stop`` ends the simulator process (its controllers hear bye first).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from hrpsim.cli_options import add_everywhere, nameserver_option
from hrpsim.client import Client
from hrpsim.errors import HrpsimError
from hrpsim.naming import NameClient


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="hrpsim sim", description="Control a running simulator.")
    sub = parser.add_subparsers(dest="command", required=True)
    commands = [
        sub.add_parser("status", help="time, tick, running or not, what it waits for"),
        start := sub.add_parser("start", help="run (once the project's controllers have attached)"),
        sub.add_parser("pause", help="stop ticking; the state stays"),
        step := sub.add_parser("step", help="advance N ticks while paused"),
        sub.add_parser("reset", help="back to the project's initial state (while paused)"),
        sub.add_parser("summary", help="the run summary so far"),
        sub.add_parser("stop", help="end the simulator process"),
    ]
    start.add_argument("--until", type=float, help="simulated time to stop at (default: the project's end_time)")
    start.add_argument(
        "--wait",
        type=float,
        default=None,
        help="seconds to wait for the project's controllers (default: as long as it takes)",
    )
    step.add_argument("n", type=int, nargs="?", default=1)
    add_everywhere(
        parser,
        commands,
        [
            (("--name",), {"default": "simserver", "help": "the simulator's registered name (default %(default)s)"}),
            nameserver_option(),
            (("--timeout",), {"type": float, "default": 10.0, "help": "seconds to wait for each answer"}),
            (("--json",), {"action": "store_true", "help": "print the simulator's answer as JSON"}),
        ],
    )
    return parser


def _request(args: argparse.Namespace) -> tuple[str, dict[str, Any]]:
    if args.command == "start":
        return "start", {"until": args.until, "wait": args.wait}
    if args.command == "step":
        return "step", {"n": args.n}
    if args.command == "stop":
        return "quit", {}
    return args.command, {}


def _describe(result: Any) -> str:
    if not isinstance(result, dict) or "tick" not in result:
        return json.dumps(result, indent=2, default=str)
    state = "running" if result.get("running") else "finished" if result.get("finished") else "paused"
    waiting = result.get("waiting_for") or []
    text = f"t={result['time']:.4f} s, tick {result['tick']}, {state}"
    if waiting:
        text += f", waiting for {', '.join(waiting)}"
    if result.get("error"):
        text += f"; error: {result['error']}"
    return text


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    op, call_args = _request(args)
    try:
        with NameClient(args.nameserver, timeout=args.timeout) as ns:
            entry = ns.resolve(args.name)
        with Client(entry["endpoint"], peer=args.name, timeout=args.timeout) as client:
            result = client.call(op, **call_args)
    except HrpsimError as exc:
        print(f"hrpsim sim {args.command}: {exc}", file=sys.stderr)
        return 1
    print(json.dumps(result, indent=2, default=str) if args.json else _describe(result))
    return 0
