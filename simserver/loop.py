"""The tick loop: the one place where ticks happen, for every engine and every sync mode.

Per tick k::

    record = TickRecord(k)
    hub.poll(); hub.sensors.produce(record)     # range and vision readings due at tick k
    hub.before_collide(record)                  # send state k to controllers whose turn it is
    engine.collide()                            # contacts, while controllers think
    hub.after_collide(record, slot_end)         # their commands for tick k, applied
    disturbances.apply(record)                  # pushes acting in tick k, onto the engine
    actions apply(record)                       # per-tick changes: replayed commands ...
    observers see the record                    # publisher, run summary, recorder ...
    engine.integrate()                          # k -> k + 1

``lockstep`` waits for every answer (up to its deadline), so a run is deterministic. ``realtime``
gives each tick a wall-clock slot of one time step: states go out when the slot starts, answers
that arrive before it ends are applied to that tick, and the loop keeps figures on how late each
tick started (jitter) and how many overran their slot. A loop that falls far behind says so once
and re-anchors its schedule instead of racing to catch up. A stop asked for inside a tick (the run
state's ``halt``: a controller's ``stop`` policy, a quit while a tick waits) ends that tick before
the world integrates, and the ticking with it.
"""

from __future__ import annotations

import copy
import logging
import time
from collections.abc import Callable
from typing import Any, Protocol

from hrpsim.engines.base import Engine
from hrpsim.simserver.controller_stats import LatencyHistogram
from hrpsim.simserver.disturbances import Disturbances
from hrpsim.simserver.guard import StateGuard
from hrpsim.simserver.hub import ControllerHub
from hrpsim.simserver.run_state import RunState, tick_of
from hrpsim.simserver.tick_record import Observer, TickRecord

log = logging.getLogger("hrpsim.simserver")

REANCHOR_S = 0.1  # behind the wall clock by more than this: stop trying to catch up


class TickAction(Protocol):
    """Changes the world inside every tick, after the controllers' commands are applied and
    before observers see the tick and the world integrates (an external force, a command).
    Unlike an observer, it may act on ``record.engine``."""

    def apply(self, record: TickRecord) -> None: ...


class _Stages:
    """What a tick of the loop does, composed once per configuration (TickLoop._compose)."""

    def __init__(self, realtime: bool) -> None:
        self.realtime = realtime
        self.before: list[Callable[[TickRecord], None]] = []
        self.after: list[Callable[[TickRecord], None]] = []


