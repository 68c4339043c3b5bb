"""Signals that arrive while a command is still starting: held, not raised.

A command that must end cleanly whatever the moment of a Ctrl-C (``hrpsim launch`` writes its
summary) calls :func:`hold` before it imports anything heavy; the first SIGINT, SIGTERM or SIGHUP
is then remembered instead of raising KeyboardInterrupt in the middle of an import, and the
command's own handlers take it over with :func:`pending`. This module imports only ``signal``,
so holding starts within milliseconds of the interpreter's start.
"""

from __future__ import annotations

import signal

HELD = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)  # SIGHUP: the terminal went away
_pending: list[int] = []


def _remember(signum: int, _frame: object) -> None:
    _pending.append(signum)


def hold() -> None:
    """From now on, the signals of :data:`HELD` are remembered (SIGINT first, so a process whose
    SIGHUP is caught already holds its SIGINT)."""
    for signum in HELD:
        signal.signal(signum, _remember)


def pending() -> int | None:
    """The first held signal that arrived, if any."""
    return _pending[0] if _pending else None
