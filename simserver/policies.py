"""What happens when a controller fails, and what the run keeps of each controller: its statistics
(simserver/controller_stats.py) and the events of the current tick (attach, detach, miss, policy).

A controller that misses its deadline, disconnects, says bye, raises or sends a bad command gets its
policy applied: ``stop`` ends the run (the run state's ``halt``: the tick ends there and the World ends the run),
``hold`` keeps its last command, ``zero`` switches its robot's joints to zero torque.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Callable
from typing import Any

from hrpsim.project import Project
from hrpsim.simserver.attached_controllers import AttachedController
from hrpsim.simserver.controller_stats import ControllerStats
from hrpsim.simserver.tick_record import ControllerEvent

log = logging.getLogger("hrpsim.simserver.hub")


class Policies:
    def __init__(
        self, project: Project, *, tick: Callable[[], int], zero: Callable[[str], None], halt: Callable[[str], None]
    ) -> None:
        """``zero(robot)`` switches a robot to zero torque, ``halt(reason)`` stops the run at the end of the tick."""
        self._tick, self._zero, self._halt = tick, zero, halt
        self.stats: dict[str, ControllerStats] = {c.name: ControllerStats() for c in project.controllers}
        self.events: list[ControllerEvent] = []  # since the last tick record

    def of(self, name: str) -> ControllerStats:
        stats = self.stats.get(name)  # read every tick: a new one (its histogram is 16 kB) only when missing
        if stats is None:
            stats = self.stats[name] = ControllerStats()
        return stats

    def event(self, ctl: AttachedController, kind: str, detail: str = "") -> None:
        self.events.append(ControllerEvent(ctl.name, ctl.robot, kind, detail))

    def apply(self, ctl: AttachedController, reason: str, *, level: int = logging.WARNING) -> None:
        stats = self.of(ctl.name)
        stats.policy_applied = ctl.policy
        event = f"tick {self._tick()}: {reason}; policy {ctl.policy}"
        stats.event(event)
        self.event(ctl, "policy", event)
        log.log(level, "controller %s (robot %s): %s", ctl.name, ctl.robot, event)
        if ctl.policy == "stop":
            self._halt(f"controller {ctl.name!r} (robot {ctl.robot!r}): {reason}; its policy is stop")
        elif ctl.policy == "zero":
            self._zero(ctl.robot)

    def take_events(self) -> list[ControllerEvent]:
        events, self.events = self.events, []
        return events

    def memory(self) -> dict[str, Any]:
        """Every controller's statistics (copies), for a snapshot."""
        return copy.deepcopy({"stats": self.stats, "events": self.events})

    def restore(self, memory: dict[str, Any], attached: dict[str, int]) -> None:
        """The statistics of ``memory``; controllers attached now (name -> the tick they take turns
        from) are attached in them, whatever they were then."""
        memory = copy.deepcopy(memory)
        kept = {name: stats for name, stats in self.stats.items() if name in attached}
        self.stats, self.events = memory["stats"], memory["events"]
        for stats in self.stats.values():
            stats.attached = False
        for name, tick in attached.items():
            stats = self.stats.setdefault(name, kept.get(name) or ControllerStats())
            stats.attached, stats.joined_tick = True, tick

    def summary(self) -> dict[str, Any]:
        return {name: stats.public() for name, stats in sorted(self.stats.items())}
