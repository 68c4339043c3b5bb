"""The simulator core: one project's world and everything that runs it, under every front end.

A :class:`World` owns the engine, the controller hub, the tick loop, the observers (the run
summary's root tracker, the project's ``record:`` recorder, and whatever the front end adds),
the run summary, and the life of a run: load, reset, begin, step, end, close, and snapshots of it
to go back to (simserver/snapshot.py). The simulator
process (simserver/service.py, ``SimServer``) is its RPC front end, the Python API
(hrpsim/simulation.py, ``Simulation``) its in-process front end, and ``hrpsim replay`` drives one
with recorded commands; so a project runs, resets, records and sums up the same way through each.

Per-tick actions (:class:`TickAction`) change the world inside a tick: after the controllers'
commands of the tick are applied and before observers see it and the world integrates. The
replay's recorded commands are one; a disturbance applied at a given time would be another.
"""

from __future__ import annotations

import copy
import logging
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import zmq

from hrpsim.bodyinfo import Body
from hrpsim.engines.base import Engine, make_engine
from hrpsim.errors import RequestError, SimulationError
from hrpsim.project import Project
from hrpsim.runsummary import empty_summary
from hrpsim.simserver.bodies import STARTUP_PATIENCE_S, load_bodies
from hrpsim.simserver.hub import ControllerHub, attach_in_process
from hrpsim.simserver.loop import TickAction, TickLoop
from hrpsim.simserver.loop_gaps import LoopGapTracker
from hrpsim.simserver.record import Observer
from hrpsim.simserver.run_summary import RootTracker
from hrpsim.simserver.snapshot import Snapshot, hub_memory, rewind_hub

log = logging.getLogger("hrpsim.simserver")

__all__ = ["Snapshot", "TickAction", "World"]


