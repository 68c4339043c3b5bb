"""Signals that arrive while a command is still starting: held, not raised.

A command that must end cleanly whatever the moment of a Ctrl-C (``hrpsim launch`` writes its
summary) calls :func:`hold` before it imports anything heavy; the first SIGINT, SIGTERM or SIGHUP
is then remembered instead of raising KeyboardInterrupt in the middle of an import, and the
command's own handlers take it over with :func:`pending`. Work that can be dropped halfway
(reading a project, before anything has started) runs :func:`interruptible`: there a held signal
ends it at once. This module imports only ``signal``, ``contextlib`` and ``threading``, so holding
starts within milliseconds of the interpreter's start.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator

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


class Interrupted(Exception):
    """A held signal ended the work of an :func:`interruptible` block."""

    def __init__(self, signum: int) -> None:
        super().__init__(f"interrupted by {signal.Signals(signum).name}")
        self.signum = signum


def _raise(signum: int, _frame: object) -> None:
    _pending.append(signum)
    raise Interrupted(signum)


@contextlib.contextmanager
def interruptible() -> Iterator[None]:
    """Inside, a signal of :data:`HELD` (or one held before) raises :class:`Interrupted`; after, they
    are held again."""
    if _pending:
        raise Interrupted(_pending[0])
    if threading.current_thread() is not threading.main_thread():  # only the main thread takes signals
        yield
        return
    for signum in HELD:
        signal.signal(signum, _raise)
    try:
        yield
    finally:
        for signum in HELD:
            signal.signal(signum, _remember)
