"""The ``elements`` of a Choreonoid link: Transform, Group, Skip, Shape, Visual, Collision,
RigidBody, Resource and devices, walked with the placement each node adds.

Choreonoid's rules: an ``elements`` value is a list of typed mappings, one typed mapping, or a
mapping from type names to nodes; Transform (and every node that may carry a pose: RigidBody,
Visual, Collision, Resource, Shape, devices) composes translation, rotation and scale; shapes
under Visual are drawn only, under Collision collide only, elsewhere do both; a Visual inside a
Collision (or the reverse) is an error. RigidBody masses combine with the link's own.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from hrpsim.bodyinfo import Sensor, Shape
from hrpsim.modelloader.body_devices import is_device, read_device
from hrpsim.modelloader.body_geometry import read_shape
from hrpsim.modelloader.body_resources import Resources
from hrpsim.modelloader.body_values import BodyFile
from hrpsim.modelloader.body_variants import TRACK_DEVICES
from hrpsim.modelloader.body_yaml import YMap
from hrpsim.modelloader.openhrp_mass import inertia_problem, nearest_inertia

BOTH, VISUAL, COLLISION = "both", "visual", "collision"
# Scene nodes that draw something but have no body: a viewer's business.
SCENE_ONLY = ("LineSet", "Text", "Fog", "PerspectiveCamera", "OrthographicCamera")
_MAX_DEPTH = 64


@dataclass
class RigidPart:
    """A mass in the link frame: its centre of mass and inertia about it."""

    mass: float
    com: np.ndarray
    inertia: np.ndarray


@dataclass
class LinkParts:
    """What a link's elements hold."""

    plain: list[Shape] = field(default_factory=list)
    visual: list[Shape] = field(default_factory=list)
    collision: list[Shape] = field(default_factory=list)
    split: bool = False  # a Visual or Collision node was met
    rigid: list[RigidPart] = field(default_factory=list)
    sensors: list[tuple[Sensor, str]] = field(default_factory=list)  # with where each was written
    notes: list[str] = field(default_factory=list)

    def shapes(self) -> tuple[list[Shape], list[Shape]]:
        """(collision shapes, visual shapes); no visual list when both are the same."""
        if not self.split:
            return self.plain, []
        return self.plain + self.collision, self.plain + self.visual


