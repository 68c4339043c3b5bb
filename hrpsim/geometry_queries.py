"""What a collision-geometry library is asked and answers, whichever library it is: the scene it
reads (the collision service's, hrpsim.collision.scene, seen through the protocols below), the
contacts of a link pair and the hits of rays. ODE (engines/ode/scene.py, rays.py) and MuJoCo
(engines/mujoco/scene.py) answer in these types; hrpsim.collision.geometry picks one.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from hrpsim.bodyinfo import Body
from hrpsim.sensor_mounts import scan_angles


class LinkPair(Protocol):
    """Two links by body name and link index."""

    body1: str
    link1: int
    body2: str
    link2: int


class SceneBody(Protocol):
    """One body of a scene at its link poses; ``extra`` keeps each library's geometry of it (``extra["ode"]``)."""

    name: str
    body: Body
    poses: np.ndarray  # (n_links, 4, 4) world poses of the link frames
    bound_radii: np.ndarray  # (n_links,)
    extra: dict[str, Any]

    def world_bound_centers(self) -> np.ndarray: ...


class PosedScene(Protocol):
    """Bodies by name, and which of some pairs are near enough to touch; ``extra`` keeps what a
    library builds of the whole scene (``extra["mujoco"]``)."""

    bodies: dict[str, SceneBody]
    extra: dict[str, Any]

    def body(self, name: str) -> SceneBody: ...

    def near_pairs(self, pairs: Iterable[LinkPair]) -> list[LinkPair]: ...


@dataclass
class PairContacts:
    pair: LinkPair
    position: np.ndarray  # (k, 3)
    normal: np.ndarray  # (k, 3), into link1
    depth: np.ndarray  # (k,)


@dataclass
class Hits:
    """Per ray: distance (inf for none), the body and link hit, the point and surface normal."""

    distance: np.ndarray  # (R,)
    body: list[str]
    link: list[str]
    point: np.ndarray  # (R, 3), NaN for none
    normal: np.ndarray  # (R, 3), NaN for none

    @classmethod
    def empty(cls, n: int) -> Hits:
        return cls(np.full(n, np.inf), [""] * n, [""] * n, np.full((n, 3), np.nan), np.full((n, 3), np.nan))

    def offer(self, ray: int, distance: float, body: str, link: str, point: np.ndarray, normal: np.ndarray) -> None:
        if distance < self.distance[ray]:
            self.distance[ray] = distance
            self.body[ray], self.link[ray] = body, link
            self.point[ray], self.normal[ray] = point, normal


def scan_directions(angle_range: float, step: float) -> tuple[np.ndarray, np.ndarray]:
    """Beam angles and unit directions (sensor frame) of an OpenHRP range scan."""
    angles = scan_angles(angle_range, step)
    directions = np.stack([-np.sin(angles), np.zeros_like(angles), -np.cos(angles)], axis=1)
    return angles, directions
