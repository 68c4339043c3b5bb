"""Where a run stands: the one state of a run, which every front end reads and only the World changes.

As Drake's ``Simulator`` returns a status from ``AdvanceTo`` (boundary reached, termination, failure)
and lets a monitor ask for termination, a run here is in one of four phases:

- ``paused``: not ticking (a new run, a pause, or a ``start(until=...)`` that reached its ``until``);
- ``waiting``: started, waiting for the project's controllers to attach before the first tick;
- ``running``: ticking toward its target (``until``, or the end time);
- ``ended``: it reached its end time, or an error stopped it (a bad state, a controller's policy,
  controllers that never attached); ``reason`` says which.

There is one **end time**: the project's ``world.end_time``, or the front end's ``until`` (``hrpsim
run simserver --until``), or a later one a ``start(until=...)`` asked for. Every way of advancing
stops there: ``start`` runs to it, ``step`` makes the ticks up to it and no more, and reaching it ends
the run (its controllers hear ``bye``, its observers its end). A stop asked for inside a tick (a
controller's ``stop`` policy, a quit while a tick waits) is a :meth:`RunState.halt`: the tick loop
ends the tick there, and the World ends the run with that error.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass
from typing import Any

PAUSED = "paused"
WAITING = "waiting"
RUNNING = "running"
ENDED = "ended"


@dataclass
class RunState:
    end_time: float
    phase: str = PAUSED
    # how the last start (or the run) came out: None (not yet), "until" (the start's until was
    # reached: paused there), "end" (the end time was reached), "error" (``error`` says what)
    outcome: str | None = None
    error: str | None = None
    target: float | None = None  # the sim time the current start runs to (at most the end time)
    waiting_since: float | None = None  # monotonic s: when the start began waiting for controllers
    wait_limit: float | None = None  # s it waits for them (None: as long as it takes)
    waiting_on: str | None = None  # an outside service a tick waits for, while it does
    stepping: tuple[int, int] | None = None  # (first tick, end tick) of the step being made
    pause_asked: bool = False  # a pause came while a step was being made: it ends after this tick
    halting: str | None = None  # a stop asked for inside this tick (a policy, a quit), why

    # --- what the World does ---

    def renew(self, end_time: float) -> None:
        """A new run (a reset, another project): paused at its start, nothing asked yet."""
        fresh = RunState(end_time=float(end_time))
        for name in self.__dataclass_fields__:
            setattr(self, name, getattr(fresh, name))

    def halt(self, reason: str) -> None:
        """Stop the run at the end of this tick with ``reason`` as its error (the first one given wins)."""
        if self.halting is None:
            self.halting = reason

    def take_halt(self) -> str | None:
        reason, self.halting = self.halting, None
        return reason

    def memory(self) -> dict[str, Any]:
        """What a snapshot keeps of the run (its end time, how it stands, its error)."""
        return copy.deepcopy({"end_time": self.end_time, "outcome": self.outcome, "error": self.error})

    def restore(self, memory: dict[str, Any]) -> None:
        self.renew(memory["end_time"])
        self.outcome, self.error = memory["outcome"], memory["error"]
        if self.outcome in ("end", "error"):
            self.phase = ENDED

    # --- what front ends read ---

    @property
    def active(self) -> bool:
        """Started: running, or waiting for its controllers to attach."""
        return self.phase in (RUNNING, WAITING)

    @property
    def finished(self) -> bool:
        """The last start reached where it was going, or the run ended."""
        return self.outcome is not None

    def reason(self) -> str:
        """Why the run is where it is, in words."""
        if self.outcome == "error":
            return f"stopped by an error: {self.error}"
        if self.outcome == "end":
            return f"reached its end time, {self.end_time:g} s"
        if self.outcome == "until" and self.target is not None:
            return f"reached {self.target:g} s, as its start asked"
        if self.phase == WAITING:
            return "waiting for the project's controllers to attach"
        if self.phase == RUNNING:
            return f"running to {self.target:g} s" if self.target is not None else "running"
        return "paused"


def tick_of(time: float, timestep: float) -> int | None:
    """The tick at which sim time ``time`` is reached; None for a time that never comes (infinite)."""
    return None if math.isinf(time) else round(time / timestep)
