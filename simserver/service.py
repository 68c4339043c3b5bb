"""The simulator process: ``hrpsim run simserver --project FILE [--until T] [--nameserver ADDR] [--bind ADDR]``.

The RPC front end of the simulator core (simserver/world.py): the world, its hub, loop, observers,
summary and life are the :class:`World`'s; this module serves them as operations and runs the
world in the background of its request loop.

Registers as ``simserver`` (kind ``simserver``) with the endpoints of its world-state stream
(``state``) and controller hub (``controllers``) in its metadata. Operations, in the spirit of
OpenHRP's DynamicsSimulator:

- run control: ``init(project=None)`` (reload the project, or load another, and rebuild),
  ``start(until=None)`` (run in the background of the serving loop; returns at once),
  ``pause()``, ``step(n=1)`` (when paused), ``reset()``, ``snapshot(name)`` and ``restore(name)``
  (when paused), ``status()``, ``summary()``;
- data: ``models()``, ``state(robot)``, ``sensor_state(robot)``, ``world_state()``,
  ``get_link_data(robot, link)``, ``set_link_data(robot, q, dq, root_position, root_rotation,
  root_velocity)``, ``set_external_force(robot, link, force, torque)``, ``push(robot, link, force,
  duration, time=None, point=None, torque=None)`` (simserver/disturbances.py),
  ``command(robot, torque, q_ref, dq_ref, modes)``, ``set_drive_modes(robot, modes)``,
  ``forward_kinematics(robot, q, root_position, root_rotation)``.

While running, requests are answered between batches of ticks (every few milliseconds), and every
20 ms while a tick waits for a late controller or a lost collision service (docs/faults.md). A run
stopped by an error (a bad state, a controller policy) leaves the process serving, with the
error in ``status`` and ``summary``, until ``quit``.
"""

from __future__ import annotations

import argparse
import gc
import logging
import math
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import zmq

from hrpsim.engines.base import Engine, JointCommand
from hrpsim.errors import HrpsimError, NotFound, RequestError, SimulationError
from hrpsim.files import ReadPolicy, add_root_option, model_roots, reading_under
from hrpsim.logs import setup_logging
from hrpsim.naming import host_identity, sibling_bind
from hrpsim.project import RECORD_PROFILES, Project, apply_record_profile, load_project
from hrpsim.service import DEFAULT_BIND, Operation, Service
from hrpsim.simserver.bodies import load_bodies
from hrpsim.simserver.disturbances import check_external_force
from hrpsim.simserver.hub import ControllerHub, RunStopped
from hrpsim.simserver.loop import TickLoop
from hrpsim.simserver.publisher import StatePublisher
from hrpsim.simserver.record import Observer
from hrpsim.simserver.world import Snapshot, World
from hrpsim.transforms import quaternion_matrix

log = logging.getLogger("hrpsim.simserver")

TICK_BATCH_S = 0.005  # wall seconds of ticking between looks at the request socket
# What a tick that waits for a late controller still answers: reading, stopping, and start (a no-op
# while running); nothing that moves the world.
SERVED_WITHIN_A_TICK = frozenset(
    {
        "ping",
        "quit",
        "status",
        "summary",
        "pause",
        "start",
        "models",
        "state",
        "sensor_state",
        "world_state",
        "get_link_data",
        "forward_kinematics",
    }
)
MAX_SNAPSHOTS = 16  # named snapshots a simulator keeps (each holds a copy of the world's state)
CONTROLLER_WAIT_S = 30.0  # how long start() waits for the project's controllers to attach
MAX_STEP_TICKS = 1_000_000  # one step request's bound; a longer advance is a run: start(until=...)


