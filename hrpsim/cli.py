"""The ``hrpsim`` command: one entry point, each subcommand owned by the package it belongs to.

The table maps a word to ``module:function``; the function takes the rest of the argument list
and returns the exit status. Modules are imported only when their command runs, so a command
starts fast and a missing optional piece breaks only its own command.
"""

from __future__ import annotations

import importlib
import os
import signal
import sys

from hrpsim.cli_options import SECURITY, VALUE_OPTIONS, keys_value

COMMANDS: dict[str, tuple[str, str]] = {
    "launch": ("hrpsim.launcher", "start and supervise the stack of a project file"),
    "run": (
        "",
        "run one component by hand: " + ", ".join(["nameserver", "modelloader", "simserver", "collision", "hil"]),
    ),
    "ns": ("hrpsim.nameserver.cli", "query the nameserver (ns list)"),
    "model": ("hrpsim.modelloader.cli", "inspect or convert a model file (model info, model convert)"),
    "controller": ("hrpsim.controllers.runner", "run a controller program against a simulator"),
    "sim": (
        "hrpsim.simserver.control_cli",
        "control a running simulator: status, start, pause, step N, reset, snapshot, restore, push, stop",
    ),
    "keys": ("hrpsim.keys", "make CurveZMQ keys for a deployment (keys new DIR)"),
    "replay": ("hrpsim.simserver.replay", "re-run a recorded run and check it reproduces (or try another controller)"),
    "plot": ("hrpsim.recording.plot", "plot a joint, sensor, root or controller of a recorded run"),
    "view": ("hrpsim.viewer.app", "a 3D view of a recording or of a running simulation in the browser"),
    "sweep": ("hrpsim.sweep.cli", "run one project many times with parameters varied (sweep FILE, sweep report TABLE)"),
    "export": ("hrpsim.recording.export", "convert a recording for other tools (export ros2 RUN.mcap BAG/)"),
}

COMPONENTS: dict[str, str] = {
    "nameserver": "hrpsim.nameserver.name_service",
    "modelloader": "hrpsim.modelloader.loader_service",
    "simserver": "hrpsim.simserver.sim_service",
    "collision": "hrpsim.collision.collision_service",
    "hil": "hrpsim.hil.standin",  # a hardware-in-the-loop stand-in for the simulator
}


def _usage() -> str:
    lines = ["usage: hrpsim COMMAND [ARGS...]", "", "commands:"]
    lines += [f"  {name:<11} {help_}" for name, (_, help_) in COMMANDS.items()]
    lines += [
        "",
        "hrpsim COMMAND --help for each command's options; hrpsim --version for the version.",
        "Every command also takes --keys DIR (CurveZMQ keys: hrpsim keys new DIR), --key NAME",
        "(which pair in DIR) and --insecure (bind beyond loopback without keys, on a closed network).",
    ]
    return "\n".join(lines)


def take_security_options(argv: list[str]) -> list[str]:
    """``argv`` without --keys/--key/--insecure (hrpsim.cli_options.SECURITY), which go to the
    environment (for children too)."""
    options = {flag: option for option in SECURITY for flag in option.flags}
    rest: list[str] = []
    args = iter(argv)
    for arg in args:
        name, eq, value = arg.partition("=")
        option = options.get(name)
        if option is None:
            rest.append(arg)
            continue
        if option.takes_value:
            value = value if eq else next(args, "")
            if not value:
                raise ValueError(f"{name} needs a value")
        os.environ[option.env] = keys_value(option.env, value)
    return rest


def word_first(argv: list[str]) -> list[str]:
    """The arguments with the first word (a command, or ``hrpsim run``'s component) first: options
    written before it (``hrpsim --nameserver X ns list``, ``hrpsim run --nameserver X simserver``)
    go after it, as if written there."""
    i = 0
    while i < len(argv) and argv[i].startswith("-"):
        i += 2 if argv[i] in VALUE_OPTIONS else 1
    if i == 0 or i >= len(argv):
        return argv
    return [argv[i], *argv[:i], *argv[i + 1 :]]


def _call(module: str, argv: list[str]) -> int:
    return int(importlib.import_module(module).main(argv) or 0)


def main(argv: list[str] | None = None) -> int:
    """Run one command. A reader that stops early (``hrpsim model info X | head``) ends the
    command quietly, with the status a shell gives a process killed by SIGPIPE; so does Ctrl-C
    that comes before the command has set up its own handling (while it imports), with SIGINT's."""
    try:
        status = _dispatch(list(sys.argv[1:] if argv is None else argv))
        sys.stdout.flush()  # inside the try: a closed pipe shows here, not at the interpreter's exit
        return status
    except BrokenPipeError:
        # Point stdout at /dev/null so the interpreter's final flush does not fail a second time.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 128 + signal.SIGPIPE
    except KeyboardInterrupt:
        print("hrpsim: interrupted", file=sys.stderr)
        return 128 + signal.SIGINT


def _dispatch(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        print(_usage())
        return 0 if argv else 2
    if argv[0] == "--version":
        from hrpsim import __version__

        print(f"hrpsim {__version__}")
        return 0
    try:
        argv = take_security_options(argv)
    except ValueError as exc:
        print(f"hrpsim: {exc}", file=sys.stderr)
        return 2
    argv = word_first(argv)
    if not argv:
        print(_usage(), file=sys.stderr)
        return 2
    command, rest = argv[0], argv[1:]
    if command == "run":
        rest = word_first(rest)
        if not rest or rest[0] not in COMPONENTS:
            print(
                f"usage: hrpsim run {{{','.join(COMPONENTS)}}} [--nameserver ADDR] [--bind ADDR] ...", file=sys.stderr
            )
            return 2
        return _call(COMPONENTS[rest[0]], rest[1:])
    if command not in COMMANDS:
        print(f"hrpsim: unknown command {command!r}\n\n{_usage()}", file=sys.stderr)
        return 2
    if command == "launch":  # a Ctrl-C during its imports still ends with a summary
        from hrpsim import interrupts

        interrupts.hold()
    return _call(COMMANDS[command][0], rest)


if __name__ == "__main__":
    sys.exit(main())
