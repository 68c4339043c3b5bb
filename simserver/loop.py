"""The tick loop: controllers, collision, observers, integration, in the agreed order, plus the
bookkeeping a run summary needs (root start/end and lowest root height, wall time).

Per tick k: ``hub.poll(); hub.before_collide(k); world.collide(); publish (every N ticks);
hub.after_collide(k); world.integrate()``.
"""

from __future__ import annotations

import logging
import time
from typing import Any

import numpy as np
from hrpsim.engines.ode.engine import World
from hrpsim.simserver.publisher import StatePublisher

from hrpsim.errors import SimulationError
from hrpsim.runsummary import upright

log = logging.getLogger("hrpsim.simserver")


class TickLoop:
    def __init__(self, world: World, hub: Any | None, publisher: StatePublisher | None, publish_every: int) -> None:
        self.world = world
        self.hub = hub
        self.publisher = publisher
        self.publish_every = max(1, int(publish_every))
        self.realtime = world.project.world.sync == "realtime"
        self.clear()

    def clear(self) -> None:
        """Forget the run so far (after a reset)."""
        self.error: str | None = None
        self.wall_time = 0.0
        self._wall_start: float | None = None
        self._sim_start = self.world.time
        self._roots = self._root_records()

    def close(self) -> None:
        """Drop the root bodies held for tracking (ODE objects must not outlive the world's close)."""
        self._roots = {}

    def _root_records(self) -> dict[str, dict[str, Any]]:
        out = {}
        for name in self.world.robots:
            model = self.world.model(name)
            root = model.links[0]
            p, r = model.link_origin(root)
            out[name] = {"root_start": [float(v) for v in p], "min_root_z": float(p[2]),
                         "joints": len(model.joints), "upright_start": upright(r),
                         "body": root.body, "com": root.com}
        return out

    # --- running ---

    def begin(self) -> None:
        self._wall_start = time.perf_counter()
        self._sim_start = self.world.time

    def pause(self) -> None:
        if self._wall_start is not None:
            self.wall_time += time.perf_counter() - self._wall_start
            self._wall_start = None

    def run_for(self, until: float, budget_s: float) -> bool:
        """Tick until sim time ``until`` or ``budget_s`` of wall time; True when ``until`` is reached.
        Raises SimulationError (a controller policy or a bad state) with the world left readable."""
        world = self.world
        deadline = time.perf_counter() + budget_s
        end_tick = round(until / world.timestep)
        while world.tick < end_tick:
            self.tick_once()
            if self.realtime:
                self._pace()
            if time.perf_counter() >= deadline:
                break
        return world.tick >= end_tick

    def tick_once(self) -> None:
        world, hub = self.world, self.hub
        k = world.tick
        if hub is not None:
            hub.poll()
            hub.before_collide(k)
        world.collide()
        if self.publisher is not None and k % self.publish_every == 0:
            self.publisher.publish(self.frame())
        if hub is not None:
            hub.after_collide(k)
        world.integrate()
        self._track_roots()

    def _track_roots(self) -> None:
        for record in self._roots.values():
            body, com = record["body"], record["com"]
            if body is None:
                continue
            r = body.getRotation()
            z = body.getPosition()[2] - (r[6] * com[0] + r[7] * com[1] + r[8] * com[2])
            if z < record["min_root_z"]:
                record["min_root_z"] = z

    def _pace(self) -> None:
        if self._wall_start is None:
            return
        ahead = (self.world.time - self._sim_start) - (time.perf_counter() - self._wall_start)
        if ahead > 0.0005:
            time.sleep(ahead)

    def fail(self, exc: SimulationError) -> None:
        self.error = str(exc)
        log.error("run stopped: %s", exc)

    # --- reports ---

    def frame(self) -> dict[str, Any]:
        world = self.world
        bodies = {}
        for name, model in world.models.items():
            entry: dict[str, Any] = {"poses": model.link_poses()}
            if not model.static:
                entry["q"] = model.joint_values()
            bodies[name] = entry
        return {"time": world.time, "tick": world.tick, "bodies": bodies}

    def elapsed_wall(self) -> float:
        running = 0.0 if self._wall_start is None else time.perf_counter() - self._wall_start
        return self.wall_time + running

    def real_time_factor(self) -> float | None:
        wall = self.elapsed_wall()
        return (self.world.time / wall) if wall > 0 else None

    def robots(self) -> dict[str, Any]:
        out = {}
        for name, record in self._roots.items():
            model = self.world.model(name)
            p, _ = model.link_origin(model.links[0])
            end = [float(v) for v in p] if np.all(np.isfinite(p)) else None
            out[name] = {"root_start": record["root_start"], "root_end": end,
                         "min_root_z": float(record["min_root_z"]), "joints": record["joints"],
                         "upright_start": record["upright_start"]}
        return out
