"""A world's snapshot: everything that decides how it goes on from one tick, to go back to.

:meth:`World.snapshot <hrpsim.simserver.world.World.snapshot>` takes one between ticks and
:meth:`World.restore <hrpsim.simserver.world.World.restore>` puts it back, so that the ticks after a
restore are those that followed the snapshot (as Drake's Simulator restores a Context, or
dm_control's ``Physics.set_state``). A snapshot holds:

- the engine's state (``Engine.get_state``): bodies, drive modes and held commands, what sensors
  keep between steps, external forces;
- the controller hub's: each robot's held command arrays, its hardware models (their noise generator,
  the readings and commands they delay, the watchdog), the answers waiting to act at the next tick
  and every controller's statistics;
- the pushes scheduled and held (simserver/disturbances.py);
- the run: its end time, its error, the run summary's figures (the robots' roots, wall time,
  realtime timing).

What it does not hold: the controllers themselves. Attached controllers stay attached through a
restore and keep their own state; a controller whose answer depends on the state it is sent alone
(a PD law, a pattern played by time) gives the same answers again. Range and vision readings not
yet handed to a controller are dropped. A snapshot is picklable and restores into any World built
from the same project (the same engine, models, joints and time step).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from hrpsim.engines.base import EngineState
from hrpsim.simserver.hub import ControllerHub
from hrpsim.simserver.sync_modes import collect_owed


@dataclass(frozen=True)
class Snapshot:
    """One world at one tick (between ticks): ``tick`` and ``time`` say when; the rest is the world's own.

    Immutable as far as its users go: restoring it any number of times gives the same world."""

    tick: int
    time: float
    engine: EngineState
    hub: dict[str, Any]
    disturbances: dict[str, Any]
    run: dict[str, Any]

    def __repr__(self) -> str:
        return f"Snapshot(tick={self.tick}, time={self.time:.6g}, engine={self.engine.engine!r})"


def hub_memory(hub: ControllerHub) -> dict[str, Any]:
    """What the hub carries to the next tick: each robot's held commands and hardware models, the
    controllers' statistics, and the answers waiting to act (a pipelined run's answers to the last
    tick, collected first as the next tick would)."""
    collect_owed(hub)
    answers = {ctl.name: ctl.answer for ctl in hub.attachments.ordered if ctl.answer is not None}
    return {
        "actuation": hub.actuation.memory(),
        "policies": hub.policies.memory(),
        "answers": copy.deepcopy(answers),
    }


def rewind_hub(hub: ControllerHub, tick: int, memory: dict[str, Any]) -> None:
    """The world went back to ``tick`` (with :func:`hub_memory`'s ``memory`` of then): answers owed to
    the ticks taken back are waited for and dropped, and the controllers attached now take their
    turns from ``tick`` on, with the answers that were waiting to act then."""
    collect_owed(hub)
    answers = copy.deepcopy(memory["answers"])
    for ctl in hub.attachments.ordered:
        ctl.answer, ctl.answered_late = answers.get(ctl.name), False
        ctl.start_tick = min(ctl.start_tick, tick)
    hub.actuation.restore(memory["actuation"])
    hub.policies.restore(memory["policies"], {c.name: c.start_tick for c in hub.attachments.ordered})