class SimServer(Service):
    kind = "simserver"

    def __init__(
        self,
        project: Project,
        *,
        nameserver: str | None = None,
        bind: str = DEFAULT_BIND,
        until: float | None = None,
        name: str = "simserver",
        register: bool = True,
        context: zmq.Context | None = None,
        engine: Engine | None = None,
        observers: list[Observer] | None = None,
        record: str | Path | None = None,
        metadata: dict[str, Any] | None = None,
        roots: tuple[str, ...] = (),
    ) -> None:
        """``record``: record every run to this MCAP file instead of the project's ``record:`` file."""
        self.nameserver = nameserver
        self.read_policy = ReadPolicy(roots=(Path(project.path).parent, *model_roots(roots)))
        self.until = until
        self._extra_metadata = dict(metadata or {})
        ctx = context or zmq.Context.instance()
        self.publisher = StatePublisher(ctx, bind=sibling_bind(bind, "state"))
        try:
            self.world = World(
                project,
                engine=engine,
                nameserver=nameserver,
                hub_bind=sibling_bind(bind, "controllers"),
                context=ctx,
                observers=[self.publisher, *(observers or [])],
                record=record,
            )
        except BaseException:
            self.publisher.close()
            raise
        self.hub.serve_requests = self._serve_within_tick
        self.engine.serve_while_waiting(self._serve_while_engine_waits)
        self._within_tick = False
        self._step: tuple[int, int] | None = None  # (first tick, end tick) of the step being made
        self._step_paused = False
        self._waiting_on: str | None = None  # the outside service a tick waits for, while it does
        self.running = False
        self.finished = False
        self._waiting_since: float | None = None
        self._wait_limit: float | None = CONTROLLER_WAIT_S
        self._target = self._end_time(until)
        self.hub.end_time = self._target
        self._snapshots: dict[str, Snapshot] = {}
        super().__init__(name, bind=bind, nameserver=nameserver, register=register, context=ctx)

    # The world's parts, by the names the operations use.
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

    def _end_time(self, until: float | None) -> float:
        return float(self.project.world.end_time if until is None else until)

    def metadata(self) -> dict[str, Any]:
        return {
            "pid": os.getpid(),
            "state": self.publisher.endpoint,
            "project": self.project.path,
            "controllers": self.hub.endpoint,
            "controllers_ipc": self.hub.ipc_endpoint,
            "controllers_unix": self.hub.unix_endpoint,
            "host": host_identity(),
            "robots": list(self.engine.robots),
            "engine": self.engine.name,
            **self._extra_metadata,
        }

    def operations(self) -> dict[str, Operation]:
        return {
            "init": self.op_init,
            "load": self.op_init,
            "start": self.op_start,
            "pause": self.op_pause,
            "step": self.op_step,
            "reset": self.op_reset,
            "snapshot": self.op_snapshot,
            "restore": self.op_restore,
            "status": self.op_status,
            "summary": self.op_summary,
            "models": self.op_models,
            "state": self.op_state,
            "sensor_state": self.op_sensor_state,
            "world_state": self.op_world_state,
            "get_link_data": self.op_get_link_data,
            "set_link_data": self.op_set_link_data,
            "set_external_force": self.op_set_external_force,
            "push": self.loop.disturbances.push,  # robot, link, force, duration, time, point, torque
            "command": self.op_command,
            "set_drive_modes": self.op_set_drive_modes,
            "forward_kinematics": self.op_forward_kinematics,
        }

    def roles(self) -> dict[str, str]:  # run control and set_* need admin (the default)
        return {
            **dict.fromkeys(
                [
                    "status",
                    "summary",
                    "models",
                    "state",
                    "sensor_state",
                    "world_state",
                    "get_link_data",
                    "forward_kinematics",
                ],
                "observer",
            ),
            "command": "controller",
            "set_drive_modes": "controller",
        }

    # --- the serving loop ---

    def serve_forever(self, *, install_signals: bool = True) -> None:
        if install_signals:
            self.install_signal_handlers()
        self.start()
        try:
            while not self.stopping:
                if self.running:
                    self.serve_pending(0.0)
                    if self.running and not self.stopping:  # a pause just served stops the world here
                        self._advance()
                else:
                    self.serve_pending(0.02)
                    if self._waiting_since is not None:
                        self._wait_for_controllers()
                    else:
                        self.hub.poll()
        finally:
            self.close()

    def _serve_within_tick(self) -> None:
        """The hub waits for a late controller: answer requests meanwhile; a quit ends the wait."""
        self._within_tick = True
        try:
            self.serve_pending(0.0)
        finally:
            self._within_tick = False
        if self.stopping:
            raise RunStopped(f"the simulator was asked to quit while it waited for {self._tick_waits_for()}")

    def _serve_while_engine_waits(self, what: str) -> None:
        """The engine waits for ``what`` (the collision service): take in the controllers' answers as
        they come (so that none is judged late for the engine's wait) and answer requests."""
        self._waiting_on = what
        try:
            self.hub.poll()
            self._serve_within_tick()
        finally:
            self._waiting_on = None

    def _tick_waits_for(self) -> str:
        if self._waiting_on is not None:
            return f"the {self._waiting_on}"
        names = ", ".join(self.hub.waiting_for())
        return f"controller(s) {names}" if names else "a controller"

    def _serve_within_step(self) -> bool:
        """Between batches of a step: answer requests; False (end the step) after a pause or quit."""
        self._within_tick = True
        try:
            self.serve_pending(0.0)
        finally:
            self._within_tick = False
        return not (self.stopping or self._step_paused)

    def _call(self, op: str, args: dict[str, Any]) -> Any:
        if self._within_tick and op not in SERVED_WITHIN_A_TICK:
            raise RequestError(f"{op}: the simulator is {self._busy_with()}; pause first, or retry")
        return super()._call(op, args)

    def _busy_with(self) -> str:
        if self._step is not None:
            first, end = self._step
            return f"making a step of {end - first} ticks (at tick {self.engine.tick} of {first}..{end})"
        return f"in the middle of tick {self.engine.tick}, waiting for {self._tick_waits_for()}"

    def _advance(self) -> None:
        try:
            if self.world.advance(self._target, TICK_BATCH_S):
                self._finish(None)
        except SimulationError as exc:  # the world keeps it for the summary; the process serves on
            self._finish(str(exc))

    def _finish(self, error: str | None) -> None:
        self.running = False
        self.finished = True
        self.world.pause()
        log.info("run %s at t=%.4f s (tick %d)", "stopped" if error else "finished", self.engine.time, self.engine.tick)
        # At the run's end (not at an intermediate start(until=...)) every controller hears so and
        # exits on its own; the summary keeps its figures.
        if error:
            self.hub.end_run(f"the run stopped at t={self.engine.time:.4f} s: {error}")
        elif self.engine.time >= self._end_time(self.until) - 0.5 * self.engine.timestep:
            self.hub.end_run(f"the run reached its end at t={self.engine.time:.4f} s")
        else:
            return  # a stop on the way (start(until=...)): the run goes on later
        self.world.end()

    def _wait_for_controllers(self) -> None:
        names = [c.name for c in self.project.controllers]
        missing = self.hub.wait_for_controllers(names, 0.05)
        if not missing:
            self._waiting_since = None
            self._begin()
        elif self._wait_limit is not None and time.monotonic() - self._waiting_since > self._wait_limit:
            self._waiting_since = None
            message = f"controller(s) {', '.join(missing)} did not attach within {self._wait_limit:g} s"
            self.loop.error = message
            self._finish(message)

    def _begin(self) -> None:
        self.running = True
        # Everything built so far (the world, parsers, the model) lives as long as the run: moved
        # out of the cyclic collector's sight, a full collection no longer walks it (tens of ms
        # each time, a stall a realtime run would count as missed ticks). Refcounting still frees it.
        gc.collect()
        gc.freeze()
        self.world.begin()

    def close(self) -> None:
        self.world.close()  # quit or a signal mid-run: the recorder still finishes its file (a no-op if done)
        self.publisher.close()
        super().close()

    # --- run control ---

    def op_init(self, project: str | None = None) -> dict[str, Any]:
        self._require_idle("init")
        with reading_under(self.read_policy):  # a peer's project: only from the allowed folders
            proj = load_project(project) if project else load_project(self.project.path)
            bodies = load_bodies(proj, self.nameserver)
        if proj.world.engine != self.engine.name:
            raise RequestError(
                f"init: {proj.path} asks for the {proj.world.engine} engine; this simulator runs "
                f"{self.engine.name} (start another simserver for it)"
            )
        self.world.load(proj, bodies)
        self.finished = False
        self._target = self._end_time(self.until)
        self.hub.end_time = self._target
        return self.op_status()

    def op_start(self, until: float | None = None, wait: float | None = CONTROLLER_WAIT_S) -> dict[str, Any]:
        """Run to ``until`` once the project's controllers have attached (waiting ``wait`` s at most;
        None: as long as it takes; 0: start at once). A controller the run already ended for is waited
        for again."""
        if self.running or self._waiting_since is not None:
            return self.op_status()
        if self.loop.error is not None:
            raise SimulationError(f"the run stopped with an error; reset first: {self.loop.error}")
        if until is not None and (
            isinstance(until, bool)
            or not isinstance(until, int | float)
            or not math.isfinite(until)
            or until <= self.engine.time
        ):
            raise RequestError(
                f"start: until must be a finite sim time after the current {self.engine.time:g} s "
                f"(or nil for the project's end_time), got {until!r}",
                field="until",
            )
        if wait is not None and not (isinstance(wait, int | float) and math.isfinite(wait) and wait >= 0):
            raise RequestError(
                f"start: wait must be a finite number of seconds >= 0 or nil, got {wait!r}", field="wait"
            )
        self._target = self._end_time(until if until is not None else self.until)
        self.hub.end_time = self._target
        self.finished = False
        self.world.attach_in_process()
        if self.project.controllers and wait != 0:
            self._waiting_since, self._wait_limit = time.monotonic(), wait
            log.info(
                "the run starts when controller(s) %s have attached",
                ", ".join(c.name for c in self.project.controllers),
            )
        else:
            self._begin()
        return self.op_status()

    def op_pause(self) -> dict[str, Any]:
        self._step_paused = self._step is not None  # a step in progress ends after its current tick
        self.running = False
        self._waiting_since = None
        self.world.pause()
        return self.op_status()

    def op_step(self, n: int = 1) -> dict[str, Any]:
        """Advance ``n`` ticks while paused, answering requests between batches of ticks: ``pause``
        or ``quit`` ends the step early (the reply's ``tick`` says how far it got)."""
        self._require_idle("step")
        if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= MAX_STEP_TICKS:
            raise RequestError(
                f"step: n must be an integer from 1 to {MAX_STEP_TICKS}, got {n!r}; "
                "for a longer advance, start(until=...) and pause",
                field="n",
            )
        self._step, self._step_paused = (self.engine.tick, self.engine.tick + n), False
        try:
            self.world.step(n, batch_s=TICK_BATCH_S, between=self._serve_within_step)
        finally:
            self._step = None
            self.world.hand_over()
        return self.op_status()

    def op_reset(self) -> dict[str, Any]:
        self._require_idle("reset")
        self.world.reset()
        self.finished = False
        self.hub.end_time = self._target
        return self.op_status()

    def op_snapshot(self, name: str = "default") -> dict[str, Any]:
        """Keep the world as it is now under ``name`` (replacing one of that name), to go back to with
        ``restore``; while paused. What the snapshot holds: docs/python-api.md."""
        self._require_idle("snapshot")
        if name not in self._snapshots and len(self._snapshots) >= MAX_SNAPSHOTS:
            raise RequestError(
                f"snapshot: this simulator keeps at most {MAX_SNAPSHOTS} snapshots "
                f"({', '.join(sorted(self._snapshots))}); reuse one of their names",
                field="name",
            )
        snapshot = self.world.snapshot()
        self._snapshots[name] = snapshot
        return {"name": name, "tick": snapshot.tick, "time": snapshot.time, "snapshots": sorted(self._snapshots)}

    def op_restore(self, name: str = "default") -> dict[str, Any]:
        """Go back to the snapshot kept under ``name`` (while paused); the status after it."""
        self._require_idle("restore")
        snapshot = self._snapshots.get(name)
        if snapshot is None:
            kept = ", ".join(sorted(self._snapshots)) or "none yet: take one with snapshot"
            raise NotFound(f"restore: no snapshot named {name!r} (snapshots: {kept})")
        self.world.restore(snapshot)
        self.finished = False
        return self.op_status()

    def _require_idle(self, op: str) -> None:
        if self.running or self._waiting_since is not None:
            raise RequestError(f"{op}: the simulation is running; pause it first")

    def op_status(self) -> dict[str, Any]:
        return {
            "time": self.engine.time,
            "tick": self.engine.tick,
            "running": self.running or self._waiting_since is not None,
            "finished": self.finished,
            "error": self.loop.error,
            "real_time_factor": self.loop.real_time_factor(),
            "wall_time": self.loop.elapsed_wall(),
            "end_time": self._target,
            "waiting_for": self._waiting_for(),
        }

    def _waiting_for(self) -> list[str]:
        if self._waiting_since is not None:
            return [c.name for c in self.project.controllers if c.name not in self.hub.attached]
        return self.hub.waiting_for() + ([self._waiting_on] if self._waiting_on is not None else [])

    def op_summary(self) -> dict[str, Any]:
        return self.world.summary()

    # --- data ---

    def op_models(self) -> dict[str, Any]:
        out = {}
        for name in self.engine.model_names:
            body, static = self.engine.body(name), self.engine.is_static(name)
            out[name] = {
                "static": static,
                "links": [lk.name for lk in body.links],
                "joints": body.joint_names,
                "modes": None if static else self.engine.drive_modes(name),
                "sensors": [{"name": s.name, "type": s.type, "link": body.links[s.link].name} for s in body.sensors],
            }
        return out

    def op_state(self, robot: str) -> dict[str, Any]:
        return self.engine.read(robot).to_wire()

    def op_sensor_state(self, robot: str) -> dict[str, Any]:
        return self.engine.read(robot).sensors

    def op_world_state(self) -> dict[str, Any]:
        from hrpsim.simserver.publisher import world_frame
        from hrpsim.simserver.record import TickRecord

        return world_frame(TickRecord(tick=self.engine.tick, time=self.engine.time, engine=self.engine))

    def op_get_link_data(self, robot: str, link: str) -> dict[str, Any]:
        body = self.engine.body(robot)
        try:
            index = body.link_index(link)
        except KeyError as exc:
            raise NotFound(str(exc.args[0])) from None
        states = self.engine.link_states(robot)
        values, rates = self.engine.link_values(robot)
        out = {
            "position": states.positions[index],
            "rotation": quaternion_matrix(states.quaternions[index]),
            "linear_velocity": states.linear[index],
            "angular_velocity": states.angular[index],
            "joint_value": float(values[index]),
            "joint_velocity": float(rates[index]),
        }
        names = body.joint_names
        label = body.links[index].joint_label
        if not self.engine.is_static(robot) and body.links[index].joint_id >= 0 and label in names:
            out["joint_torque"] = float(self.engine.read(robot).tau[names.index(label)])
        return out

    def op_set_link_data(
        self,
        robot: str,
        q: Any = None,
        dq: Any = None,
        root_position: Any = None,
        root_rotation: Any = None,
        root_velocity: Any = None,
    ) -> dict[str, Any]:
        self.engine.set_link_data(
            robot, q=q, dq=dq, root_position=root_position, root_rotation=root_rotation, root_velocity=root_velocity
        )
        return self.engine.read(robot).to_wire()

    def op_set_external_force(self, robot: str, link: str, force: Any, torque: Any = (0.0, 0.0, 0.0)) -> bool:
        check_external_force(force, torque)
        self.engine.set_external_force(robot, link, force, torque)
        return True

    def op_command(
        self, robot: str, torque: Any = None, q_ref: Any = None, dq_ref: Any = None, modes: dict[str, str] | None = None
    ) -> bool:
        self.engine.apply(robot, JointCommand(torque=torque, q_ref=q_ref, dq_ref=dq_ref, modes=modes))
        return True

    def op_set_drive_modes(self, robot: str, modes: dict[str, str]) -> list[str]:
        self.engine.apply(robot, JointCommand(modes=modes))
        return self.engine.drive_modes(robot)

    def op_forward_kinematics(
        self, robot: str, q: Any = None, root_position: Any = None, root_rotation: Any = None
    ) -> dict[str, Any]:
        """World poses of every link for the given joints/root (default: the current ones), without
        moving anything."""
        poses = self.engine.forward_kinematics(robot, q, root_position, root_rotation)
        return {
            "links": [lk.name for lk in self.engine.body(robot).links],
            "positions": np.array([pp for pp, _ in poses]),
            "rotations": np.array([rr for _, rr in poses]),
        }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="hrpsim run simserver", description="Run the hrpsim simulator.")
    parser.add_argument("--project", required=True, help="the project file (YAML)")
    parser.add_argument("--until", type=float, help="sim time to stop at (default: the project's world.end_time)")
    parser.add_argument("--nameserver", help="nameserver address (default: $HRPSIM_NAMESERVER or port 2809)")
    parser.add_argument("--bind", default=DEFAULT_BIND, help="address for requests (default: %(default)s)")
    parser.add_argument("--name", default="simserver", help="name to register (default: %(default)s)")
    add_root_option(parser)
    when = parser.add_mutually_exclusive_group()
    when.add_argument(
        "--start",
        action="store_true",
        help="start the run as soon as the project's controllers have attached (default: wait for 'hrpsim sim start')",
    )
    when.add_argument("--start-now", action="store_true", help="start the run at once, controllers or not")
    parser.add_argument("--record", metavar="FILE.mcap", help="record every tick to this file (docs/recording.md)")
    parser.add_argument("--record-profile", choices=RECORD_PROFILES, help="ros2: also a ROS 2 bag beside the file")
    args = parser.parse_args(argv)
    setup_logging("simserver")
    try:
        project = load_project(args.project)
        apply_record_profile(project, args.record, args.record_profile)
        server = SimServer(
            project,
            nameserver=args.nameserver,
            bind=args.bind,
            until=args.until,
            name=args.name,
            roots=tuple(args.model_root),
            record=args.record,
        )
    except HrpsimError as exc:
        print(f"hrpsim run simserver: {exc}", file=sys.stderr)
        return 1
    if args.start:
        server.op_start(wait=None)
    elif args.start_now:
        server.op_start(wait=0)
    server.serve_forever()
    return 0
