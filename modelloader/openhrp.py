"""OpenHRP VRML97 models -> BodyInfo.

The rules (OpenHRP3's own, as real files need them):

- the model is the ``Humanoid`` node; its DEF name is the body's name;
- one link per ``Joint`` node, the root included, in pre-order; link and sensor names are DEF
  names; a Joint's translation/rotation (after any Transform between it and its parent Joint)
  is the link's offset from its parent;
- every ``Segment`` of a Joint is merged into its link (parallel-axis rule, through any
  Transforms between); its Shapes become the link's shapes, posed in the link frame;
- sensors attach to the enclosing Joint's link, posed in its frame; ``ExtraJoint`` nodes are
  read wherever they are (real files put them at the top level, outside the Humanoid);
- fields a file's PROTO does not declare take OpenHRP's defaults.

Problems (a bad field, a jointId gap or repeat, an unknown jointType, a negative mass, an
inertia that is not positive semi-definite, a sensor outside any Joint, a missing Inline) are
collected with their locations and raised together as one ModelError; a lenient load keeps
them as warnings in ``Body.metadata["warnings"]`` and goes on with a usable stand-in.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

import numpy as np

from hrpsim.bodyinfo import EXTRA_JOINT_TYPES, JOINT_TYPES, Body, ExtraJoint, Link, Sensor
from hrpsim.errors import ModelError
from hrpsim.modelloader.openhrp_mass import (
    MAX_LINK_MASS_KG,
    MassPart,
    combine,
    inertia_problem,
    nearest_inertia,
    place,
)
from hrpsim.modelloader.openhrp_sensors import duplicate_ids, sensor_params, sensor_protos
from hrpsim.modelloader.vrml.fields import FieldReader
from hrpsim.modelloader.vrml.files import SceneLoader
from hrpsim.modelloader.vrml.nodes import Node, ParsedFile, Where
from hrpsim.modelloader.vrml.scope import instantiate
from hrpsim.modelloader.vrml_shapes import shape_of
from hrpsim.transforms import pose

log = logging.getLogger("hrpsim.modelloader")

_AXIS_LETTERS = {"X": (1.0, 0.0, 0.0), "Y": (0.0, 1.0, 0.0), "Z": (0.0, 0.0, 1.0)}
_GROUPS = ("Group", "Anchor", "Collision", "Billboard")
_MAX_PROTO_DEPTH = 32
# USE can make a small file stand for a huge tree (each level repeating the one below); real
# models walk a few thousand nodes.
MAX_NODE_VISITS = 100_000


def load_vrml(path: str | Path, *, lenient: bool = False) -> Body:
    """Read an OpenHRP VRML97 model (with its Inlines) into a Body."""
    loader = SceneLoader()
    try:
        parsed = loader.load(path)
        return _BodyBuilder(loader, lenient).build(parsed)
    except RecursionError:
        raise ModelError(f"{os.path.abspath(path)}: nodes nested too deeply to read") from None


class _BodyBuilder:
    def __init__(self, loader: SceneLoader, lenient: bool) -> None:
        self.loader = loader
        self.lenient = lenient
        self.problems = loader.problems
        self.notes: list[str] = []  # harmless oddities, reported as warnings only
        self.fields = FieldReader(self.problems)
        self.links: list[Link] = []
        self.link_where: list[Where] = []
        self.parts: list[list[MassPart]] = []
        self.sensors: list[tuple[Sensor, Where]] = []
        self.sensor_protos = sensor_protos()  # PROTO name -> sensor type
        self.extra_nodes: list[Node] = []
        self.inline_stack: list[str] = []
        self.proto_depth = 0
        self.visits = 0

    # --- the whole model ---

    def build(self, parsed: ParsedFile) -> Body:
        self.inline_stack.append(parsed.path)
        name, humanoid_info = self._humanoid(parsed)
        for node in _find_top_level(parsed.statements, ("ExtraJoint",)):
            if all(node is not seen for seen in self.extra_nodes):
                self.extra_nodes.append(node)
        for node in _find_top_level(parsed.statements, tuple(self.sensor_protos)):
            self._sensor(node, np.eye(4), None)
        self._finish_links()
        self._check_joint_ids()
        body = Body(name=name, links=self.links, source=parsed.path, format="vrml")
        body.sensors = [s for s, _ in self.sensors]
        self.problems.extend(duplicate_ids([(s.type, s.name, s.id, str(w)) for s, w in self.sensors]))
        body.extra_joints = [e for e in (self._extra_joint(n) for n in self.extra_nodes) if e is not None]
        body.static = len(self.links) == 1 and self.links[0].joint_type == "fixed"
        body.metadata = {
            "files": list(self.loader.files),
            "file_sha256": dict(self.loader.digests),
            "humanoid": humanoid_info,
        }
        return self._verdict(body)

    def _humanoid(self, parsed: ParsedFile) -> tuple[str, dict[str, object]]:
        """Walk the model's Humanoid; its name and descriptive fields."""
        humanoids = _find_top_level(parsed.statements, ("Humanoid",))
        if not humanoids:
            self.problems.append(
                f"{parsed.path}: no Humanoid node: an OpenHRP model is a Humanoid with Joints "
                "(a lenient load reads the whole scene as one fixed link)"
            )
            self._scene_as_link(parsed, Path(parsed.path).stem)
            return Path(parsed.path).stem, {}
        humanoid = humanoids[0]
        if len(humanoids) > 1:
            self.problems.append(f"{humanoids[1].where}: a second Humanoid node; a model file holds one")
        name = humanoid.def_name or self.fields.string(humanoid, "name") or Path(parsed.path).stem
        for child in self.fields.nodes(humanoid, "humanoidBody"):
            self._visit(child, np.eye(4), None)
        if not self.links:
            self.problems.append(f"{humanoid.where}: Humanoid {name!r} has no Joint in humanoidBody")
        return name, {
            "name": self.fields.string(humanoid, "name"),
            "version": self.fields.string(humanoid, "version"),
            "info": self.fields.strings(humanoid, "info"),
        }

    def _verdict(self, body: Body) -> Body:
        if self.problems and not self.lenient:
            if len(self.problems) == 1:  # the one problem already names its file and line
                raise ModelError(self.problems[0], self.problems)
            raise ModelError(f"{body.source}: {len(self.problems)} problems in the model", self.problems)
        warnings = self.problems + self.notes
        if warnings:
            body.metadata["warnings"] = warnings
            for warning in warnings:
                log.warning("%s", warning)
        return body

    def _scene_as_link(self, parsed: ParsedFile, name: str) -> None:
        self.links.append(Link(name=name, joint_type="fixed"))
        self.link_where.append(Where(parsed.path))
        self.parts.append([])
        for statement in parsed.statements:
            self._visit(statement, np.eye(4), 0)

    # --- the node walk ---

    def _visit(self, node: Node, transform: np.ndarray, link: int | None) -> None:
        self.visits += 1
        if self.visits > MAX_NODE_VISITS:
            raise ModelError(
                f"{node.where}: the model expands (through USE, PROTO or Inline) to more than "
                f"{MAX_NODE_VISITS} nodes; refusing to read further"
            )
        kind = node.type
        if kind == "Joint":
            self._joint(node, transform, link)
        elif kind == "Segment":
            self._segment(node, transform, link)
        elif kind in self.sensor_protos:
            self._sensor(node, transform, link)
        elif kind == "ExtraJoint":
            self.extra_nodes.append(node)
        elif kind == "Humanoid":
            self.problems.append(f"{node.where}: a Humanoid inside another model's nodes")
        elif node.proto is not None:
            self._proto_instance(node, transform, link)
        elif kind == "Transform":
            self._children(node, transform @ transform_matrix(node, self.fields), link)
        elif kind in _GROUPS:
            self._children(node, transform, link)
        elif kind in ("Switch", "LOD"):
            self._chosen_child(node, transform, link)
        elif kind == "Inline":
            self._inline(node, transform, link)
        elif kind == "Shape":
            self._shape(node, transform, link)

    def _children(self, node: Node, transform: np.ndarray, link: int | None) -> None:
        for child in self.fields.nodes(node, "children"):
            self._visit(child, transform, link)

    def _chosen_child(self, node: Node, transform: np.ndarray, link: int | None) -> None:
        if node.type == "LOD":
            levels = self.fields.nodes(node, "level")
            chosen = levels[:1]
        else:
            choices = self.fields.nodes(node, "choice")
            which = self.fields.int(node, "whichChoice", -1)
            chosen = choices[which : which + 1] if 0 <= which < len(choices) else []
        for child in chosen:
            self._visit(child, transform, link)

    def _proto_instance(self, node: Node, transform: np.ndarray, link: int | None) -> None:
        """A PROTO of the file's own: its body's first node stands for it (VRML's rule)."""
        if self.proto_depth >= _MAX_PROTO_DEPTH:
            self.problems.append(f"{node.where}: PROTO {node.type} instances nest more than {_MAX_PROTO_DEPTH} deep")
            return
        self.proto_depth += 1
        try:
            for first in instantiate(node)[:1]:
                self._visit(first, transform, link)
        finally:
            self.proto_depth -= 1

    def _inline(self, node: Node, transform: np.ndarray, link: int | None) -> None:
        parsed = self.loader.load_url(self.fields.strings(node, "url"), node.where, "Inline")
        if parsed is None:
            return
        if parsed.path in self.inline_stack:
            self.problems.append(f"{node.where}: Inline of {parsed.path} includes itself")
            return
        self.inline_stack.append(parsed.path)
        try:
            for statement in parsed.statements:
                self._visit(statement, transform, link)
        finally:
            self.inline_stack.pop()

    def _shape(self, node: Node, transform: np.ndarray, link: int | None) -> None:
        if link is None:
            return  # scenery outside the model's links belongs to no body
        shape = shape_of(node, transform, self.fields)
        if shape is not None:
            self.links[link].shapes.append(shape)

    # --- OpenHRP nodes ---

    def _joint(self, node: Node, transform: np.ndarray, parent: int | None) -> None:
        index = len(self.links)
        f = self.fields
        name = node.def_name or f.string(node, "name") or f"JOINT{index}"
        if not node.def_name:
            self.notes.append(f"{node.where}: Joint without a DEF name: called {name!r}")
        if parent is None and self.links:
            self.problems.append(
                f"{node.where}: Joint {name!r} is a second root: a model has one root Joint ({self.links[0].name!r})"
            )
        local = self._finite_pose(node, transform, f"Joint {name!r}")
        link = Link(
            name=name,
            parent=-1 if parent is None else parent,
            translation=local[:3, 3].copy(),
            rotation=local[:3, :3].copy(),
        )
        link.joint_type = self._joint_type(node, name)
        link.joint_id = f.int(node, "jointId", -1)
        link.joint_axis = self._joint_axis(node, link.joint_type)
        self._limits(node, link)
        link.gear_ratio = f.float(node, "gearRatio", 1.0)
        link.rotor_inertia = f.float(node, "rotorInertia", 0.0)
        link.rotor_resistor = f.float(node, "rotorResistor", 0.0)
        link.torque_const = f.float(node, "torqueConst", 1.0)
        link.encoder_pulse = f.float(node, "encoderPulse", 1.0)
        self.links.append(link)
        self.link_where.append(node.where)
        self.parts.append([])
        self._children(node, np.eye(4), index)

    def _finite_pose(self, node: Node, transform: np.ndarray, what: str) -> np.ndarray:
        """The node's translation/rotation after ``transform``; identity (and a problem) if not finite,
        since a NaN frame would bring the physics engine down."""
        f = self.fields
        frame = _rigid(transform) @ pose(f.vector(node, "translation", (0, 0, 0)), f.rotation(node, "rotation"))
        if np.all(np.isfinite(frame)):
            return frame
        self.problems.append(
            f"{node.where}: {what}: translation or rotation is not finite "
            f"(translation {frame[:3, 3].tolist()}); read as zero"
        )
        return _rigid(transform) if np.all(np.isfinite(transform)) else np.eye(4)

    def _joint_type(self, node: Node, name: str) -> str:
        written = self.fields.string(node, "jointType", "")
        kind = written.strip().lower()
        if kind in JOINT_TYPES:
            return kind
        self.problems.append(
            f"{node.where_of('jointType')}: Joint {name!r}: unknown jointType {written!r} "
            f"(known: {', '.join(JOINT_TYPES)}); read as free"
        )
        return "free"

    def _joint_axis(self, node: Node, joint_type: str) -> np.ndarray:
        value = node.get("jointAxis")
        if isinstance(value, list) and len(value) == 1 and isinstance(value[0], str):
            letter = value[0].strip().upper()
            sign = -1.0 if letter.startswith("-") else 1.0
            if letter.lstrip("+-") in _AXIS_LETTERS:
                return sign * np.array(_AXIS_LETTERS[letter.lstrip("+-")])
            self.problems.append(
                f"{node.where_of('jointAxis')}: {node.label}: jointAxis {value[0]!r} is not X, Y, Z or a vector"
            )
            return np.array([0.0, 0.0, 1.0])
        axis = self.fields.vector(node, "jointAxis", (0.0, 0.0, 1.0))
        norm = float(np.linalg.norm(axis))
        if not np.isfinite(norm) or (norm < 1e-12 and joint_type in ("rotate", "slide")):
            self.problems.append(
                f"{node.where_of('jointAxis')}: {node.label}: jointAxis {axis.tolist()} has no direction"
            )
            return np.array([0.0, 0.0, 1.0])
        return axis / norm if norm > 1e-12 else axis

    def _limits(self, node: Node, link: Link) -> None:
        f = self.fields

        def first(name: str) -> float | None:
            values = f.numbers(node, name)
            return float(values[0]) if values.size else None

        upper, lower = first("ulimit"), first("llimit")
        link.q_upper = np.inf if upper is None else upper
        link.q_lower = -np.inf if lower is None else lower
        vupper, vlower = first("uvlimit"), first("lvlimit")
        link.dq_upper = np.inf if vupper is None else vupper
        link.dq_lower = (-link.dq_upper if vupper is not None else -np.inf) if vlower is None else vlower
        climit = first("climit")
        if climit is not None:  # current limit -> torque limit through the motor constants
            torque = abs(climit * f.float(node, "gearRatio", 1.0) * f.float(node, "torqueConst", 1.0))
            link.torque_lower, link.torque_upper = -torque, torque

    def _segment(self, node: Node, transform: np.ndarray, link: int | None) -> None:
        f = self.fields
        mass = f.float(node, "mass", 0.0)
        com = f.vector(node, "centerOfMass", (0.0, 0.0, 0.0))
        moments = f.numbers(node, "momentsOfInertia", np.zeros(9))
        if moments.size == 9:
            inertia = moments.reshape(3, 3).copy()
        elif moments.size == 3:
            inertia = np.diag(moments)
        else:
            self.problems.append(
                f"{node.where_of('momentsOfInertia')}: {node.label}: momentsOfInertia needs 9 "
                f"numbers (a 3x3 tensor), got {moments.size}"
            )
            inertia = np.zeros((3, 3))
        if not np.isfinite(mass) or mass < 0:
            self.problems.append(f"{node.where_of('mass')}: {node.label}: mass {mass} is not a non-negative number")
            mass = 0.0
        elif mass > MAX_LINK_MASS_KG:
            self.problems.append(
                f"{node.where_of('mass')}: {node.label}: mass {mass:g} is beyond {MAX_LINK_MASS_KG:g} kg"
            )
            mass = 0.0
        why = inertia_problem(inertia)
        if why:
            self.problems.append(f"{node.where_of('momentsOfInertia')}: {node.label}: {why}")
            inertia = nearest_inertia(inertia)
        elif mass == 0.0 and np.any(inertia):
            # OpenHRP and Choreonoid load this too, so a warning: the inertia without its mass
            # still adds to the link's, which is rarely what the author meant.
            self.notes.append(
                f"{node.where_of('mass')}: {node.label}: mass 0 with a non-zero momentsOfInertia; "
                "the inertia is kept (give the segment's mass, or zero its inertia)"
            )
        if not np.all(np.isfinite(com)):
            self.problems.append(f"{node.where_of('centerOfMass')}: {node.label}: centerOfMass is not finite")
            com = np.zeros(3)
        if link is None:
            self.notes.append(f"{node.where}: {node.label} outside any Joint: its mass and shapes belong to no link")
        else:
            self.parts[link].append(place(mass, com, inertia, transform))
        self._children(node, transform, link)

    def _sensor(self, node: Node, transform: np.ndarray, link: int | None) -> None:
        sensor_type = self.sensor_protos[node.type]
        name = node.def_name or self.fields.string(node, "name") or f"{sensor_type}{len(self.sensors)}"
        if link is None:
            self.problems.append(
                f"{node.where}: sensor {name!r} ({node.type}) is outside any Joint: "
                "put it in the children of the Joint it is mounted on"
            )
            return
        f = self.fields
        pose = self._finite_pose(node, transform, f"sensor {name!r}")
        sensor = Sensor(
            name=name,
            type=sensor_type,
            id=f.int(node, "sensorId", -1),
            link=link,
            translation=pose[:3, 3].copy(),
            rotation=pose[:3, :3].copy(),
            params=sensor_params(sensor_type, node, f),
        )
        self.sensors.append((sensor, node.where))

    def _extra_joint(self, node: Node) -> ExtraJoint | None:
        f = self.fields
        name = node.def_name or f"EXTRA_JOINT{self.extra_nodes.index(node)}"
        link1, link2 = f.string(node, "link1Name"), f.string(node, "link2Name")
        known = {lk.name for lk in self.links}
        missing = [n for n in (link1, link2) if n not in known]
        if missing:
            self.problems.append(f"{node.where}: ExtraJoint {name!r} names no link {', '.join(map(repr, missing))}")
            return None
        written = f.string(node, "jointType", "xyz")
        kind = written.strip().lower()
        if kind not in EXTRA_JOINT_TYPES:
            self.problems.append(
                f"{node.where_of('jointType')}: ExtraJoint {name!r}: unknown jointType {written!r} "
                f"(known: {', '.join(EXTRA_JOINT_TYPES)})"
            )
            return None
        return ExtraJoint(
            name=name,
            link1=link1,
            link2=link2,
            type=kind,
            axis=f.vector(node, "jointAxis", (1.0, 0.0, 0.0)),
            point1=f.vector(node, "link1LocalPos", (0, 0, 0)),
            point2=f.vector(node, "link2LocalPos", (0, 0, 0)),
        )

    # --- after the walk ---

    def _finish_links(self) -> None:
        for link, parts in zip(self.links, self.parts, strict=True):
            merged = combine(parts)
            link.mass, link.com, link.inertia = merged.mass, merged.com, merged.inertia

    def _check_joint_ids(self) -> None:
        owners: dict[int, str] = {}
        count = len(self.links)  # ids run 0..n-1 over at most every Joint: a larger one is a mistake
        for link, where in zip(self.links, self.link_where, strict=True):
            if link.joint_id < -1:
                self.problems.append(f"{where}: Joint {link.name!r}: jointId {link.joint_id} (use -1 for none)")
                link.joint_id = -1
            elif link.joint_id >= count:
                self.problems.append(
                    f"{where}: Joint {link.name!r}: jointId {link.joint_id} is beyond this model's {count} "
                    f"Joint(s) (ids run 0..{count - 1} without gaps; -1 for none)"
                )
                link.joint_id = -1
            elif link.joint_id >= 0:
                if link.joint_id in owners:
                    self.problems.append(
                        f"{where}: Joint {link.name!r}: jointId {link.joint_id} repeats that of "
                        f"{owners[link.joint_id]!r}"
                    )
                else:
                    owners[link.joint_id] = link.name
        if owners:
            missing = sorted(set(range(max(owners) + 1)) - set(owners))
            if missing:
                where = self.link_where[0].file
                self.problems.append(
                    f"{where}: jointIds must run 0..{max(owners)} without gaps; missing "
                    + ", ".join(map(str, missing[:20]))
                    + (f" and {len(missing) - 20} more" if len(missing) > 20 else "")
                )


