"""Disturbances: pushes on links for a time, from the project, the Python API or the CLI.

A push (hrpsim.project.Push) acts over whole ticks: from the first tick that starts at or after
its ``time`` for ``round(duration / timestep)`` ticks (at least one), so its impulse is exactly
force x ticks x timestep. The tick loop calls :meth:`Disturbances.apply` once per tick, after the
tick's commands and before the step: the pushes of that tick are summed per link and handed to the
engine's external force (a force at the link origin and a torque, world frame; a push at another
point adds its lever's torque, from the link's pose this tick), and links no push acts on any more
are released. ``record.disturbances`` keeps what was applied, for the recorder, so a replay applies
the same forces at the same ticks.

Pushes are bounded (hrpsim.project): a force and a torque of at most 1e9 N and N m, a point within
1 km of the link's origin, and at most 1,000 pushes pending at once, so no push can overflow an
engine's integration and a tick's cost stays that of the pushes acting in it.
"""

from __future__ import annotations

import bisect
import heapq
import math
from collections.abc import Callable
from dataclasses import asdict
from typing import Any

import numpy as np

from hrpsim.engines.base import Engine
from hrpsim.errors import NotFound, RequestError
from hrpsim.project import MAX_PUSHES, Push, push_vector_problem
from hrpsim.simserver.tick_record import TickRecord
from hrpsim.transforms import quaternion_matrix

Link = tuple[str, str]  # (robot, link)


class Disturbances:
    """The run's pushes and the per-tick hook that applies them: those waiting for their first tick
    (by first tick) and those acting (in the order they were added, the order their forces are summed),
    so a tick costs what the pushes acting in it cost, however many wait."""

    def __init__(self, engine: Engine, *, changed: Callable[[], None] = lambda: None) -> None:
        self.engine = engine
        self.changed = changed  # called when pushes come while none acted, or the last has ended
        self.clear()

    @property
    def active(self) -> bool:
        """Whether a push waits, acts or holds a link: otherwise a tick need not call :meth:`apply`."""
        return bool(self._waiting or self._acting or self._held)

    def clear(self) -> None:
        """The project's pushes only (after a reset or a new project); nothing held on any link."""
        self._waiting: list[tuple[int, int, int, Push]] = []  # a heap of (first tick, order added, ticks, push)
        self._acting: list[tuple[int, int, Push]] = []  # (order added, the tick it ends before, push), by order
        self._added = 0
        self._held: set[Link] = set()
        for i, push in enumerate(self.engine.project.disturbances):
            self.add(push, where=f"{self.engine.project.path}: disturbances[{i}]")
        self.changed()

    def add(self, push: Push, *, where: str = "push") -> dict[str, Any]:
        """Schedule a push (one that starts before now starts now); what it will do, for the caller."""
        check_push(self.engine, push, where)
        if len(self.pending()) >= MAX_PUSHES:
            raise RequestError(
                f"{where}: {MAX_PUSHES} pushes are pending already, the most a run holds; wait until some have acted"
            )
        dt = self.engine.timestep
        first = max(self.engine.tick, math.ceil(push.time / dt - 1e-9))
        ticks = max(1, round(push.duration / dt))
        heapq.heappush(self._waiting, (first, self._added, ticks, push))
        self._added += 1
        self.changed()
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
        return {
            "waiting": list(self._waiting),
            "acting": list(self._acting),
            "added": self._added,
            "held": set(self._held),
        }

    def restore(self, memory: dict[str, Any]) -> None:
        self._waiting, self._acting = list(memory["waiting"]), list(memory["acting"])
        self._added, self._held = memory["added"], set(memory["held"])
        self.changed()

    def pending(self) -> list[Push]:
        """Pushes that have not ended yet, in the order they were added."""
        tick = self.engine.tick
        entries = [(order, push) for _, order, _, push in self._waiting]
        entries += [(order, push) for order, end, push in self._acting if end > tick]
        return [push for _, push in sorted(entries, key=lambda entry: entry[0])]

    def apply(self, record: TickRecord) -> None:
        """The hook: this tick's pushes onto the engine (and into ``record.disturbances``)."""
        tick = record.tick
        while self._waiting and self._waiting[0][0] <= tick:
            first, order, ticks, push = heapq.heappop(self._waiting)
            bisect.insort(self._acting, (order, first + ticks, push), key=lambda entry: entry[0])
        if not self._acting and not self._held:
            if not self._waiting:
                self.changed()  # nothing left to do: the ticks from the next on need not call here
            return
        wrenches: dict[Link, tuple[np.ndarray, np.ndarray]] = {}
        for _, end, push in self._acting:
            if tick < end:
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
        self._acting = [entry for entry in self._acting if entry[1] > tick + 1]

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
        _check_vector(where, name, getattr(push, name))
    if not (math.isfinite(push.duration) and push.duration > 0):
        raise RequestError(f"{where}.duration: give a positive number of seconds, got {push.duration!r}")
    if not (math.isfinite(push.time) and push.time >= 0):
        raise RequestError(f"{where}.time: give a time of zero or later, in seconds, got {push.time!r}")


def check_external_force(force: Any, torque: Any, where: str = "set_external_force") -> None:
    """A RequestError naming the field when a force or torque set on a link directly is not 3 finite
    numbers within a push's bounds."""
    _check_vector(where, "force", force)
    _check_vector(where, "torque", torque)


def _check_vector(where: str, name: str, value: Any) -> None:
    try:
        values = np.asarray(value, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        values = np.full(1, np.nan)
    if values.shape != (3,):
        raise RequestError(f"{where}.{name}: give 3 finite numbers, got {value!r}")
    if not np.all(np.isfinite(values)):
        raise RequestError(f"{where}.{name}: give 3 finite numbers, got non-finite {value!r}")
    if problem := push_vector_problem(name, values.tolist()):
        raise RequestError(f"{where}.{name}: {problem}")


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
