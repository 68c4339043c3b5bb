"""Disturbances: pushes on links for a time, from the project, the Python API or the CLI.

A push (hrpsim.project.Push) acts over whole ticks: from the first tick that starts at or after
its ``time`` for ``round(duration / timestep)`` ticks (at least one), so its impulse is exactly
force x ticks x timestep. The tick loop calls :meth:`Disturbances.apply` once per tick, after the
tick's commands and before the step: the pushes of that tick are summed per link and handed to the
engine's external force (a force at the link origin and a torque, world frame; a push at another
point adds its lever's torque, from the link's pose this tick), and links no push acts on any more
are released. ``record.disturbances`` keeps what was applied, for the recorder, so a replay applies
the same forces at the same ticks.
"""

from __future__ import annotations

import math
from dataclasses import asdict
from typing import Any

import numpy as np

from hrpsim.engines.base import Engine
from hrpsim.errors import NotFound, RequestError
from hrpsim.project import Push
from hrpsim.simserver.record import TickRecord
from hrpsim.transforms import quaternion_matrix

Link = tuple[str, str]  # (robot, link)


class Disturbances:
    """The run's pushes and the per-tick hook that applies them."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.clear()

    def clear(self) -> None:
        """The project's pushes only (after a reset or a new project); nothing held on any link."""
        self._pushes: list[tuple[int, int, Push]] = []  # (first tick, ticks, push)
        self._held: set[Link] = set()
        for i, push in enumerate(self.engine.project.disturbances):
            self.add(push, where=f"{self.engine.project.path}: disturbances[{i}]")

    def add(self, push: Push, *, where: str = "push") -> dict[str, Any]:
        """Schedule a push (one that starts before now starts now); what it will do, for the caller."""
        check_push(self.engine, push, where)
        dt = self.engine.timestep
        first = max(self.engine.tick, math.ceil(push.time / dt - 1e-9))
        ticks = max(1, round(push.duration / dt))
        self._pushes.append((first, ticks, push))
        impulse = np.asarray(push.force, float) * ticks * dt
        return {"start": first * dt, "duration": ticks * dt, "impulse": impulse.tolist(), **asdict(push)}

    def push(
        self,
        robot: str,
        link: str,
        force: Any,
        *,
        duration: float,
        time: float | None = None,
        point: Any = None,
        torque: Any = None,
    ) -> dict[str, Any]:
        """Push ``link`` of ``robot`` with ``force`` (N, world) at ``point`` (m, link frame; default the
        link origin), plus ``torque`` (N m, world), for ``duration`` s from ``time`` (default: now)."""
        push = Push(
            time=self.engine.time if time is None else _number("time", time),
            robot=robot,
            link=link,
            force=_floats(force),
            duration=_number("duration", duration),
            point=[0.0, 0.0, 0.0] if point is None else _floats(point),
            torque=[0.0, 0.0, 0.0] if torque is None else _floats(torque),
        )
        return self.add(push)

    def memory(self) -> dict[str, Any]:
        """The pushes scheduled and the links held, for a snapshot."""
        return {"pushes": list(self._pushes), "held": set(self._held)}

    def restore(self, memory: dict[str, Any]) -> None:
        self._pushes, self._held = list(memory["pushes"]), set(memory["held"])

    def pending(self) -> list[Push]:
        """Pushes that have not ended yet."""
        return [p for first, ticks, p in self._pushes if first + ticks > self.engine.tick]

    def apply(self, record: TickRecord) -> None:
        """The hook: this tick's pushes onto the engine (and into ``record.disturbances``)."""
        if not self._pushes and not self._held:
            return
        tick = record.tick
        wrenches: dict[Link, tuple[np.ndarray, np.ndarray]] = {}
        for first, ticks, push in self._pushes:
            if first <= tick < first + ticks:
                force, torque = wrenches.setdefault((push.robot, push.link), (np.zeros(3), np.zeros(3)))
                force += push.force
                torque += np.asarray(push.torque, float) + np.cross(self._lever(record, push), push.force)
        for robot, link in self._held - wrenches.keys():
            self.engine.set_external_force(robot, link, [0.0, 0.0, 0.0])
        for (robot, link), (force, torque) in wrenches.items():
            self.engine.set_external_force(robot, link, force, torque)
            record.disturbances.append(
                {"robot": robot, "link": link, "force": force.tolist(), "torque": torque.tolist()}
            )
        self._held = set(wrenches)
        self._pushes = [entry for entry in self._pushes if entry[0] + entry[1] > tick + 1]

    def _lever(self, record: TickRecord, push: Push) -> np.ndarray:
        """The push point's offset from the link origin, world frame."""
        if not any(push.point):
            return np.zeros(3)
        index = self.engine.body(push.robot).link_index(push.link)
        rotation = quaternion_matrix(record.links(push.robot).quaternions[index])
        return rotation @ np.asarray(push.point, float)


def check_push(engine: Engine, push: Push, where: str) -> None:
    """A RequestError (NotFound for a name) saying which field of the push is wrong and how."""
    if type(engine).set_external_force is Engine.set_external_force:
        raise RequestError(f"{where}: the {engine.name} engine applies no external forces; push on ode or mujoco")
    if push.robot not in engine.robots:
        raise NotFound(f"{where}.robot: no robot named {push.robot!r} (robots: {', '.join(engine.robots)})")
    body = engine.body(push.robot)
    if push.link not in {lk.name for lk in body.links}:
        links = ", ".join(lk.name for lk in body.links)
        raise NotFound(f"{where}.link: robot {push.robot!r} has no link {push.link!r} (links: {links})")
    for name in ("force", "point", "torque"):
        values = np.asarray(getattr(push, name), dtype=float).reshape(-1)
        if values.shape != (3,) or not np.all(np.isfinite(values)):
            raise RequestError(f"{where}.{name}: give 3 finite numbers, got {getattr(push, name)!r}")
    if not (math.isfinite(push.duration) and push.duration > 0):
        raise RequestError(f"{where}.duration: give a positive number of seconds, got {push.duration!r}")
    if not (math.isfinite(push.time) and push.time >= 0):
        raise RequestError(f"{where}.time: give a time of zero or later, in seconds, got {push.time!r}")


def replay_forces(engine: Engine, applied: list[dict[str, Any]], held: set[Link]) -> set[Link]:
    """Apply one tick's recorded disturbances; release links the previous tick held and this one
    does not. Returns the links now held."""
    now = {(a["robot"], a["link"]) for a in applied}
    for robot, link in held - now:
        engine.set_external_force(robot, link, [0.0, 0.0, 0.0])
    for a in applied:
        engine.set_external_force(a["robot"], a["link"], a["force"], a["torque"])
    return now


def _number(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise RequestError(f"push.{name}: give a number of seconds, got {value!r}")
    return float(value)


def _floats(values: Any) -> list[float]:
    try:
        return [float(v) for v in np.asarray(values, dtype=float).reshape(-1)]
    except (TypeError, ValueError):
        raise RequestError(f"push: give 3 numbers for a vector, got {values!r}") from None
