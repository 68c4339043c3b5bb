"""How a tick meets its controllers' answers: one strategy per sync mode (``world.sync`` and
``world.command_delay``), chosen once per project by :func:`sync_mode`.

- lockstep: the tick waits for every answer to it, each up to its controller's deadline, so a run
  is deterministic and independent of the machine's speed;
- pipelined lockstep (``command_delay: 1``): the answers to tick k are waited for at the start of
  tick k + 1 and act from then on, so the controllers compute while the engine integrates;
- realtime: answers are served until the tick's wall-clock slot ends; one that comes later is
  counted as a miss and applied at the next tick.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from hrpsim import tick_protocol as proto
from hrpsim.project import WorldConfig

if TYPE_CHECKING:
    from hrpsim.simserver.hub import ControllerHub

SERVE_SLICE_S = 0.02  # a lockstep wait this long or longer answers the simulator's requests every slice


class SyncMode:
    name = ""
    waits = True  # the tick waits for answers (a deterministic run)
    in_process_after_apply = False  # in-process controllers answer after this tick's commands applied
    collects_before_send = False  # before_send takes answers (to the tick before)

    def before_send(self, hub: ControllerHub, tick: int) -> None:
        """Before the states of ``tick`` go out."""

    def collect(self, hub: ControllerHub, tick: int, slot_end: float | None) -> None:
        """Take the answers to ``tick`` that are to act now."""
        raise NotImplementedError

    def acts_now(self, answer: proto.Command, tick: int) -> bool:
        """Whether an answer that has come acts at ``tick``."""
        return True


class Lockstep(SyncMode):
    name = "lockstep"

    def collect(self, hub: ControllerHub, tick: int, slot_end: float | None) -> None:
        wait_for_answers(hub, tick)


class Pipelined(SyncMode):
    name = "pipelined"
    # An in-process controller's answer to tick k must not replace its answer to tick k - 1 before
    # that one has acted.
    in_process_after_apply = True
    collects_before_send = True

    def before_send(self, hub: ControllerHub, tick: int) -> None:
        wait_for_answers(hub, tick - 1)  # computed while the engine integrated tick - 1

    def collect(self, hub: ControllerHub, tick: int, slot_end: float | None) -> None:
        pass  # answers to this tick come during the step; the next tick's before_send collects them

    def acts_now(self, answer: proto.Command, tick: int) -> bool:
        return answer.tick < tick  # however early this tick's answer came back, it acts from the next


class Realtime(SyncMode):
    name = "realtime"
    waits = False

    def collect(self, hub: ControllerHub, tick: int, slot_end: float | None) -> None:
        self._serve_slot(hub, tick, slot_end)
        self._count_late(hub, tick)

    @staticmethod
    def _serve_slot(hub: ControllerHub, tick: int, slot_end: float | None) -> None:
        """Take answers as they come until every answer to ``tick`` is in or the slot ends.

        A controller always has one time step from the moment its state went out: when the
        simulator itself started the tick late (behind the wall clock), the lateness is the
        simulator's (the loop's jitter and overruns), not a miss of a controller that answered in time."""
        if slot_end is None:
            hub.receive(0.0)
            return
        step = hub.project.world.timestep
        while True:
            hub.receive(0.0)
            waiting = hub.attachments.waiting_on(tick)
            if not waiting:
                return
            end = max(slot_end, max(c.sent_at for c in waiting) + step)
            remaining = end - time.perf_counter()
            if remaining <= 0:
                return
            hub.receive(remaining)

    @staticmethod
    def _count_late(hub: ControllerHub, tick: int) -> None:
        now = time.perf_counter()
        for ctl in list(hub.attachments.by_name.values()):
            if ctl.outstanding is None:
                continue
            if ctl.outstanding == tick:  # its slot is over: the last command holds for this step
                hub.policies.of(ctl.name).missed += 1
                ctl.answered_late = True
                hub.policies.event(ctl, "miss", f"tick {tick}")
            if now >= ctl.sent_at + ctl.deadline:
                late = f"no answer to tick {ctl.outstanding} within its deadline of {ctl.deadline:g} s"
                hub.lost(ctl, late, "deadline")


def wait_for_answers(hub: ControllerHub, tick: int) -> None:
    """Wait for every answer to ``tick``, each up to its controller's deadline; a wait of a slice or
    more lets the simulator's service answer requests between slices (a quit there halts the run,
    and the wait ends)."""
    started = time.perf_counter()
    while True:
        waiting = hub.attachments.waiting_on(tick)
        if not waiting:
            return
        now = time.perf_counter()
        for ctl in waiting:
            if now >= ctl.sent_at + ctl.deadline:
                hub.policies.of(ctl.name).missed += 1
                hub.lost(ctl, f"no answer to tick {tick} within its deadline of {ctl.deadline:g} s", "deadline")
        waiting = [c for c in waiting if c.name in hub.attachments.by_name]
        if not waiting:
            continue
        remaining = min(c.sent_at + c.deadline for c in waiting) - now
        if hub.serve_requests is None:
            hub.receive(remaining)
            continue
        hub.receive(min(remaining, SERVE_SLICE_S))
        if time.perf_counter() - started >= SERVE_SLICE_S:  # answers in time cost no request polling
            hub.serve_requests()
            if hub.run.halting is not None:
                return


def collect_owed(hub: ControllerHub) -> None:
    """Take in every answer still owed (each within its controller's deadline), as the next tick would."""
    for tick in sorted({c.outstanding for c in hub.attachments.remote if c.outstanding is not None}):
        wait_for_answers(hub, tick)


def sync_mode(world: WorldConfig) -> SyncMode:
    if world.sync != "lockstep":
        return Realtime()
    return Pipelined() if world.command_delay == 1 else Lockstep()