class TickLoop:
    def __init__(
        self, engine: Engine, hub: ControllerHub | None, run: RunState, observers: list[Observer] | None = None
    ) -> None:
        self.engine = engine
        self.hub = hub
        self.run = run  # a stop asked for inside a tick ends the tick and the ticking (run.halting)
        self.observers: list[Observer] = list(observers or [])
        self.actions: list[TickAction] = []
        self.guard = StateGuard()  # physically absurd states stop the run
        self._stages: _Stages | None = None  # composed when first needed after a change (changed())
        self.disturbances = Disturbances(engine, changed=self.changed)  # the project's pushes, and later ones
        if hub is not None:
            hub.listeners.append(self.changed)
        self.clear()

    @property
    def realtime(self) -> bool:
        return self.engine.project.world.sync == "realtime"

    def add_action(self, action: TickAction) -> None:
        """Apply ``action`` in every tick from the next on."""
        self.actions.append(action)
        self.changed()

    def changed(self) -> None:
        """What a tick does changed (controllers, pushes, actions, another project): the next tick
        composes its stages again."""
        self._stages = None

    def _compose(self) -> _Stages:
        """This configuration's stages: a tick calls nothing for what the run does not have (no
        connections to poll, no range or vision sensors, no pushes, no tick actions)."""
        stages, hub = _Stages(self.realtime), self.hub
        if hub is not None:
            if hub.endpoint is not None:  # a hub with sockets: hellos and byes come in
                stages.before.append(lambda record: hub.poll())
            if hub.sensors.produces:
                stages.before.append(hub.sensors.produce)
            stages.before.append(hub.before_collide)
        if self.disturbances.active:
            stages.after.append(self.disturbances.apply)
        stages.after += [action.apply for action in self.actions]
        self._stages = stages
        return stages

    def clear(self) -> None:
        """Forget the run so far (after a reset or a new project) and tell the observers."""
        self.wall_time = 0.0
        self._wall_start: float | None = None
        self._sim_start = self.engine.time
        self._anchor: tuple[float, int] | None = None  # (perf_counter s, tick) the slots count from
        self.lateness = LatencyHistogram()
        self.overruns = 0
        self.fell_behind = False
        self.guard.begin(self.engine)
        self.disturbances.clear()
        for observer in self.observers:
            observer.begin(self.engine)

    # --- running ---

    def begin(self) -> None:
        """A run (re)starts: realtime slots count from its first tick, the wall clock runs."""
        self._anchor = None
        self.start_clock()

    def start_clock(self) -> None:
        """The wall clock runs (while ticks are made): the run summary's wall time counts from now."""
        if self._wall_start is None:
            self._wall_start = time.perf_counter()

    def stop_clock(self) -> None:
        if self._wall_start is not None:
            self.wall_time += time.perf_counter() - self._wall_start
            self._wall_start = None

    def pause(self) -> None:
        self.stop_clock()
        self.hand_over()

    def hand_over(self) -> None:
        """The loop stops ticking for now (a pause, the end of a run, steps served): observers
        that hold records (the recorder batches its pipe writes) pass them on."""
        for observer in self.observers:
            flush = getattr(observer, "flush", None)
            if flush is not None:
                flush()

    def run_for(self, until: float, budget_s: float) -> bool:
        """Tick until sim time ``until`` or ``budget_s`` of wall time; True when ``until`` is reached.
        Raises SimulationError (a controller policy or a bad state) with the world left readable."""
        engine, run = self.engine, self.run
        deadline = time.perf_counter() + budget_s
        end_tick = tick_of(until, engine.timestep)
        while end_tick is None or engine.tick < end_tick:
            self.tick_once()
            if run.halting is not None or time.perf_counter() >= deadline:
                break
        return end_tick is not None and engine.tick >= end_tick

    def step(self, n: int, batch_s: float, between: Callable[[], bool]) -> int:
        """Tick ``n`` times, calling ``between()`` after every ``batch_s`` of wall time so the caller
        can answer requests; a False from it ends the steps early. Returns the ticks made."""
        made, run = 0, self.run
        deadline = time.perf_counter() + batch_s
        while made < n:
            self.tick_once()
            made += 1
            if run.halting is not None:
                break
            if made < n and time.perf_counter() >= deadline:
                if not between():
                    break
                deadline = time.perf_counter() + batch_s
        return made

    def tick_once(self) -> None:
        engine, hub = self.engine, self.hub
        stages = self._stages or self._compose()
        slot_end = self._start_slot() if stages.realtime else None
        record = TickRecord(engine.tick, engine.time, engine)
        try:
            for stage in stages.before:  # connections polled, range sensors, states handed out
                stage(record)
            engine.collide()
            if hub is not None:
                hub.after_collide(record, slot_end)
                if self.run.halting is not None:  # a controller's policy or a quit stopped the run in this tick
                    return
            for stage in stages.after:  # pushes, tick actions
                stage(record)
        finally:
            for observer in self.observers:
                observer.observe(record)
        engine.integrate()
        self.guard.check(engine.tick)
        if slot_end is not None and time.perf_counter() > slot_end:
            self.overruns += 1

    def _start_slot(self) -> float:
        """Wait for this tick's wall-clock slot; return when it ends (perf_counter s)."""
        dt, tick = self.engine.timestep, self.engine.tick
        now = time.perf_counter()
        if self._anchor is None:
            self._anchor = (now, tick)
        start = self._anchor[0] + (tick - self._anchor[1]) * dt
        if now < start:
            if self.hub is not None:
                self.hub.idle_until(start)
            else:
                time.sleep(start - now)
            now = time.perf_counter()
        late = now - start
        self.lateness.add(max(late, 0.0) * 1e6)
        if late > REANCHOR_S:
            if not self.fell_behind:
                log.warning(
                    "the simulator cannot keep real time (%.0f ms behind at t=%.3f s); it goes on as "
                    "fast as it can and reports the real-time factor it achieves",
                    late * 1e3,
                    self.engine.time,
                )
                self.fell_behind = True
            self._anchor = (now, tick)
            start = now
        return start + dt

    def memory(self) -> dict[str, Any]:
        """The run's figures so far, for a snapshot (the pushes are the World's)."""
        return copy.deepcopy(
            {
                "wall_time": self.elapsed_wall(),
                "lateness": self.lateness,
                "overruns": self.overruns,
                "fell_behind": self.fell_behind,
            }
        )

    def restore(self, memory: dict[str, Any]) -> None:
        memory = copy.deepcopy(memory)
        self.wall_time = memory["wall_time"]
        self.lateness, self.overruns, self.fell_behind = memory["lateness"], memory["overruns"], memory["fell_behind"]
        if self._wall_start is not None:  # running: the wall clock counts on from the restored figure
            self._wall_start = time.perf_counter()
        self._anchor = None  # realtime: the schedule starts again from the restored tick

    # --- reports ---

    def elapsed_wall(self) -> float:
        running = 0.0 if self._wall_start is None else time.perf_counter() - self._wall_start
        return self.wall_time + running

    def real_time_factor(self) -> float | None:
        wall = self.elapsed_wall()
        return (self.engine.time / wall) if wall > 0 else None

    def timing(self) -> dict[str, Any] | None:
        """Realtime figures: tick start lateness (jitter) p50/p99/max in µs and overruns."""
        if not self.lateness.total:
            return None
        return {
            "jitter_p50_us": self.lateness.percentile(50),
            "jitter_p99_us": self.lateness.percentile(99),
            "jitter_max_us": self.lateness.max_us,
            "overruns": self.overruns,
            "fell_behind": self.fell_behind,
        }
