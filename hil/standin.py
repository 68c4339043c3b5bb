"""A hardware-in-the-loop stand-in: the simulator's side of the tick protocol for one robot, without
physics, so a controller runs against it unchanged (same runner, same messages, same nameserver).

    hrpsim run hil --project P.yaml --robot NAME [--replay FILE.pos] [--until T]

The joints follow the controller's commands kinematically (controllers/kinematic_world.py), or,
with ``--replay``, replay recorded joint angles (an OpenHRP motion table: time + one column per
joint) whatever the controller sends, as a robot whose data is played back would. It is paced by the
wall clock (``realtime``) unless ``--lockstep``. It registers as kind ``simserver`` with
``metadata.controllers`` and answers ``start(until)``, ``status()``, ``summary()`` and ``quit`` like
the simulator, so ``hrpsim launch``-style supervision works on it too.
"""

from __future__ import annotations

import argparse
import logging
import time
from pathlib import Path
from typing import Any

import numpy as np
from hrpsim.engines.kinematic.engine import KinematicWorld
from hrpsim.hil.motion_data import Motion, read_motion
from hrpsim.simserver.hub import ControllerHub

from hrpsim.bodyinfo import Body
from hrpsim.errors import ConfigError, HrpsimError, SimulationError
from hrpsim.logs import setup_logging
from hrpsim.placement import root_placement
from hrpsim.project import Project, load_project
from hrpsim.service import DEFAULT_BIND, Operation, Service

log = logging.getLogger("hrpsim.hil")

BATCH_S = 0.005  # wall seconds of ticking between looks at the request socket


class ReplayWorld(KinematicWorld):
    """Joint angles come from a recording; commands are checked and counted but do not move the robot."""

    def __init__(self, bodies: dict[str, Body], motion: Motion, **kwargs: Any) -> None:
        super().__init__(bodies, **kwargs)
        self.motion = motion
        for robot in self.robots:
            n = len(self.body(robot).joints)
            if motion.values.shape[1] != n:
                raise ConfigError(f"replay data has {motion.values.shape[1]} joint columns, robot {robot!r} "
                                  f"has {n} joints")

    def integrate(self) -> None:
        before = self.motion.at(self.time)
        super().integrate()
        after = self.motion.at(self.time)
        for robot in self.robots:
            r = self._robot(robot)
            r.q[:] = after
            r.dq[:] = (after - before) / self.timestep


class HardwareStandIn(Service):
    kind = "simserver"

    def __init__(self, project: Project, robot: str, body: Body, *, replay: Motion | None = None,
                 lockstep: bool = False, until: float | None = None, name: str = "hil",
                 nameserver: str | None = None, bind: str = DEFAULT_BIND) -> None:
        self.project = project
        self.project.world.sync = "lockstep" if lockstep else "realtime"
        initial = _initial(project, robot, body)
        world_args: dict[str, Any] = {"timestep": project.world.timestep, "initial": {robot: initial},
                                      "positions": {robot: root_placement(project.model(robot), body)[0]}}
        bodies = {robot: body}
        self.world = ReplayWorld(bodies, replay, **world_args) if replay else KinematicWorld(bodies, **world_args)
        self.hub = ControllerHub(self.world, project)
        self.until = until if until is not None else project.world.end_time
        self.running = False
        self.error: str | None = None
        self._wall_start = 0.0
        self._sim_start = 0.0
        super().__init__(name, bind=bind, nameserver=nameserver)

    def metadata(self) -> dict[str, Any]:
        return {**super().metadata(), "controllers": self.hub.endpoint, "robots": self.world.robots, "hil": True}

    def operations(self) -> dict[str, Operation]:
        return {"start": self.op_start, "status": self.op_status, "summary": self.op_summary}

    def op_start(self, until: float | None = None) -> dict[str, Any]:
        if until is not None:
            self.until = float(until)
        self.running, self.error = True, None
        self._wall_start, self._sim_start = time.perf_counter(), self.world.time
        return self.op_status()

    def op_status(self) -> dict[str, Any]:
        return {"time": self.world.time, "tick": self.world.tick, "running": self.running,
                "finished": (not self.running and self.world.time >= self.until - 1e-12) or self.error is not None,
                "error": self.error}

    def op_summary(self) -> dict[str, Any]:
        return {"sim_time": self.world.time, "ticks": self.world.tick, "controllers": self.hub.summary(),
                "error": self.error}

    def on_idle(self) -> None:
        if not self.running:
            self.hub.poll()
            return
        deadline = time.perf_counter() + BATCH_S
        end_tick = round(self.until / self.world.timestep)
        try:
            while self.world.tick < end_tick and time.perf_counter() < deadline:
                self._tick()
        except SimulationError as exc:
            self.error = str(exc)
            log.error("run stopped: %s", exc)
            self.running = False
        if self.world.tick >= end_tick:
            self.running = False
            log.info("run finished at t=%.4f s", self.world.time)

    @property
    def idle_interval(self) -> float:  # type: ignore[override]
        return 0.0 if self.running else 0.02

    def _tick(self) -> None:
        k = self.world.tick
        self.hub.poll()
        self.hub.before_collide(k)
        self.world.collide()
        self.hub.after_collide(k)
        self.world.integrate()
        if not self.hub.lockstep:  # paced by the wall clock, as hardware is
            ahead = (self.world.time - self._sim_start) - (time.perf_counter() - self._wall_start)
            if ahead > 0.0005:
                time.sleep(ahead)

    def close(self) -> None:
        self.hub.close()
        super().close()


