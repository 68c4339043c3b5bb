"""The simulator core: one project's world and every operation on it, under every front end.

A :class:`World` owns the engine, the controller hub, the tick loop, the observers (the run
summary's root tracker, the project's ``record:`` recorder, and whatever the front end adds), the
run summary, the run's one state (simserver/run_state.py: paused, waiting, running or ended, and
why; one end time) and every operation: run control (start, advance, step, pause, reset, load),
commands through the same actuation as controllers' (held arrays, hardware models), the state as a
controller receives it and the raw one, pushes, a robot put into a configuration, external forces,
the models' data, and snapshots to go back to (simserver/snapshot.py). The simulator process
(simserver/sim_service.py, ``SimServer``) is its RPC front end and the Python API
(hrpsim/simulation.py, ``Simulation``) its in-process one; both translate and hold nothing of their
own, so a project runs, resets, records and sums up the same way through each. ``hrpsim replay``
drives one with recorded commands.

Per-tick actions (:class:`TickAction`) change the world inside a tick: after the controllers'
commands of the tick are applied and before observers see it and the world integrates. The
replay's recorded commands are one; a disturbance applied at a given time would be another.
"""

from __future__ import annotations

import copy
import logging
import math
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import zmq

from hrpsim.bodyinfo import Body
from hrpsim.engines.base import Engine, JointCommand, RobotState, make_engine
from hrpsim.errors import RequestError, SimulationError
from hrpsim.project import Project
from hrpsim.simserver import world_data
from hrpsim.simserver.bodies import STARTUP_PATIENCE_S, load_bodies
from hrpsim.simserver.disturbances import check_external_force
from hrpsim.simserver.hub import ControllerHub, attach_in_process
from hrpsim.simserver.loop import TickAction, TickLoop
from hrpsim.simserver.loop_gaps import LoopGapTracker
from hrpsim.simserver.run_state import ENDED, PAUSED, RUNNING, WAITING, RunState, tick_of
from hrpsim.simserver.snapshot import Snapshot, hub_memory, rewind_hub
from hrpsim.simserver.summary_observer import RootTracker
from hrpsim.simserver.tick_record import Observer, TickRecord
from hrpsim.summary_report import empty_summary

if TYPE_CHECKING:
    from hrpsim.controllers.base import Controller

log = logging.getLogger("hrpsim.simserver")

__all__ = ["Snapshot", "TickAction", "World"]

T = TypeVar("T")


class WorldFront:
    """What every front end on a World (the RPC server, the Python API) shows of its parts, by the
    names scripts and tests use; the front end sets ``world``."""

    world: World

    @property
    def project(self) -> Project:
        return self.world.project

    @property
    def engine(self) -> Engine:
        return self.world.engine

    @property
    def hub(self) -> ControllerHub:
        return self.world.hub

    @property
    def loop(self) -> TickLoop:
        return self.world.loop


