"""The simulator process: ``hrpsim run simserver --project FILE [--until T] [--nameserver ADDR] [--bind ADDR]``.

Registers as ``simserver`` (kind ``simserver``) with the endpoints of its world-state stream
(``state``) and controller hub (``controllers``) in its metadata. Operations, in the spirit of
OpenHRP's DynamicsSimulator:

- run control: ``init(project=None)`` (reload the project, or load another, and rebuild),
  ``start(until=None)`` (run in the background of the serving loop; returns at once),
  ``pause()``, ``step(n=1)`` (when paused), ``reset()``, ``status()``, ``summary()``;
- data: ``models()``, ``state(robot)``, ``sensor_state(robot)``, ``world_state()``,
  ``get_link_data(robot, link)``, ``set_link_data(robot, q, dq, root_position, root_rotation,
  root_velocity)``, ``set_external_force(robot, link, force, torque)``,
  ``command(robot, torque, q_ref, dq_ref, modes)``, ``set_drive_modes(robot, modes)``,
  ``forward_kinematics(robot, q, root_position, root_rotation)``.

While running, requests are answered between batches of ticks (every few milliseconds). A run
stopped by an error (a bad state, a controller policy) leaves the process serving, with the
error in ``status`` and ``summary``, until ``quit``.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import zmq
from hrpsim.engines.ode.engine import World
from hrpsim.engines.ode.placement import current_link_values
from hrpsim.simserver.bodies import load_bodies
from hrpsim.simserver.hub import ControllerHub
from hrpsim.simserver.loop import TickLoop
from hrpsim.simserver.publisher import StatePublisher

from hrpsim.errors import HrpsimError, RequestError, SimulationError
from hrpsim.files import ReadPolicy, add_root_option, model_roots, reading_under
from hrpsim.kinematics import forward_kinematics
from hrpsim.logs import setup_logging
from hrpsim.naming import sibling_bind
from hrpsim.project import Project, load_project
from hrpsim.runsummary import empty_summary
from hrpsim.service import DEFAULT_BIND, Operation, Service

log = logging.getLogger("hrpsim.simserver")

TICK_BATCH_S = 0.005  # wall seconds of ticking between looks at the request socket
CONTROLLER_WAIT_S = 30.0  # how long start() waits for the project's controllers to attach


class SimServer(Service):
    kind = "simserver"

    def __init__(self, project: Project, *, nameserver: str | None = None, bind: str = DEFAULT_BIND,
                 until: float | None = None, name: str = "simserver", register: bool = True,
                 context: zmq.Context | None = None, roots: tuple[str, ...] = ()) -> None:
        self.project = project
        self.nameserver = nameserver
        self.read_policy = ReadPolicy(roots=(Path(project.path).parent, *model_roots(roots)))
        self.until = until
        ctx = context or zmq.Context.instance()
        self.world = World(project, load_bodies(project, nameserver), nameserver=nameserver)
        self.publisher = StatePublisher(ctx, bind=sibling_bind(bind, "state"))
        self.hub = ControllerHub(self.world, project, context=ctx, bind=sibling_bind(bind, "controllers"))
        self.loop = TickLoop(self.world, self.hub, self.publisher, project.world.publish_every)
        self.running = False
        self.finished = False
        self._waiting_since: float | None = None
        self._target = self._end_time(until)
        super().__init__(name, bind=bind, nameserver=nameserver, register=register, context=ctx)

    def _end_time(self, until: float | None) -> float:
        return float(self.project.world.end_time if until is None else until)

    def metadata(self) -> dict[str, Any]:
        meta = {"pid": os.getpid(), "state": self.publisher.endpoint, "project": self.project.path}
        if self.hub is not None:
            meta["controllers"] = self.hub.endpoint
        return meta

    def operations(self) -> dict[str, Operation]:
        return {
            "init": self.op_init, "load": self.op_init, "start": self.op_start, "pause": self.op_pause,
            "step": self.op_step, "reset": self.op_reset, "status": self.op_status, "summary": self.op_summary,
            "models": self.op_models, "state": self.op_state, "sensor_state": self.op_sensor_state,
            "world_state": self.op_world_state, "get_link_data": self.op_get_link_data,
            "set_link_data": self.op_set_link_data, "set_external_force": self.op_set_external_force,
            "command": self.op_command, "set_drive_modes": self.op_set_drive_modes,
            "forward_kinematics": self.op_forward_kinematics,
        }

    def roles(self) -> dict[str, str]:  # run control and set_* need admin (the default)
        return {**dict.fromkeys(["status", "summary", "models", "state", "sensor_state", "world_state",
                                 "get_link_data", "forward_kinematics"], "observer"),
                "command": "controller", "set_drive_modes": "controller"}

    # --- the serving loop ---

    def serve_forever(self, *, install_signals: bool = True) -> None:
        if install_signals:
            self.install_signal_handlers()
        self.start()
        try:
            while not self.stopping:
                if self.running:
                    self.serve_pending(0.0)
                    self._advance()
                else:
                    self.serve_pending(0.02)
                    if self._waiting_since is not None:
                        self._wait_for_controllers()
                    elif self.hub is not None:
                        self.hub.poll()
        finally:
            self.close()

    def _advance(self) -> None:
        try:
            if self.loop.run_for(self._target, TICK_BATCH_S):
                self._finish(None)
        except SimulationError as exc:
            self.loop.fail(exc)
            self._finish(str(exc))
        except Exception as exc:  # a bug must stop the run, not the process: the state stays readable
            log.exception("the tick loop failed")
            self.loop.fail(SimulationError(f"internal error in the tick loop at t={self.world.time:.6g} s: "
                                           f"{type(exc).__name__}: {exc}"))
            self._finish(self.loop.error)

    def _finish(self, error: str | None) -> None:
        self.running = False
        self.finished = True
        self.loop.pause()
        # Controllers stay attached until quit (hub.close says bye): a launcher reads the summary
        # first, and a later start() can go on with them.
        log.info("run %s at t=%.4f s (tick %d)", "stopped" if error else "finished", self.world.time, self.world.tick)

    def _wait_for_controllers(self) -> None:
        names = [c.name for c in self.project.controllers]
        missing = self.hub.wait_for_controllers(names, 0.05)
        if not missing:
            self._waiting_since = None
            self._begin()
        elif time.monotonic() - self._waiting_since > CONTROLLER_WAIT_S:
            self._waiting_since = None
            message = f"controller(s) {', '.join(missing)} did not attach within {CONTROLLER_WAIT_S:g} s"
            self.loop.error = message
            self._finish(message)

    def _begin(self) -> None:
        self.running = True
        self.loop.begin()

    def close(self) -> None:
        if self.hub is not None:
            self.hub.close()
        self.publisher.close()
        self.loop.close()
        self.world.release()
        super().close()

    # --- run control ---

    def op_init(self, project: str | None = None) -> dict[str, Any]:
        self._require_idle("init")
        with reading_under(self.read_policy):  # a peer's project: only from the allowed folders
            proj = load_project(project) if project else load_project(self.project.path)
            bodies = load_bodies(proj, self.nameserver)
        self.world.rebuild(proj, bodies)
        self.hub.reconfigure(proj)
        self.project = proj
        self._target = self._end_time(self.until)
        return self.op_reset()

    def op_start(self, until: float | None = None) -> dict[str, Any]:
        if self.running or self._waiting_since is not None:
            return self.op_status()
        if self.loop.error is not None:
            raise SimulationError(f"the run stopped with an error; reset first: {self.loop.error}")
        self._target = self._end_time(until if until is not None else self.until)
        self.finished = False
        if self.hub is not None and self.project.controllers:
            self._waiting_since = time.monotonic()
        else:
            self._begin()
        return self.op_status()

    def op_pause(self) -> dict[str, Any]:
        self.running = False
        self._waiting_since = None
        self.loop.pause()
        return self.op_status()

    def op_step(self, n: int = 1) -> dict[str, Any]:
        self._require_idle("step")
        if not isinstance(n, int) or n < 1:
            raise RequestError(f"step: n must be a positive integer, got {n!r}")
        try:
            for _ in range(n):
                self.loop.tick_once()
        except SimulationError as exc:
            self.loop.fail(exc)
            raise
        return self.op_status()

    def op_reset(self) -> dict[str, Any]:
        self._require_idle("reset")
        self.world.reset()
        self.loop.clear()
        self.finished = False
        return self.op_status()

    def _require_idle(self, op: str) -> None:
        if self.running or self._waiting_since is not None:
            raise RequestError(f"{op}: the simulation is running; pause it first")

    def op_status(self) -> dict[str, Any]:
        return {"time": self.world.time, "tick": self.world.tick, "running": self.running or
                self._waiting_since is not None, "finished": self.finished, "error": self.loop.error,
                "real_time_factor": self.loop.real_time_factor(), "wall_time": self.loop.elapsed_wall(),
                "end_time": self._target}

    def op_summary(self) -> dict[str, Any]:
        return empty_summary(
            sim_time=self.world.time, wall_time=self.loop.elapsed_wall(),
            real_time_factor=self.loop.real_time_factor(), ticks=self.world.tick, robots=self.loop.robots(),
            controllers=self.hub.summary() if self.hub is not None else {}, error=self.loop.error,
            published=self.publisher.sent, dropped_frames=self.publisher.dropped,
        )

    # --- data ---

    def op_models(self) -> dict[str, Any]:
        return {name: {"static": m.static, "links": [lk.name for lk in m.info.links], "joints": m.joint_names,
                       "modes": None if m.static else list(self.world.drives[name].modes),
                       "sensors": [{"name": s.name, "type": s.type, "link": m.info.links[s.link].name}
                                   for s in m.info.sensors]}
                for name, m in self.world.models.items()}

    def op_state(self, robot: str) -> dict[str, Any]:
        return self.world.state(robot)

    def op_sensor_state(self, robot: str) -> dict[str, Any]:
        return self.world.state(robot)["sensors"]

    def op_world_state(self) -> dict[str, Any]:
        return self.loop.frame()

    def op_get_link_data(self, robot: str, link: str) -> dict[str, Any]:
        model = self.world.model(robot)
        try:
            sim = model.links[model.info.link_index(link)]
        except KeyError as exc:
            raise RequestError(str(exc.args[0])) from None
        p, r = model.link_origin(sim)
        v, w = model.link_velocity(sim)
        out = {"position": p, "rotation": r, "linear_velocity": v, "angular_velocity": w,
               "joint_value": model.joint_value(sim), "joint_velocity": model.joint_rate(sim)}
        if sim in model.joints and not model.static:
            out["joint_torque"] = float(self.world.drives[robot].applied()[model.joints.index(sim)])
        return out

    def op_set_link_data(self, robot: str, q: Any = None, dq: Any = None, root_position: Any = None,
                         root_rotation: Any = None, root_velocity: Any = None) -> dict[str, Any]:
        self.world.set_link_data(robot, q=q, dq=dq, root_position=root_position, root_rotation=root_rotation,
                                 root_velocity=root_velocity)
        return self.world.state(robot)

    def op_set_external_force(self, robot: str, link: str, force: Any, torque: Any = (0.0, 0.0, 0.0)) -> bool:
        self.world.set_external_force(robot, link, force, torque)
        return True

    def op_command(self, robot: str, torque: Any = None, q_ref: Any = None, dq_ref: Any = None,
                   modes: dict[str, str] | None = None) -> bool:
        self.world.command(robot, torque=torque, q_ref=q_ref, dq_ref=dq_ref, modes=modes)
        return True

    def op_set_drive_modes(self, robot: str, modes: dict[str, str]) -> list[str]:
        self.world.command(robot, modes=modes)
        return list(self.world.drives[robot].modes)

    def op_forward_kinematics(self, robot: str, q: Any = None, root_position: Any = None,
                              root_rotation: Any = None) -> dict[str, Any]:
        """World poses of every link for the given joints/root (default: the current ones), without
        moving anything."""
        model = self.world.model(robot)
        values, _ = current_link_values(model)
        if q is not None:
            arr = np.asarray(q, dtype=np.float64).reshape(-1)
            if arr.shape != (len(model.joints),) or not np.all(np.isfinite(arr)):
                raise RequestError(f"forward_kinematics: q must be {len(model.joints)} finite numbers")
            for k, sim in enumerate(model.joints):
                values[sim.index] = arr[k]
        p0, r0 = model.link_origin(model.links[0])
        p = p0 if root_position is None else np.asarray(root_position, float).reshape(3)
        r = r0 if root_rotation is None else np.asarray(root_rotation, float).reshape(3, 3)
        poses = forward_kinematics(model.info, p, r, values)
        return {"links": [lk.name for lk in model.info.links],
                "positions": np.array([pp for pp, _ in poses]), "rotations": np.array([rr for _, rr in poses])}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="hrpsim run simserver", description="Run the hrpsim simulator.")
    parser.add_argument("--project", required=True, help="the project file (YAML)")
    parser.add_argument("--until", type=float, help="sim time to stop at (default: the project's world.end_time)")
    parser.add_argument("--nameserver", help="nameserver address (default: $HRPSIM_NAMESERVER or port 2809)")
    parser.add_argument("--bind", default=DEFAULT_BIND, help="address for requests (default: %(default)s)")
    parser.add_argument("--name", default="simserver", help="name to register (default: %(default)s)")
    add_root_option(parser)
    parser.add_argument("--start", action="store_true", help="start the run at once instead of waiting for 'start'")
    args = parser.parse_args(argv)
    setup_logging("simserver")
    try:
        server = SimServer(load_project(args.project), nameserver=args.nameserver, bind=args.bind,
                           until=args.until, name=args.name, roots=tuple(args.model_root))
    except HrpsimError as exc:
        print(f"hrpsim run simserver: {exc}", file=sys.stderr)
        return 1
    if args.start:
        server.op_start()
    server.serve_forever()
    return 0