class ElementWalk:
    def __init__(self, resources: Resources, link: int, parts: LinkParts) -> None:
        self.resources = resources
        self.link = link
        self.parts = parts
        self.depth = 0

    def contents(self, file: BodyFile, value: Any, transform: np.ndarray, mode: str) -> None:
        """Read an ``elements`` value in any of its three forms."""
        if isinstance(value, list):
            for item in value:
                if not isinstance(item, YMap) or "type" not in item:
                    file.add(item if isinstance(item, YMap) else value, "elements", "each element needs a type")
                    continue
                self.node(file, item, str(item["type"]), transform, mode)
        elif isinstance(value, YMap) and "type" in value:
            self.node(file, value, str(value["type"]), transform, mode)
        elif isinstance(value, YMap):
            for kind, item in value.items():
                if not isinstance(item, YMap):
                    file.add(value, f"element {kind}", "must be a mapping", kind)
                elif "type" in item and item["type"] != kind:
                    file.add(item, f"element {kind}", f"type {item['type']!r} differs from its key {kind!r}", "type")
                else:
                    self.node(file, item, kind, transform, mode)
        elif value is not None:
            file.add(value, "elements", "must be a list or a mapping")

    def node(self, file: BodyFile, node: YMap, kind: str, transform: np.ndarray, mode: str) -> None:
        self.depth += 1
        try:
            if self.depth > _MAX_DEPTH:
                file.add(node, kind, f"elements nest more than {_MAX_DEPTH} deep (an alias that includes itself?)")
                return
            self._node(file, node, kind, transform, mode)
        finally:
            self.depth -= 1

    def _node(self, file: BodyFile, node: YMap, kind: str, transform: np.ndarray, mode: str) -> None:
        if kind == "Skip" or kind in SCENE_ONLY:
            return
        if kind == "Shape":
            shapes = read_shape(file, node, transform, lambda g, placed: self.resources.geometry(file, g, placed))
            self._add_shapes(shapes, mode)
            return
        own, _ = file.pose(node, kind) if kind != "Group" else (np.eye(4), False)
        placed = transform @ own
        if kind in ("Transform", "Group"):
            self.contents(file, node.get("elements"), placed, mode)
        elif kind == "RigidBody":
            self._rigid_body(file, node, placed)
        elif kind in ("Visual", "Collision"):
            self._visual_or_collision(file, node, kind, placed, mode)
        elif kind == "Resource":
            self._resource(file, node, placed, mode)
        elif is_device(kind):
            self._device(file, node, kind, placed, mode)
        elif node.get("isOptional", node.get("is_optional")) is True:
            self.parts.notes.append(f"{file.where(node)}: optional {kind} element skipped (as in Choreonoid)")
        else:
            file.add(node, f"element {kind}", "unknown element type", "type" if "type" in node else None)

    def _add_shapes(self, shapes: list[Shape], mode: str) -> None:
        target = {BOTH: self.parts.plain, VISUAL: self.parts.visual, COLLISION: self.parts.collision}[mode]
        target.extend(shapes)

    def _rigid_body(self, file: BodyFile, node: YMap, placed: np.ndarray) -> None:
        what = "RigidBody"
        com = file.vector(node, "centerOfMass", what, 3, (0.0, 0.0, 0.0))
        mass = file.number(node, "mass", what, 0.0)
        if mass < 0:
            file.add(node, what, f"mass {mass:g} is negative", "mass")
            mass = 0.0
        inertia = read_inertia(file, node, what)
        linear = placed[:3, :3]
        self.parts.rigid.append(RigidPart(mass, linear @ com + placed[:3, 3], linear @ inertia @ linear.T))
        self.contents(file, node.get("elements"), placed, BOTH)

    def _visual_or_collision(self, file: BodyFile, node: YMap, kind: str, placed: np.ndarray, mode: str) -> None:
        wanted = VISUAL if kind == "Visual" else COLLISION
        if mode not in (BOTH, wanted):
            file.add(node, kind, f"a {kind} node inside a {mode.capitalize()} node contradicts it")
            return
        self.parts.split = True
        if isinstance(node.get("resource"), YMap):
            self._resource(file, node["resource"], placed @ file.pose(node["resource"], "resource")[0], wanted)
        if isinstance(node.get("shape"), YMap):
            self._node(file, node["shape"], "Shape", placed, wanted)
        self.contents(file, node.get("elements"), placed, wanted)

    def _resource(self, file: BodyFile, node: YMap, placed: np.ndarray, mode: str) -> None:
        path = self.resources.path_of(file, node, "Resource")
        if path is None:
            return
        if self.resources.is_yaml(path):
            found = self.resources.elements(file, node)
            if found is not None:
                self.contents(found[1], found[0], placed, mode)
            return
        self._add_shapes(self.resources.geometry(file, node, placed), mode)

    def _device(self, file: BodyFile, node: YMap, kind: str, placed: np.ndarray, mode: str) -> None:
        if kind in TRACK_DEVICES:  # refused: the reading says what to change once it is done
            self.resources.plugin_track = kind
        device = read_device(file, node, kind, self.link, placed)
        if isinstance(device, Sensor):
            self.parts.sensors.append((device, file.where(node)))
        elif isinstance(device, str):
            self.parts.notes.append(device)
        self.contents(file, node.get("elements"), placed, mode)


def read_inertia(file: BodyFile, node: YMap, what: str) -> np.ndarray:
    """A 3x3 inertia from 9 numbers, or 6 (xx, xy, xz, yy, yz, zz); zeros when absent."""
    found = file.key(node, "inertia")
    if found is None:
        return np.zeros((3, 3))
    values = file.numbers(node[found], node, found, what)
    if values is None:
        return np.zeros((3, 3))
    if values.size == 9:
        matrix = values.reshape(3, 3)
        if not np.allclose(matrix, matrix.T, rtol=1e-9, atol=0.0):
            file.notes.append(
                f"{file.where(node, found)}: {what}: inertia is not symmetric; its symmetric part is used"
            )
            matrix = (matrix + matrix.T) / 2
    elif values.size == 6:
        xx, xy, xz, yy, yz, zz = values
        matrix = np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])
    else:
        file.add(node, what, f"inertia must hold 9 numbers (or 6), not {values.size}", found)
        return np.zeros((3, 3))
    why = inertia_problem(matrix)  # a negative moment would make the body gain energy from nothing
    if why:
        file.add(node, what, why, found)
        return nearest_inertia(matrix)
    return matrix