class World:
    """One project's simulated world. ``hub_bind=None``: controllers attach in process only.

    ``record``: record every run to this MCAP file instead of the project's ``record:`` file;
    ``record=False``: record nothing, whatever the project says. ``end_time``: the run's end time
    instead of the project's ``world.end_time`` (``hrpsim run simserver --until``)."""

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
        end_time: float | None = None,
    ) -> None:
        self.project = project
        self._end_time = end_time
        self.run = RunState(self._run_end_time())
        # What a front end does while a tick waits (it answers requests); False from it: it is quitting.
        self.serve_requests: Callable[[], bool] | None = None
        given = engine is not None
        if engine is None:
            # patience: at a simulator's start, a modelloader being restarted is waited for
            bodies = bodies if bodies is not None else load_bodies(project, nameserver, patience=STARTUP_PATIENCE_S)
            engine = make_engine(project, bodies, nameserver=nameserver)
        self.engine = engine
        try:
            self.hub = ControllerHub(engine, project, self.run, context=context, bind=hub_bind)
            try:  # the in-process controllers first: one that fails to load leaves no recorder begun
                attach_in_process(self.hub, project)
            except BaseException:
                self.hub.close()
                raise
        except BaseException:
            if not given:
                engine.release()
            raise
        self.hub.serve_requests = self._serve_within_tick
        engine.serve_while_waiting(self._serve_while_engine_waits)
        self.roots = RootTracker()
        self.recorders = _recorders(project, record)
        self.loop_gaps = LoopGapTracker()
        self.loop = TickLoop(
            engine, self.hub, self.run, [self.roots, self.loop_gaps, *(observers or []), *self.recorders]
        )
        # push(robot, link, force, duration, time=None, point=None, torque=None): a push on a link for a
        # time, what it will do (simserver/disturbances.py); the loop applies it in the ticks it acts in
        self.push = self.loop.disturbances.push

    @property
    def observers(self) -> list[Observer]:
        return self.loop.observers

    def attach_in_process(self) -> None:
        """Attach the project's in-process controllers that are not attached (a run that ended
        sent them away; the next one starts them afresh)."""
        attach_in_process(self.hub, self.project)

    def add_action(self, action: TickAction) -> None:
        """Apply ``action`` in every tick from the next on (before the world integrates)."""
        self.loop.add_action(action)

    # --- the run ---

    def start(self, until: float | None = None, *, wait: float | None = 0.0) -> None:
        """Run to sim time ``until`` (default: the end time; a later one becomes the end time) once
        the project's controllers have attached: waiting ``wait`` s at most (None: as long as it takes;
        0: start at once). Then :meth:`advance` ticks. Started already: nothing changes."""
        run = self.run
        if run.active:
            return
        if run.error is not None:
            raise SimulationError(f"the run stopped with an error; reset first: {run.error}")
        if until is not None and (
            isinstance(until, bool)
            or not isinstance(until, int | float)
            or not math.isfinite(until)
            or until <= self.engine.time
        ):
            raise RequestError(
                f"start: until must be a finite sim time after the current {self.engine.time:g} s "
                f"(or nil for the end time, {run.end_time:g} s), got {until!r}",
                field="until",
            )
        if wait is not None and not (isinstance(wait, int | float) and math.isfinite(wait) and wait >= 0):
            raise RequestError(
                f"start: wait must be a finite number of seconds >= 0 or nil, got {wait!r}", field="wait"
            )
        if until is None and run.phase == ENDED:
            return  # at its end already: nothing to run
        if until is not None and until > run.end_time:
            run.end_time = float(until)  # the run's one end time moves there, as asked
        self.attach_in_process()
        run.target, run.outcome = run.end_time if until is None else float(until), None
        if self.project.controllers and wait != 0:
            run.phase, run.waiting_since, run.wait_limit = WAITING, time.monotonic(), wait
            log.info(
                "the run starts when controller(s) %s have attached",
                ", ".join(c.name for c in self.project.controllers),
            )
        else:
            self._go()

    def idle(self, timeout: float = 0.05) -> None:
        """Between requests while not ticking: a start waiting for its controllers looks for them (up
        to ``timeout`` s) and goes, or ends the run once they are too late; otherwise the controllers'
        hellos and byes are taken in."""
        run = self.run
        if run.phase != WAITING:
            self.hub.poll()
            return
        missing = self.hub.wait_for_controllers([c.name for c in self.project.controllers], timeout)
        if not missing:
            self._go()
        elif run.wait_limit is not None and time.monotonic() - run.waiting_since > run.wait_limit:
            self._stop_with(f"controller(s) {', '.join(missing)} did not attach within {run.wait_limit:g} s")

    def _go(self) -> None:
        self.run.phase, self.run.waiting_since = RUNNING, None
        self.loop.begin()

    def advance(self, budget_s: float = math.inf) -> bool:
        """While running: tick toward the start's target for up to ``budget_s`` of wall time; True once
        it is reached (the run then pauses there, or ends at its end time). An error ends the run with
        it: SimulationError (the run state and the summary keep it)."""
        if self.run.phase != RUNNING:
            return self.run.finished
        reached = self._ticking(lambda: self.loop.run_for(self.run.target, budget_s))
        if reached:
            self._arrive()
        return reached

    def advance_to(self, until: float | None = None) -> None:
        """Run to ``until`` (default: the end time) now, as :meth:`start` and :meth:`advance` do."""
        self.start(until, wait=0)
        while self.run.phase == RUNNING:
            self.advance()
        self.hand_over()

    def step(self, n: int = 1, *, batch_s: float = math.inf, between: Callable[[], bool] | None = None) -> int:
        """Make ``n`` ticks while paused, and no more than there are to the end time: reaching it ends
        the run. Returns the ticks made. ``between()`` is called after every ``batch_s`` of wall time
        (a front end answers requests there); a False from it, or a pause, ends the step early.
        Observers may hold ticks afterwards (see :meth:`hand_over`)."""
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise RequestError(f"step: n must be a whole number of ticks, got {n!r}", field="n")
        self._require_paused("step")
        if n == 0:
            return 0
        run = self.run
        if run.error is not None:
            raise SimulationError(f"step: the run stopped with an error; reset first: {run.error}")
        if run.outcome == "end":
            raise RequestError(
                f"step: the run has reached its end time ({run.end_time:g} s); reset to run it again, "
                "or start(until=...) to go on beyond it"
            )
        tick, end = self.engine.tick, tick_of(run.end_time, self.engine.timestep)
        count = n if end is None else max(0, min(n, end - tick))
        run.stepping, run.pause_asked = (tick, tick + n), False

        def go_on() -> bool:
            return (between is None or between()) and not run.pause_asked

        try:
            made = self._ticking(lambda: self.loop.step(count, batch_s, go_on)) if count else 0
        finally:
            run.stepping = None
        if end is not None and self.engine.tick >= end:
            self._end_run()
        return made

    def pause(self) -> None:
        """Stop ticking for now (a step being made ends after its current tick): the wall clock
        stops, observers hand over what they hold; the state stays."""
        if self.run.stepping is not None:
            self.run.pause_asked = True
        if self.run.active:
            self.run.phase, self.run.waiting_since = PAUSED, None
        self.loop.pause()

    def hand_over(self) -> None:
        """Observers that hold ticks (the recorder writes in batches) pass them on."""
        self.loop.hand_over()

    def end(self) -> None:
        """Every observer hears the run is over, with the summary (a recorder finishes its file;
        ending twice is harmless)."""
        summary = self.summary()
        for observer in self.loop.observers:
            observer.end(summary)

    def _ticking(self, ticks: Callable[[], T]) -> T:
        """``ticks()`` (the loop's) with the wall clock going. A stop asked for inside a tick, a bad
        state or a bug in the loop ends the run with that error, raised as SimulationError."""
        self.loop.start_clock()
        try:
            result = ticks()
        except SimulationError as exc:
            self.run.take_halt()
            self._stop_with(str(exc))
            raise
        except Exception as exc:  # a bug must stop the run, not the process: the state stays readable
            log.exception("the tick loop failed")
            error = SimulationError(
                f"internal error in the tick loop at t={self.engine.time:.6g} s: {type(exc).__name__}: {exc}"
            )
            self._stop_with(str(error))
            raise error from exc
        finally:
            self.loop.stop_clock()
        reason = self.run.take_halt()
        if reason is not None:
            self._stop_with(reason)
            raise SimulationError(reason)
        return result

    def _arrive(self) -> None:
        """The start's target is reached: the run pauses there, or ends at its end time."""
        self.loop.pause()
        step, end = self.engine.timestep, tick_of(self.run.end_time, self.engine.timestep)
        if end is not None and tick_of(self.run.target, step) >= end:
            self._end_run()
        else:
            self.run.phase, self.run.outcome = PAUSED, "until"
            log.info("run paused at t=%.4f s (tick %d), as its start asked", self.engine.time, self.engine.tick)

    def _end_run(self) -> None:
        """The run reached its end time: its controllers hear bye and exit, its observers its end."""
        self.run.phase, self.run.outcome = ENDED, "end"
        self.loop.pause()
        log.info("run finished at t=%.4f s (tick %d)", self.engine.time, self.engine.tick)
        self.hub.end_run(f"the run reached its end at t={self.engine.time:.4f} s")
        self.end()

    def _stop_with(self, error: str) -> None:
        """An error ended the run: kept for the status and the summary; controllers and observers told."""
        run = self.run
        run.phase, run.outcome, run.error, run.waiting_since = ENDED, "error", error, None
        log.error("run stopped: %s", error)
        self.loop.pause()
        self.hub.end_run(f"the run stopped at t={self.engine.time:.4f} s: {error}")
        self.end()

    # --- while a tick waits ---

    def _serve_within_tick(self) -> None:
        """The hub waits for a late controller: the front end answers requests meanwhile; one that
        is quitting stops the run at the end of this tick."""
        serve = self.serve_requests
        if serve is not None and not serve():
            self.run.halt(f"the simulator was asked to quit while it waited for {self._tick_waits_for()}")

    def _serve_while_engine_waits(self, what: str) -> None:
        """The engine waits for ``what`` (the collision service): take in the controllers' answers as
        they come (so that none is judged late for the engine's wait) and answer requests; a quit
        ends the engine's wait (SimulationError, its way)."""
        self.run.waiting_on = what
        try:
            self.hub.poll()
            self._serve_within_tick()
        finally:
            self.run.waiting_on = None
        if self.run.halting is not None:
            raise SimulationError(self.run.halting)

    def _tick_waits_for(self) -> str:
        if self.run.waiting_on is not None:
            return f"the {self.run.waiting_on}"
        names = ", ".join(self.hub.waiting_for())
        return f"controller(s) {names}" if names else "a controller"

    def busy_with(self) -> str:
        """What the world is in the middle of, in words (for a request that must wait for it)."""
        if self.run.stepping is not None:
            first, end = self.run.stepping
            return f"making a step of {end - first} ticks (at tick {self.engine.tick} of {first}..{end})"
        return f"in the middle of tick {self.engine.tick}, waiting for {self._tick_waits_for()}"

    def _require_paused(self, op: str) -> None:
        if self.run.active:
            raise RequestError(f"{op}: the simulation is running; pause it first")

    # --- controllers, commands and states ---

    def attach(
        self, controller: Controller, *, robot: str, name: str | None = None, period: float | None = None
    ) -> None:
        """Run ``controller`` in this process at its turns from the next tick on, with the admission,
        command merging, order, policies and statistics of one attached over the wire."""
        self.hub.attach_local(controller, name=name or type(controller).__name__, robot=robot, period=period)

    def command(
        self, robot: str, torque: Any = None, q_ref: Any = None, dq_ref: Any = None, modes: dict[str, str] | None = None
    ) -> None:
        """Hold these commands (full-length arrays, controller order) and drive modes from now on, as a
        controller's answer to this tick would be: merged into the robot's held arrays and through its
        hardware models (a command latency delays it as it delays a controller's)."""
        self.hub.actuation.hold(robot, JointCommand(torque, q_ref, dq_ref, modes), self.engine.tick)

    def set_drive_modes(self, robot: str, modes: dict[str, str]) -> list[str]:
        """:meth:`command` of drive modes alone; each joint's mode after it."""
        self.command(robot, modes=modes)
        return self.engine.drive_modes(robot)

    def state(self, robot: str) -> RobotState:
        """The robot's state now as its controllers receive it: through its hardware models (encoder,
        noise, latency), the true state for a robot without them."""
        self.engine.require_robot(robot)
        record = TickRecord(tick=self.engine.tick, time=self.engine.time, engine=self.engine)
        return self.hub.actuation.sense(record).get(robot) or record.state(robot)

    def raw_state(self, robot: str) -> RobotState:
        """The robot's true state now, as the engine measures it (what observers and recordings see)."""
        self.engine.require_robot(robot)
        return self.engine.read(robot)

    def set_link_data(self, robot: str, **values: Any) -> RobotState:
        """Put a robot into a configuration (q, dq, root_position, root_rotation, root_velocity; unset
        ones keep their values); its raw state after it."""
        self.engine.set_link_data(robot, **values)
        self.hub.actuation.forget_sensed()  # the devices see the robot where it now is
        return self.engine.read(robot)

    def set_external_force(self, robot: str, link: str, force: Any, torque: Any = (0.0, 0.0, 0.0)) -> None:
        """A force (at the link origin) and a torque, world frame, on a link every tick until changed;
        bounded as a push is (simserver/disturbances.py)."""
        check_external_force(force, torque)
        self.engine.set_external_force(robot, link, force, torque)

    def models(self) -> dict[str, Any]:
        return world_data.models(self.engine)

    def link_data(self, robot: str, link: str) -> dict[str, Any]:
        return world_data.link_data(self.engine, robot, link)

    def link_poses(
        self, robot: str, q: Any = None, root_position: Any = None, root_rotation: Any = None
    ) -> dict[str, Any]:
        return world_data.link_poses(self.engine, robot, q, root_position, root_rotation)

    def world_state(self) -> dict[str, Any]:
        return world_data.world_state(self.engine)

    # --- snapshots ---

    def snapshot(self) -> Snapshot:
        """The world now (between ticks), to go back to with :meth:`restore`: the engine's state, the
        commands held and waiting, the hardware models, the pushes, the controllers' statistics and
        the run (simserver/snapshot.py). SimulationError for a world that has failed."""
        self._require_paused("snapshot")
        engine = self.engine.get_state()
        return Snapshot(
            tick=engine.tick,
            time=engine.time,
            engine=engine,
            hub=hub_memory(self.hub),
            disturbances=copy.deepcopy(self.loop.disturbances.memory()),
            run={
                "state": self.run.memory(),
                "loop": self.loop.memory(),
                "roots": self.roots.memory(),
                "loop_gaps": self.loop_gaps.memory(),
            },
        )

    def restore(self, snapshot: Snapshot) -> None:
        """Go back to ``snapshot`` (of this world, or of one built from the same project): the ticks
        that follow are those that followed it. Attached controllers stay attached, the project's
        in-process ones are attached again if a run's end sent them away. RequestError for a
        snapshot of another world, or while the world records (a recording is one line of ticks
        from the project's start; record=False to branch)."""
        if not isinstance(snapshot, Snapshot):
            raise RequestError(f"restore: expected a Snapshot (from snapshot()), got {type(snapshot).__name__}")
        self._require_paused("restore")
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
        self.run.restore(snapshot.run["state"])
        if self.run.phase != ENDED:
            self.attach_in_process()

    # --- the world's life ---

    def reset(self) -> None:
        """Back to the project's initial state, as a new run: every attached controller is sent
        away (the run it was in is over) and the project's in-process ones start afresh; observers
        begin again (a recorder starts its next file) and the summary starts from zero."""
        self._require_paused("reset")
        self.hub.end_run("the simulator was reset")
        self.hub.reconfigure(self.project)
        self.engine.reset()
        self.loop.clear()
        self.run.renew(self._run_end_time())
        self.attach_in_process()

    def load(self, project: Project, bodies: dict[str, Body]) -> None:
        """Rebuild the world for ``project`` (the same one reloaded, or another of this engine) and reset."""
        self._require_paused("init")
        if project.world.engine != self.engine.name:
            raise RequestError(
                f"init: {project.path} asks for the {project.world.engine} engine; this simulator runs "
                f"{self.engine.name} (start another simserver for it)"
            )
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

    def _run_end_time(self) -> float:
        return float(self.project.world.end_time if self._end_time is None else self._end_time)

    # --- reports ---

    def status(self) -> dict[str, Any]:
        """Where the run stands: time and tick, its phase and why, its end time, what a tick or a
        start waits for, its error, the wall time and real-time factor so far."""
        run = self.run
        return {
            "time": self.engine.time,
            "tick": self.engine.tick,
            "status": run.phase,
            "reason": run.reason(),
            "running": run.active,
            "finished": run.finished,
            "error": run.error,
            "real_time_factor": self.loop.real_time_factor(),
            "wall_time": self.loop.elapsed_wall(),
            "end_time": run.end_time,
            "waiting_for": self.waiting_for(),
        }

    def waiting_for(self) -> list[str]:
        """The project's controllers a start waits for, or what the current tick waits for."""
        if self.run.phase == WAITING:
            return [c.name for c in self.project.controllers if c.name not in self.hub.attached]
        return self.hub.waiting_for() + ([self.run.waiting_on] if self.run.waiting_on is not None else [])

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
            error=self.run.error,
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
