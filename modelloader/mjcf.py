"""MJCF reader: MuJoCo's own compiler reads the file, its compiled MjModel becomes a BodyInfo Body.

- Each MuJoCo body is a link named after it, with MuJoCo's compiled mass, centre of mass and
  inertia. A link's frame sits at its joint (a hinge's ``pos``), so the body's geoms, sites,
  inertia and children are shifted by that offset.
- hinge -> rotate, slide -> slide, free -> a free root (only the one body under the world may be
  free); ball -> three hinges about the body's X, Y, Z. A body with several joints becomes a chain:
  one massless link per joint but the last, named ``BODY.JOINT``, then the body's own link.
- The world: one body under ``<worldbody>`` (free or without joints) is the root; otherwise a
  massless fixed link ``world`` is the root and the world's bodies hang from it. The world's own
  geoms (floor planes, walls) are the environment: ``load_mjcf(..., world=True)`` gives them as a
  static body (a project loads the file twice: ``options: {world: true}`` for its environment).
- Geoms (mjcf_parts.py), sensors, actuators' gear, connect and weld equalities and contact
  exclusions map as BodyInfo holds them. What it cannot hold (mjcf_checks.py) is refused when no
  engine could run it, named in ``Body.metadata["mujoco_only"]`` when only the MuJoCo engine
  simulates it (ODE refuses the model then), or named in ``Body.metadata["warnings"]``.
- The model as MuJoCo reads it travels in ``Body.metadata["mjcf"]`` (mjcf_native.py): the MuJoCo
  engine builds an MJCF robot from it, with every element of the file.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from hrpsim.bodyinfo import Body, Link
from hrpsim.engines.mujoco.build import JOINT_ID, SENSOR_ID
from hrpsim.errors import ModelError
from hrpsim.modelloader.body_values import MAX_ID
from hrpsim.modelloader.mjcf_checks import check_model
from hrpsim.modelloader.mjcf_files import read_mjcf_files
from hrpsim.modelloader.mjcf_native import native_model
from hrpsim.modelloader.mjcf_parts import PartsReader, world_shapes
from hrpsim.modelloader.mjcf_source import MjcfSource, compile_model, import_mujoco, quat_matrix
from hrpsim.modelloader.urdf_xml import Problems

WORLD_LINK = "world"
AXES = np.eye(3)


@dataclass
class _Joint:
    """One 1-DOF (or free) joint of a body, as BodyInfo will hold it."""

    name: str
    kind: str  # rotate, slide, free
    mj_index: int
    axis: np.ndarray
    pos: np.ndarray
    limits: tuple[float, float] = (-np.inf, np.inf)
    armature: float = 0.0
    torque: tuple[float, float] = (-np.inf, np.inf)


def load_mjcf(path: str | Path, *, world: bool = False) -> Body:
    """Read an MJCF file's bodies (``world``: its world geoms, as a static body); ModelError
    listing every problem (file:line: element) for what BodyInfo cannot hold."""
    path = Path(path).resolve()
    mujoco = import_mujoco(path)
    problems = Problems(path, "MJCF")
    files = read_mjcf_files(path)
    source = MjcfSource(path, compile_model(mujoco, path, files), mujoco, problems, files)
    return _MjcfReader(source).read_world() if world else _MjcfReader(source).read()


class _MjcfReader:
    def __init__(self, source: MjcfSource) -> None:
        self.source = source
        self.model = source.model
        self.mujoco = source.mujoco
        self.links: list[Link] = []
        self.body_link: dict[int, int] = {}  # MuJoCo body -> index of its own link
        self.offset: dict[int, np.ndarray] = {0: np.zeros(3)}  # body -> its link frame's origin in the body frame
        self.joint_links: dict[int, list[int]] = {}  # MuJoCo joint -> its links (a ball has three)
        self.link_bodies: list[int] = []  # link -> its MuJoCo body
        self.next_id = 0

    def read(self) -> Body:
        only = check_model(self.source)
        tops = [b for b in range(1, self.model.nbody) if self.model.body_parentid[b] == 0]
        if not tops:
            self.source.problems.add(
                self.source.element(("worldbody",)),
                "no bodies under <worldbody>: the file holds only its environment (load it with the "
                "loader option world: true)",
            )
            self.source.problems.raise_if_any()
        if not self._single_root(tops):
            self.links.append(Link(name=WORLD_LINK, joint_type="fixed"))
            self.body_link[0] = 0
            self.link_bodies.append(0)
        for b in range(1, self.model.nbody):  # MuJoCo numbers bodies depth first: already pre-order
            self._add_body(b, len(tops) == 1)
        body = self._body()
        PartsReader(self.source, body, self.body_link, self.offset, self.joint_links, only).read()
        self._written_numbers(body)
        self._check_names(body)
        self.source.problems.raise_if_any()
        if self.source.problems.warnings:
            body.metadata["warnings"] = list(self.source.problems.warnings)
        if only.items:
            body.metadata["mujoco_only"] = only.items
        body.metadata["mjcf"] = native_model(self.source, body, self.link_bodies, self.joint_links, self.offset)
        return body

    def read_world(self) -> Body:
        shapes = world_shapes(self.source)
        if not shapes:
            raise ModelError(f"{self.source.path}: <worldbody> has no geoms of its own to make an environment of")
        self.source.problems.raise_if_any()
        name = f"{self._model_name()}_world"
        link = Link(name=WORLD_LINK, joint_type="fixed", shapes=shapes)
        body = Body(name=name, links=[link], static=True, source=str(self.source.path), format="mjcf")
        body.metadata["files"] = self.source.files()
        return body

    def _body(self) -> Body:
        body = Body(name=self._model_name(), links=self.links, source=str(self.source.path), format="mjcf")
        body.metadata["files"] = self.source.files()
        return body

    def _model_name(self) -> str:
        return self.source.root.get("model") or self.source.path.stem

    # --- bodies and joints ------------------------------------------------------------------------

    def _single_root(self, tops: list[int]) -> bool:
        """Whether the one body under the world is the root: it is free or has no joint."""
        if len(tops) != 1:
            return False
        joints = self._joints(tops[0])
        return not joints or (len(joints) == 1 and joints[0].kind == "free")

    def _add_body(self, b: int, alone: bool) -> None:
        """Body ``b``'s link (or chain of links, one per joint) under its parent's link."""
        m = self.model
        parent = int(m.body_parentid[b])
        name = self.source.name("body", b) or f"body{b}"
        joints = self._held_joints(b, name, parent == 0 and alone)
        rotation = quat_matrix(self.mujoco, m.body_quat[b])
        # the body's origin in its parent's link frame (which sits at the parent's last joint)
        translation = np.array(m.body_pos[b], float) - self.offset[parent]
        parent_link = self.body_link.get(parent, -1)
        if not joints or joints[0].kind == "free":
            kind = joints[0].kind if joints else "fixed"
            self.links.append(Link(name=name, parent=parent_link, joint_type=kind, rotation=rotation))
            self.links[-1].translation = translation
            self.link_bodies.append(b)
            self.body_link[b], self.offset[b] = len(self.links) - 1, np.zeros(3)
            return
        previous = np.zeros(3)
        for k, joint in enumerate(joints):
            origin = joint.pos if joint.kind == "rotate" else previous
            link = Link(name=name if k == len(joints) - 1 else f"{name}.{joint.name}", parent=parent_link)
            if k == 0:
                link.rotation, link.translation = rotation, translation + rotation @ origin
            else:
                link.translation = origin - previous
            self._set_joint(link, joint)
            self.links.append(link)
            self.link_bodies.append(b)
            parent_link, previous = len(self.links) - 1, origin
        self.body_link[b], self.offset[b] = len(self.links) - 1, previous

    def _held_joints(self, b: int, name: str, may_be_free: bool) -> list[_Joint]:
        """The body's joints; a free joint BodyInfo cannot hold is refused and left out."""
        joints = self._joints(b)
        if any(j.kind == "free" for j in joints) and not (may_be_free and len(joints) == 1):
            self.source.refuse(
                ("body",),
                name,
                b - 1,
                "a free joint is held only by the one body under <worldbody> (BodyInfo has one free "
                "root per model; give each free body its own file, or use slide and hinge joints)",
            )
            joints = [j for j in joints if j.kind != "free"]
        return joints

    def _set_joint(self, link: Link, joint: _Joint) -> None:
        link.joint_name = "" if joint.name == link.name else joint.name  # "": the link's own name
        link.joint_type, link.joint_axis = joint.kind, joint.axis
        link.q_lower, link.q_upper = joint.limits
        link.torque_lower, link.torque_upper = joint.torque
        link.rotor_inertia = joint.armature
        link.joint_id = self.next_id
        self.next_id += 1
        self.joint_links.setdefault(joint.mj_index, []).append(len(self.links))

    def _written_numbers(self, body: Body) -> None:
        """An hrpsim-written file's joint and sensor numbers (its ``<numeric>`` MODEL/joint_id/JOINT
        and MODEL/sensor_id/SENSOR), which may differ from the order of the file."""
        if not self.source.written_by_hrpsim:
            return
        numbered = {(JOINT_ID, link.joint_label): link for link in body.joints}
        numbered |= {(SENSOR_ID, sensor.name): sensor for sensor in body.sensors}
        m = self.model
        for n in range(m.nnumeric):
            kind, _, name = self.source.name("numeric", n).partition("/")
            target = numbered.get((kind, name))
            if target is not None and m.numeric_size[n] == 1:
                number = float(m.numeric_data[m.numeric_adr[n]])
                if not (math.isfinite(number) and number == int(number) and -1 <= number <= MAX_ID):
                    why = f"{kind} {number:g} is not a whole number from -1 (none) to {MAX_ID}"
                    self.source.refuse(("numeric",), f"{kind}/{name}", n, why)
                elif kind == JOINT_ID:
                    target.joint_id = int(number)
                else:
                    target.id = int(number)
        ids = [link.joint_id for link in body.joints]
        for repeated in sorted(i for i, count in Counter(ids).items() if count > 1):
            self.source.refuse(("numeric",), "", -1, f"{JOINT_ID} {repeated} is given to more than one joint")

    def _joints(self, b: int) -> list[_Joint]:
        m, t = self.model, self.mujoco.mjtJoint
        joints: list[_Joint] = []
        for j in range(int(m.body_jntadr[b]), int(m.body_jntadr[b] + m.body_jntnum[b])):
            name = self.source.name("joint", j) or f"{self.source.name('body', b) or f'body{b}'}_joint{j}"
            kind = int(m.jnt_type[j])
            pos = np.array(m.jnt_pos[j], float)
            dof = int(m.jnt_dofadr[j])
            ref = float(m.qpos0[m.jnt_qposadr[j]]) if kind in (t.mjJNT_HINGE, t.mjJNT_SLIDE) else 0.0
            limits = (-np.inf, np.inf)
            if m.jnt_limited[j]:  # hrpsim's zero is the pose the file draws, MuJoCo's ``ref``
                limits = (float(m.jnt_range[j][0]) - ref, float(m.jnt_range[j][1]) - ref)
            torque = (-np.inf, np.inf)
            if m.jnt_actfrclimited[j]:
                torque = (float(m.jnt_actfrcrange[j][0]), float(m.jnt_actfrcrange[j][1]))
            if kind == t.mjJNT_FREE:
                joints.append(_Joint(name, "free", j, np.array([0.0, 0.0, 1.0]), np.zeros(3)))
            elif kind == t.mjJNT_BALL:  # three hinges about the body's axes; the cone limit bounds each
                cone = (-limits[1], limits[1]) if m.jnt_limited[j] else limits
                for k, letter in enumerate("xyz"):
                    armature = float(m.dof_armature[dof + k])
                    joints.append(_Joint(f"{name}_{letter}", "rotate", j, AXES[k].copy(), pos, cone, armature, torque))
            else:
                kind_name = "rotate" if kind == t.mjJNT_HINGE else "slide"
                axis = np.array(m.jnt_axis[j], float)
                armature = float(m.dof_armature[dof])
                joints.append(_Joint(name, kind_name, j, axis, pos, limits, armature, torque))
        return joints

    def _check_names(self, body: Body) -> None:
        seen: set[str] = set()
        for link in body.links:
            if link.name in seen:
                self.source.refuse(
                    ("body",), link.name, -1, f"two links would be named {link.name!r}; give the bodies unique names"
                )
            seen.add(link.name)


__all__ = ["load_mjcf"]
