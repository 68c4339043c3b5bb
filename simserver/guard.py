"""The kernel's check for physically absurd states, for every engine: a robot link far below the
lowest point of every static model has fallen through the world (a missing collision pair, a
contact that gave way), and nothing that follows in the run means anything. Links that hang on
the robot through a slide joint are not checked: how far they go is that joint's value (the
fingers of an arm with no controller slide away along their unlimited joints, as in OpenHRP),
and the links above them still tell whether the robot fell through the world. The engines check
their own numeric limits (non-finite or exploding values); this bound comes from the world's
geometry, so it is computed here from the static models' shapes and poses.
"""

from __future__ import annotations

import numpy as np

from hrpsim.bodyinfo import Body, Shape
from hrpsim.engines.base import Engine
from hrpsim.errors import SimulationError
from hrpsim.transforms import quaternion_matrix

FAR_BELOW_M = 10.0  # m below the lowest static point: no robot gets there by walking, falling or being thrown
CHECK_EVERY = 10  # ticks between checks: a link that fell that far stays there for many more


class StateGuard:
    def __init__(self) -> None:
        self.engine: Engine | None = None
        self.floor: float | None = None  # z below which a robot link is absurd; None without static models
        self.checked: dict[str, np.ndarray] = {}  # robot -> indices of the links checked

    def begin(self, engine: Engine) -> None:
        self.engine = engine
        lowest = [lowest_point(engine, name) for name in engine.model_names if engine.is_static(name)]
        lowest = [z for z in lowest if z is not None]
        self.floor = min(lowest) - FAR_BELOW_M if lowest else None
        self.checked = {robot: links_not_on_slides(engine.body(robot)) for robot in engine.robots}

    def check(self, tick: int) -> None:
        """SimulationError naming robot and link when a link is below the bound."""
        if self.floor is None or self.engine is None or tick % CHECK_EVERY:
            return
        engine = self.engine
        for robot in engine.robots:
            checked = self.checked.get(robot)
            if checked is None:  # a robot added after begin()
                checked = self.checked[robot] = links_not_on_slides(engine.body(robot))
            z = engine.link_positions(robot)[checked, 2]
            if np.count_nonzero(z >= self.floor) == z.size:  # NaN compares False: it counts as below
                continue
            below = np.flatnonzero(~(z >= self.floor))
            if below.size:
                link = engine.body(robot).links[int(checked[below[0]])].name
                raise SimulationError(
                    f"simulation stopped at t={engine.time:.6g} s (tick {engine.tick}): model {robot!r} link {link!r} "
                    f"is at z = {z[below[0]]:.3g} m, more than {FAR_BELOW_M:g} m below the lowest point of every "
                    f"static model ({self.floor + FAR_BELOW_M:.3g} m): it fell through the world. Check the "
                    "project's collisions (a pair for this robot and the floor?) and its contact settings"
                )


def links_not_on_slides(body: Body) -> np.ndarray:
    """Indices of the links with no slide joint between them and the root."""

    def on_slide(index: int) -> bool:
        while index >= 0 and body.links[index].parent >= 0:
            if body.links[index].joint_type == "slide":
                return True
            index = body.links[index].parent
        return False

    return np.array([i for i in range(len(body.links)) if not on_slide(i)], dtype=int)


def lowest_point(engine: Engine, model: str) -> float | None:
    """The lowest z of a model's collision shapes in the world now (None: unbounded, e.g. a tilted plane)."""
    states = engine.link_states(model)
    lows: list[float] = []
    for index, link in enumerate(engine.body(model).links):
        rotation = quaternion_matrix(states.quaternions[index])
        for shape in link.shapes:
            low = _shape_lowest(shape, states.positions[index], rotation)
            if low is None:
                return None
            lows.append(low)
    return min(lows) if lows else None


def _shape_lowest(shape: Shape, link_position: np.ndarray, link_rotation: np.ndarray) -> float | None:
    center = link_position + link_rotation @ shape.translation
    rotation = link_rotation @ shape.rotation
    if shape.kind == "box":
        return float(center[2] - np.abs(rotation[2]) @ (np.asarray(shape.size) / 2))
    if shape.kind == "sphere":
        return float(center[2] - shape.radius)
    if shape.kind in ("cylinder", "cone", "capsule"):  # a bounding sphere: exact enough for a 10 m margin
        return float(center[2] - 2 * shape.radius - shape.height / 2)
    if shape.kind == "mesh":
        return float(center[2] + (shape.vertices @ rotation[2]).min()) if len(shape.vertices) else None
    # a plane: its own height when it faces up, unbounded when tilted
    return float(center[2]) if rotation[2, 2] > 1 - 1e-9 else None
