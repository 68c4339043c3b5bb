"""The ``hrpsim`` command: one entry point, each subcommand owned by the package it belongs to.

The table maps a word to ``module:function``; the function takes the rest of the argument list
and returns the exit status. Modules are imported only when their command runs, so a command
starts fast and a missing optional piece breaks only its own command.
"""

from __future__ import annotations

import importlib
import sys

COMMANDS: dict[str, tuple[str, str]] = {
    "launch": ("hrpsim.launcher", "start and supervise the stack of a project file"),
    "run": ("", "run one component by hand: " + ", ".join(
        ["nameserver", "modelloader", "simserver", "collision", "hil"])),
    "ns": ("hrpsim.nameserver.cli", "query the nameserver (ns list)"),
    "model": ("hrpsim.modelloader.cli", "inspect or convert a model file (model info, model convert)"),
    "controller": ("hrpsim.controllers.runner", "run a controller program against a simulator"),
    "replay": ("hrpsim.recording.replay", "re-run a recorded run and check it reproduces (or try another controller)"),
    "plot": ("hrpsim.recording.plot", "plot a joint, sensor, root or controller of a recorded run"),
    "view": ("hrpsim.viewer.app", "a 3D view of a recording or of a running simulation in the browser"),
}

COMPONENTS: dict[str, str] = {
    "nameserver": "hrpsim.nameserver.service",
    "modelloader": "hrpsim.modelloader.service",
    "simserver": "hrpsim.simserver.service",
    "collision": "hrpsim.collision.service",
    "hil": "hrpsim.hil.standin",  # a hardware-in-the-loop stand-in for the simulator
}


def _usage() -> str:
    lines = ["usage: hrpsim COMMAND [ARGS...]", "", "commands:"]
    lines += [f"  {name:<11} {help_}" for name, (_, help_) in COMMANDS.items()]
    lines += ["", "hrpsim COMMAND --help for each command's options."]
    return "\n".join(lines)


def _call(module: str, argv: list[str]) -> int:
    return int(importlib.import_module(module).main(argv) or 0)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(_usage())
        return 0 if argv else 2
    if argv[0] == "--version":
        from hrpsim import __version__

        print(f"hrpsim {__version__}")
        return 0
    command, rest = argv[0], argv[1:]
    if command == "run":
        if not rest or rest[0] not in COMPONENTS:
            print(f"usage: hrpsim run {{{','.join(COMPONENTS)}}} [--nameserver ADDR] [--bind ADDR] ...",
                  file=sys.stderr)
            return 2
        return _call(COMPONENTS[rest[0]], rest[1:])
    if command not in COMMANDS:
        print(f"hrpsim: unknown command {command!r}\n\n{_usage()}", file=sys.stderr)
        return 2
    return _call(COMMANDS[command][0], rest)


if __name__ == "__main__":
    sys.exit(main())