class World:
    """One project's simulated world. ``hub_bind=None``: controllers attach in process only.

    ``record``: record every run to this MCAP file instead of the project's ``record:`` file;
    ``record=False``: record nothing, whatever the project says."""

    def __init__(
        self,
        project: Project,
        *,
        bodies: dict[str, Body] | None = None,
        engine: Engine | None = None,
        nameserver: str | None = None,
        hub_bind: str | None = None,
        context: zmq.Context | None = None,
        observers: list[Observer] | None = None,
        record: str | Path | bool | None = None,
    ) -> None:
        self.project = project
        given = engine is not None
        if engine is None:
            # patience: at a simulator's start, a modelloader being restarted is waited for
            bodies = bodies if bodies is not None else load_bodies(project, nameserver, patience=STARTUP_PATIENCE_S)
            engine = make_engine(project, bodies, nameserver=nameserver)
        self.engine = engine
        try:
            self.hub = ControllerHub(engine, project, context=context, bind=hub_bind)
            try:  # the in-process controllers first: one that fails to load leaves no recorder begun
                attach_in_process(self.hub, project)
            except BaseException:
                self.hub.close()
                raise
        except BaseException:
            if not given:
                engine.release()
            raise
        self.roots = RootTracker()
        self.recorders = _recorders(project, record)
        self.loop_gaps = LoopGapTracker()
        self.loop = TickLoop(engine, self.hub, [self.roots, self.loop_gaps, *(observers or []), *self.recorders])

    @property
    def observers(self) -> list[Observer]:
        return self.loop.observers

    def attach_in_process(self) -> None:
        """Attach the project's in-process controllers that are not attached (a run that ended
        sent them away; the next one starts them afresh)."""
        attach_in_process(self.hub, self.project)

    def add_action(self, action: TickAction) -> None:
        """Apply ``action`` in every tick from the next on (before the world integrates)."""
        self.loop.actions.append(action)

    # --- a run ---

    def begin(self) -> None:
        """The run (re)starts ticking: its wall clock runs from now."""
        self.loop.begin()

    def step(self, n: int = 1, *, batch_s: float = math.inf, between: Callable[[], bool] | None = None) -> int:
        """Advance ``n`` ticks; returns how many were made. ``between()`` is called after every
        ``batch_s`` of wall time (a front end answers requests there); a False from it ends the
        steps early. Observers may hold ticks afterwards (see :meth:`hand_over`); an error hands
        them over, is kept for the summary, and raises SimulationError."""
        try:
            return self.loop.step(n, batch_s, between or (lambda: True))
        except SimulationError as exc:
            self._failed(exc)
            raise

    def advance(self, until: float, budget_s: float = math.inf) -> bool:
        """Tick until sim time ``until`` or ``budget_s`` of wall time; True when ``until`` is reached.
        A bad state, a controller's policy or a bug in the loop: SimulationError, kept for the summary."""
        try:
            return self.loop.run_for(until, budget_s)
        except SimulationError as exc:
            self._failed(exc)
            raise
        except Exception as exc:  # a bug must stop the run, not the process: the state stays readable
            log.exception("the tick loop failed")
            error = SimulationError(
                f"internal error in the tick loop at t={self.engine.time:.6g} s: {type(exc).__name__}: {exc}"
            )
            self._failed(error)
            raise error from exc

    def _failed(self, exc: SimulationError) -> None:
        self.loop.fail(exc)
        self.loop.hand_over()

    def pause(self) -> None:
        """The run stops ticking for now: its wall clock stops, observers hand over what they hold."""
        self.loop.pause()

    def hand_over(self) -> None:
        """Observers that hold ticks (the recorder writes in batches) pass them on."""
        self.loop.hand_over()

    def end(self) -> None:
        """The run is over: every observer hears so with the summary (a recorder finishes its file;
        ending twice is harmless)."""
        summary = self.summary()
        for observer in self.loop.observers:
            observer.end(summary)

    # --- snapshots ---

    def snapshot(self) -> Snapshot:
        """The world now (between ticks), to go back to with :meth:`restore`: the engine's state, the
        commands held and waiting, the device models, the pushes, the controllers' statistics and
        the run's figures (simserver/snapshot.py). SimulationError for a world that has failed."""
        engine = self.engine.get_state()
        return Snapshot(
            tick=engine.tick,
            time=engine.time,
            engine=engine,
            hub=hub_memory(self.hub),
            disturbances=copy.deepcopy(self.loop.disturbances.memory()),
            run={"loop": self.loop.memory(), "roots": self.roots.memory(), "loop_gaps": self.loop_gaps.memory()},
        )

    def restore(self, snapshot: Snapshot) -> None:
        """Go back to ``snapshot`` (of this world, or of one built from the same project): the ticks
        that follow are those that followed it. Attached controllers stay attached. RequestError
        for a snapshot of another world, or while the world records (a recording is one line of
        ticks from the project's start; record=False to branch)."""
        if not isinstance(snapshot, Snapshot):
            raise RequestError(f"restore: expected a Snapshot (from snapshot()), got {type(snapshot).__name__}")
        if self.recorders:
            files = ", ".join(str(getattr(r, "current", None) or getattr(r, "path", "?")) for r in self.recorders)
            raise RequestError(
                f"restore: this world records its run ({files}), and a recording holds one line of ticks "
                "from the project's start; run it without recording (record=False, or no --record and no "
                "record: in the project) to go back to a snapshot"
            )
        self.engine.set_state(snapshot.engine)  # first: it refuses a snapshot of another world
        rewind_hub(self.hub, snapshot.tick, snapshot.hub)
        self.loop.disturbances.restore(copy.deepcopy(snapshot.disturbances))
        self.loop.restore(snapshot.run["loop"])
        self.roots.restore(snapshot.run["roots"])
        self.loop_gaps.restore(snapshot.run["loop_gaps"])

    # --- the world's life ---

    def reset(self) -> None:
        """Back to the project's initial state, as a new run: every attached controller is sent
        away (the run it was in is over) and the project's in-process ones start afresh; observers
        begin again (a recorder starts its next file) and the summary starts from zero."""
        self.hub.end_run("the simulator was reset")
        self.hub.reconfigure(self.project)
        self.engine.reset()
        self.loop.clear()
        self.attach_in_process()

    def load(self, project: Project, bodies: dict[str, Body]) -> None:
        """Rebuild the world for ``project`` (the same one reloaded, or another) and reset."""
        self.engine.rebuild(project, bodies)
        self.hub.reconfigure(project)
        self.project = project
        self.reset()

    def close(self) -> None:
        """End the run for the observers, then release the hub and the engine."""
        self.end()
        self.hub.close()
        self.loop.observers = []
        self.engine.release()

    # --- reports ---

    def summary(self) -> dict[str, Any]:
        """The run summary (docs/architecture.md): the figures of the engine, the loop, the root
        tracker and the hub, ``timing`` in realtime, and what observers add (``contribute``)."""
        summary = empty_summary(
            sim_time=self.engine.time,
            wall_time=self.loop.elapsed_wall(),
            real_time_factor=self.loop.real_time_factor(),
            ticks=self.engine.tick,
            robots=self.roots.robots(),
            controllers=self.hub.summary(),
            error=self.loop.error,
            engine=self.engine.name,
        )
        timing = self.loop.timing()
        if timing is not None:
            summary["timing"] = timing
        for observer in self.loop.observers:
            contribute = getattr(observer, "contribute", None)
            if contribute is not None:
                contribute(summary)
        return summary


def _recorders(project: Project, record: str | Path | bool | None) -> list[Observer]:
    if record is False or (record in (None, True) and project.record is None):
        return []
    from hrpsim.recording.writer import recorders  # here: a world that records nothing starts without MCAP

    return list(recorders(project, None if record in (None, True) else str(record)))
