"""The options every command line shares, each declared once: where the nameserver is
(``--nameserver``), where a service binds and the name it registers (``--bind``, ``--name``), and
the keys (``--keys``, ``--key``, ``--insecure``: hrpsim.security). A main adds them with
:func:`add_service_options`, :func:`add_security_options` or an option's :meth:`Option.add`, so
their spelling, defaults and help are the same in every ``--help``.

The keys are taken out of any command line before it is parsed (``hrpsim.cli``) and passed on to
child processes through the environment; a main shows them in its ``--help`` and, when it is called
with them itself, applies them the same way.

Options of a command with subcommands are taken on either side of its subcommand:
``hrpsim sim --nameserver X status`` and ``hrpsim sim status --nameserver X`` mean the same (see
:func:`add_everywhere`).
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

DEFAULT_BIND = "tcp://127.0.0.1:*"  # where a service binds unless told: loopback, a port it is given
# The environment variables the keys are passed on in (hrpsim.security reads them).
ENV_KEYS = "HRPSIM_KEYS"
ENV_KEY = "HRPSIM_KEY"
ENV_INSECURE = "HRPSIM_INSECURE"


@dataclass(frozen=True)
class Option:
    """One command-line option: its flags, help, default and type; ``flag``: it takes no value;
    ``env``: the environment variable it is passed on in (the keys)."""

    flags: tuple[str, ...]
    help: str
    default: Any = None
    type: Callable[[str], Any] | None = None
    flag: bool = False
    env: str | None = None

    @property
    def takes_value(self) -> bool:
        return not self.flag

    def settings(self, **overrides: Any) -> dict[str, Any]:
        if self.env is not None:  # given to a main itself: into the environment, as hrpsim.cli does
            settings: dict[str, Any] = {"action": _ToEnvironment, "nargs": 0 if self.flag else None}
            return {**settings, "help": self.help, "env": self.env, **overrides}
        if self.flag:
            return {"action": "store_true", "help": self.help, **overrides}
        return {"default": self.default, "type": self.type, "help": self.help, **overrides}

    def add(self, parser: argparse.ArgumentParser | argparse._ArgumentGroup, **overrides: Any) -> None:
        """Add it to ``parser``; ``overrides``: a main's own default or help (``--name``'s default)."""
        parser.add_argument(*self.flags, **self.settings(**overrides))


class _ToEnvironment(argparse.Action):
    def __init__(self, option_strings: list[str], dest: str, env: str, **kwargs: Any) -> None:
        self.env = env
        super().__init__(option_strings, dest, **kwargs)

    def __call__(self, parser: Any, namespace: Any, values: Any, option_string: str | None = None) -> None:
        os.environ[self.env] = keys_value(self.env, values)


def keys_value(env: str, value: Any) -> str:
    """What the environment holds for a key option given ``value`` (a folder made absolute)."""
    if env == ENV_INSECURE:
        return "1"
    return os.path.abspath(value) if env == ENV_KEYS else str(value)


NAMESERVER = Option(("--nameserver",), "nameserver address (default: $HRPSIM_NAMESERVER or tcp://127.0.0.1:2809)")
BIND = Option(("--bind",), "address to serve requests on (default: %(default)s)", DEFAULT_BIND)
NAME = Option(("--name",), "name to register with the nameserver (default: %(default)s)")
KEYS = Option(("--keys",), "folder of CurveZMQ keys (hrpsim keys new DIR; docs/security.md)", env=ENV_KEYS)
KEY = Option(("--key",), "which key pair of the folder this process uses", env=ENV_KEY)
INSECURE = Option(
    ("--insecure",), "bind beyond loopback without keys, on a closed network", flag=True, env=ENV_INSECURE
)
SECURITY = (KEYS, KEY, INSECURE)
# Options that take a value, so that a command line's first word is not taken for one's value.
VALUE_OPTIONS = (*(o.flags[0] for o in (NAMESERVER, BIND, NAME, KEYS, KEY)), "--model-root")


def add_security_options(parser: argparse.ArgumentParser) -> None:
    """``--keys``, ``--key`` and ``--insecure``, in a group of their own."""
    group = parser.add_argument_group("keys", "taken by every hrpsim command, and passed on to the processes it starts")
    for option in SECURITY:
        option.add(group)


def add_service_options(parser: argparse.ArgumentParser, *, name: str, bind_help: str | None = None) -> None:
    """What every service's main takes: ``--nameserver``, ``--bind``, ``--name`` (default ``name``) and the keys."""
    NAMESERVER.add(parser)
    BIND.add(parser, **({} if bind_help is None else {"help": bind_help}))
    NAME.add(parser, default=name)
    add_security_options(parser)


def add_everywhere(
    parser: argparse.ArgumentParser, subparsers: list[argparse.ArgumentParser], options: Iterable[Option]
) -> None:
    """Define ``options`` on ``parser`` and on each of ``subparsers``: each is defined on the command's
    parser with its default and again on every subcommand's with none, so a value given after the
    subcommand wins and an absent one leaves the first alone. The keys too, in their group."""
    for option in options:
        option.add(parser)
        for sub in subparsers:
            sub.add_argument(*option.flags, **option.settings(default=argparse.SUPPRESS, help=argparse.SUPPRESS))
    add_security_options(parser)
