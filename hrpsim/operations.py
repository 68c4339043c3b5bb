"""Operations declared once: each service operation is one :class:`Op`, and what serves, calls and
documents it comes from there, as circus declares each of its commands once.

An :class:`Op` holds an operation's name on the wire (and the other names it answers to), its
arguments (:class:`Arg`: name, meaning, default, command-line form), what it returns, the least role
a caller needs (hrpsim.security), whether it is answered while a tick waits for a controller, its
word on the command line and the method that serves it. From the declarations come:

- a service's dispatch and roles (hrpsim/rpc.py: ``Service.declared``);
- the command lines' subcommands and requests (:func:`add_subcommands`, :func:`request`:
  ``hrpsim sim ...`` in simserver/control_cli.py, ``hrpsim ns ...`` in nameserver/cli.py);
- docs/protocol.md's tables of operations (:func:`table`, between ``<!-- operations: NAME -->`` and
  ``<!-- end operations -->``; tests/kernel/test_operations.py holds the page to the declarations).

Adding an operation to the simulator is one declaration in simserver/operations.py plus the World
method it names (docs/architecture.md).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any


class _Required:
    def __repr__(self) -> str:
        return "required"


REQUIRED: Any = _Required()  # an argument the caller must give


@dataclass(frozen=True)
class Arg:
    """One argument of an operation. ``cli``: its form on the command line (None: not there; ``""``:
    a positional; ``"--flag"``: an option), read with ``type``, ``count`` values (a vector: 3);
    ``cli_default``: the command line's default where it differs from the operation's."""

    name: str
    doc: str = ""
    default: Any = REQUIRED
    cli: str | None = None
    type: Callable[[str], Any] | None = None
    count: int = 1
    metavar: str | None = None
    cli_default: Any = REQUIRED

    @property
    def required(self) -> bool:
        return self.default is REQUIRED

    def text(self) -> str:
        """The argument as the tables of operations show it."""
        return f"`{self.name}` ({self.doc})" if self.doc else f"`{self.name}`"


@dataclass(frozen=True)
class Op:
    """One operation of a service (see the module's docstring)."""

    name: str
    doc: str
    args: tuple[Arg, ...] = ()
    result: str = ""
    role: str = "admin"  # the least role a caller's key needs (hrpsim.keys.ROLES)
    within_tick: bool = False  # answered while a tick waits for a controller or a service
    cli: str | None = None  # its word on the command line (None: not there)
    method: str = ""  # the serving method, a dotted path from the service ("world.status"); default: the name
    also: tuple[str, ...] = ()  # other names it answers to
    cli_doc: str = ""  # the command line's help where the wire's doc says more than a shell needs

    @property
    def names(self) -> tuple[str, ...]:
        return (self.name, *self.also)

    def serving(self, service: object) -> Callable[..., Any]:
        """The callable that serves this operation on ``service``."""
        target: Any = service
        for part in (self.method or self.name).split("."):
            target = getattr(target, part)
        return target


# What every service answers (hrpsim/rpc.py).
PING = Op(
    "ping",
    "who answers: the service's name, kind, protocol version, process id and clock",
    result="`{name, kind, version, pid, time}`",
    role="observer",
    within_tick=True,
    method="_ping",
)
QUIT = Op("quit", "stop serving, after replying", result="true", within_tick=True, method="_quit")
EVERY_SERVICE = (PING, QUIT)


# --- the command line ---


def add_subcommands(
    parser: argparse.ArgumentParser, ops: Iterable[Op], *, dest: str = "command"
) -> tuple[dict[str, Op], list[argparse.ArgumentParser]]:
    """A subcommand per operation with a command-line word, its arguments as the declarations say:
    (word -> operation, the subcommands' parsers)."""
    sub = parser.add_subparsers(dest=dest, required=True, metavar="COMMAND")
    words: dict[str, Op] = {}
    parsers = []
    for op in ops:
        if op.cli is None:
            continue
        words[op.cli] = op
        help_ = op.cli_doc or op.doc
        command = sub.add_parser(op.cli, help=help_, description=help_[:1].upper() + help_[1:] + ".")
        for arg in op.args:
            _add_argument(command, arg)
        parsers.append(command)
    return words, parsers


def _dest(arg: Arg) -> str:
    """Where the command line keeps an operation's argument: apart from the command's own options
    (``hrpsim sim snapshot NAME`` has a ``name`` and the simulator's ``--name``)."""
    return f"op_{arg.name}"


def _add_argument(parser: argparse.ArgumentParser, arg: Arg) -> None:
    if arg.cli is None:
        return
    default = arg.default if arg.cli_default is REQUIRED else arg.cli_default
    settings: dict[str, Any] = {"type": arg.type, "help": arg.doc or None}
    if arg.count > 1:
        settings["nargs"] = arg.count
    if arg.cli == "":  # a positional: its values in one name (argparse cannot show a tuple of them)
        settings["metavar"] = arg.metavar or arg.name.upper()
        if not arg.required:
            settings.update(nargs="?", default=default)
        parser.add_argument(_dest(arg), **settings)
        return
    if arg.count > 1 and arg.metavar:  # an option's values, each named
        settings["metavar"] = tuple(arg.metavar.split())
    else:
        settings["metavar"] = arg.metavar or arg.name.upper()
    if arg.required:
        settings["required"] = True
    else:
        settings["default"] = default
    parser.add_argument(arg.cli, dest=_dest(arg), **settings)


def request(op: Op, args: argparse.Namespace) -> dict[str, Any]:
    """The operation's arguments as the command line gave them (its defaults where it gave none)."""
    return {arg.name: getattr(args, _dest(arg)) for arg in op.args if arg.cli is not None}


# --- the documentation ---


def table(ops: Iterable[Op], *, within_tick: bool = False) -> str:
    """The Markdown table of these operations, as docs/protocol.md shows them: op (and the names it
    also answers to), args, what it does, result, role, and whether it is answered while a tick waits."""
    head = ["op", "args", "what it does", "result", "role"] + (["while a tick waits"] if within_tick else [])
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for op in ops:
        names = ", ".join(f"`{name}`" for name in op.names)
        args = ", ".join(arg.text() for arg in op.args)
        row = [names, args, op.doc, op.result, op.role] + (["yes" if op.within_tick else ""] if within_tick else [])
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def replace_table(text: str, marker: str, generated: str) -> str:
    """``text`` with the table between ``<!-- operations: MARKER -->`` and ``<!-- end operations -->``
    replaced by ``generated``; ValueError when the markers are missing."""
    begin, end = f"<!-- operations: {marker} -->", "<!-- end operations -->"
    start = text.index(begin) + len(begin)
    stop = text.index(end, start)
    return f"{text[:start]}\n{generated}\n{text[stop:]}"