def _initial(project: Project, robot: str, body: Body) -> np.ndarray:
    values = project.model(robot).joints
    unknown = sorted(set(values) - set(body.joint_names))
    if unknown:
        raise ConfigError(f"{project.path}: models.{robot}.joints: unknown joint(s) {', '.join(unknown)}")
    return np.array([values.get(n, 0.0) for n in body.joint_names])


def _body(project: Project, robot: str, nameserver: str | None, local: bool) -> Body:
    model = project.model(robot)
    if local:
        from hrpsim.modelloader import load_body  # the loader in this process instead of the service

        return load_body(model.file)
    from hrpsim.models import fetch_body

    result = fetch_body(model.file, nameserver=nameserver, options=model.options or None)
    return result if isinstance(result, Body) else Body.from_wire(result)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="hrpsim run hil", description=__doc__.split("\n\n")[0])
    p.add_argument("--project", required=True, type=Path, help="project file: the robot's model, placement, "
                   "time step and controllers")
    p.add_argument("--robot", required=True, help="the model to stand in for")
    p.add_argument("--replay", type=Path, help="play back joint angles from this motion table instead")
    p.add_argument("--lockstep", action="store_true", help="wait for controllers instead of the wall clock")
    p.add_argument("--until", type=float, help="sim time to stop at (default: the project's end_time)")
    p.add_argument("--start", action="store_true", help="start at once instead of waiting for 'start'")
    p.add_argument("--name", default="hil", help="name to register (default hil)")
    p.add_argument("--nameserver", help="nameserver address (default $HRPSIM_NAMESERVER or port 2809)")
    p.add_argument("--local-loader", action="store_true", help="load the model in this process")
    args = p.parse_args(argv)
    setup_logging("hil")
    try:
        project = load_project(args.project)
        if args.robot not in [m.name for m in project.models]:
            raise ConfigError(f"{args.project}: no model named {args.robot!r}")
        body = _body(project, args.robot, args.nameserver, args.local_loader)
        replay = read_motion(args.replay, joints=len(body.joints)) if args.replay else None
        stand_in = HardwareStandIn(project, args.robot, body, replay=replay, lockstep=args.lockstep,
                                   until=args.until, name=args.name, nameserver=args.nameserver)
    except HrpsimError as exc:
        log.error("%s", exc)
        return 2
    if args.start:
        stand_in.op_start()
    stand_in.serve_forever()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