def transform_matrix(node: Node, fields: FieldReader) -> np.ndarray:
    """A VRML Transform as a 4x4 map: T * C * R * SR * S * -SR * -C."""
    translation = fields.vector(node, "translation", (0, 0, 0))
    center = fields.vector(node, "center", (0, 0, 0))
    rotation = fields.rotation(node, "rotation")
    scale = fields.vector(node, "scale", (1, 1, 1))
    scale_orientation = fields.rotation(node, "scaleOrientation")
    linear = rotation @ scale_orientation @ np.diag(scale) @ scale_orientation.T
    matrix = np.eye(4)
    matrix[:3, :3] = linear
    matrix[:3, 3] = translation + center - linear @ center
    return matrix


def _rigid(transform: np.ndarray) -> np.ndarray:
    """The rotation and translation of an affine map, its scale dropped (frames do not scale)."""
    linear = transform[:3, :3]
    scales = np.linalg.norm(linear, axis=0)
    rigid = transform.copy()
    rigid[:3, :3] = linear / np.where(scales > 0, scales, 1.0)
    return rigid


def _find_top_level(statements: list[object], node_types: tuple[str, ...]) -> list[Node]:
    """Nodes of ``node_types`` at the top level, or inside top-level grouping nodes."""
    found: list[Node] = []
    stack = [s for s in reversed(statements) if isinstance(s, Node)]
    while stack:
        node = stack.pop()
        if node.type in node_types:
            found.append(node)
        elif node.type in ("Group", "Transform"):
            children = node.get("children")
            items = [children] if isinstance(children, Node) else children if isinstance(children, list) else []
            stack.extend(c for c in reversed(items) if isinstance(c, Node))
    return found
