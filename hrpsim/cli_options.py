"""Options a command with subcommands takes on either side of its subcommand.

``hrpsim sim --nameserver X status`` and ``hrpsim sim status --nameserver X`` mean the same, as
do ``hrpsim ns --nameserver X list`` and ``hrpsim ns list --nameserver X``: each option is
defined on the command's parser with its default and again on every subcommand's parser with no
default, so a value given after the subcommand wins and an absent one leaves the first alone.
(``--keys``, ``--key`` and ``--insecure`` are taken out of any command line before it is parsed:
hrpsim.cli.)
"""

from __future__ import annotations

import argparse
from typing import Any

NAMESERVER_HELP = "nameserver address (default $HRPSIM_NAMESERVER or tcp://127.0.0.1:2809)"

Option = tuple[tuple[str, ...], dict[str, Any]]


def nameserver_option() -> Option:
    return ("--nameserver",), {"help": NAMESERVER_HELP}


def add_everywhere(
    parser: argparse.ArgumentParser, subparsers: list[argparse.ArgumentParser], options: list[Option]
) -> None:
    """Define ``options`` on ``parser`` and on each of ``subparsers``."""
    for flags, settings in options:
        parser.add_argument(*flags, **settings)
        for sub in subparsers:
            sub.add_argument(*flags, **{**settings, "default": argparse.SUPPRESS, "help": argparse.SUPPRESS})
