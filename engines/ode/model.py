"""One model (a BodyInfo placed by the project) built into an ODE world.

Each link is an ODE body at its centre of mass, oriented like the link frame: ``rotate`` is a
hinge, ``slide`` a slider, ``fixed``/``crawler`` a fixed joint (at the root: a kinematic body),
``free`` no joint. Children are attached first, then parents, so that ODE's angle and torque
signs are OpenHRP's. A static model has geoms only. ODE measures hinge angles and slider
positions from the pose they were created in, so each joint keeps the initial value as offset.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import ode

from hrpsim.bodyinfo import Body, Link
from hrpsim.conventions import MIN_MASS, simulated_mass
from hrpsim.engines.ode import params as odeparams
from hrpsim.engines.ode.body_table import BodyReading, BodyTable, GatheredReading
from hrpsim.engines.ode.einsum import einsum
from hrpsim.engines.ode.geometry import Frame, make_geoms, ode_rotation
from hrpsim.engines.ode.hinges import HingeTurns
from hrpsim.engines.ode.wrenches import JointWrenches
from hrpsim.errors import ConfigError, RequestError
from hrpsim.kinematics import forward_kinematics, link_values, starting_joints
from hrpsim.placement import root_placement
from hrpsim.project import ModelConfig
from hrpsim.transforms import matrix_quaternion

log = logging.getLogger("hrpsim.simserver")

HINGE_STOP_MARGIN = 0.1  # rad inside ODE's +-pi where a wider hinge range is stopped (more than a step's move)
_LEVI_CIVITA = np.zeros((3, 3, 3))
_LEVI_CIVITA[0, 1, 2] = _LEVI_CIVITA[1, 2, 0] = _LEVI_CIVITA[2, 0, 1] = 1.0
_LEVI_CIVITA[0, 2, 1] = _LEVI_CIVITA[2, 1, 0] = _LEVI_CIVITA[1, 0, 2] = -1.0


@dataclass
class LinkSim:
    """A link's ODE objects and the numbers needed to read it back."""

    index: int
    link: Link
    body: ode.Body | None = None
    joint: ode.Joint | None = None
    kind: str = "none"  # "hinge", "slider", "fixed", "none"
    offset: float = 0.0  # joint value at creation (ODE reads 0 there)
    com: np.ndarray = field(default_factory=lambda: np.zeros(3))
    axis: np.ndarray = field(default_factory=lambda: np.array([0.0, 0.0, 1.0]))  # in the link frame
    geoms: list[ode.GeomObject] = field(default_factory=list)
    world_pose: tuple[np.ndarray, np.ndarray] | None = None  # static links: their fixed pose


def ode_mass(link: Link, where: str) -> ode.Mass:
    """The link's mass for ODE; massless or non-positive-definite links get a little of both."""
    if not float(link.mass) > 0.0:
        log.info("%s has no mass: given %g kg so that ODE accepts it", where, MIN_MASS)
    mass, inertia = simulated_mass(link, where)
    m = ode.Mass()
    m.setParameters(
        mass, 0.0, 0.0, 0.0, inertia[0, 0], inertia[1, 1], inertia[2, 2], inertia[0, 1], inertia[0, 2], inertia[1, 2]
    )
    return m


class OdeModel:
    """A model's links in ODE, in link order; ``joints`` in controller order."""

    def __init__(
        self,
        name: str,
        body: Body,
        config: ModelConfig,
        world: ode.World,
        space: ode.SpaceBase,
        *,
        joint_limits: bool = False,
    ) -> None:
        self.name = name
        self.info = body
        self.config = config
        self.static = bool(config.static or body.static)
        self.space = ode.HashSpace(space)
        self.space.model_name = name
        self.links: list[LinkSim] = []
        position, rotation = root_placement(config, body)
        try:
            self.initial_values = link_values(body, starting_joints(body, config.joints))
        except RequestError as exc:
            raise ConfigError(f"model {name!r}: joints: {exc}") from None
        poses = forward_kinematics(body, position, rotation, self.initial_values)
        for index, link in enumerate(body.links):
            self.links.append(self._build_link(index, link, poses[index], world, joint_limits))
        self.joints = [self.links[lk_index] for lk_index in self._controller_order()]
        self.joint_names = [js.link.joint_label for js in self.joints]
        self.hinges = HingeTurns(self.links, self.joints)
        # Bound ODE getters per controller-order joint that is not a hinge (hinges: self.hinges).
        self._other_values = [
            (column, *_value_reader(js)) for column, js in enumerate(self.joints) if js.kind != "hinge"
        ]
        # every row of the hinges' values is a controller joint, in order: q is a copy of them
        self._hinges_only = not self._other_values and len(self.hinges.columns) == len(self.hinges.offsets)
        self._rate_readers = [_rate_reader(js) for js in self.joints]
        self._rates: list[float] | None = None
        self._reading: GatheredReading | None = None
        self._frames: BodyReading | None = None
        self.moving_links = [sim for sim in self.links if sim.body is not None]
        self.bodies = BodyTable([sim.body for sim in self.moving_links])  # all of them in one read
        self._coms = np.array([sim.com for sim in self.moving_links]).reshape(-1, 3)
        self._root_com = tuple(float(v) for v in self.links[0].com)
        self.wrenches = JointWrenches(self.bodies, self.moving_links)  # for the efforts and the force sensors
        self._efforts = _Efforts(self)

    def joint_values(self) -> np.ndarray:
        """Joint values in controller order."""
        hinges = self.hinges
        if self._hinges_only:
            return hinges.values.copy()
        if not self._other_values:
            return hinges.values[: len(hinges.columns)].copy()
        q = np.empty(len(self.joints))
        q[hinges.columns] = hinges.values[: len(hinges.columns)]
        for column, read, offset in self._other_values:
            q[column] = read() + offset
        return q

    def joint_rates(self) -> np.ndarray:
        """Joint rates in controller order (a new array)."""
        return np.array(self.rate_list(), dtype=float)

    def rate_list(self) -> list[float]:
        """Joint rates in controller order, read once per state of the bodies (the drives and the
        state read both need them between two steps); callers must not change the list."""
        if self._rates is None:
            self._rates = [read() for read in self._rate_readers]
        return self._rates

    def track_turns(self) -> None:
        """After a step: forget what was read of the bodies before it, count hinge turns."""
        self._rates = self._reading = self._frames = None
        self.wrenches.stepped()
        self.hinges.track()

    def sync_turns(self, values: np.ndarray) -> None:
        """After the links were moved by hand: make each hinge read its value (per link) again."""
        self._rates = self._reading = self._frames = None
        self.hinges.sync(values)

    def get_state(self) -> dict[str, Any]:
        """What a snapshot keeps of the model: every body's pose and velocity as ODE holds them, the
        hinges' turns and the joints' feedback of the last step."""
        return {
            "bodies": np.array(self.bodies.read().rows),
            "turns": self.hinges.turns.copy(),
            "feedback": self.wrenches.feedback(),
        }

    def set_state(self, state: dict[str, Any]) -> None:
        """Put the model back as :meth:`get_state` found it. pyode's setters move each body (and mark
        its geoms moved for the next collision pass); where ODE's memory is reachable the saved
        doubles are then written as they were, since setting a quaternion normalises it again."""
        rows = state["bodies"]
        for sim, row in zip(self.moving_links, rows, strict=True):
            body = sim.body
            body.setPosition(tuple(row[0:3]))
            body.setQuaternion(tuple(row[18:22]))
            body.setLinearVel(tuple(row[3:6]))
            body.setAngularVel(tuple(row[6:9]))
        self.bodies.write(rows)
        self._rates = self._reading = self._frames = None
        self.hinges.restore(state["turns"])
        self.wrenches.restore(state["feedback"])

    def _controller_order(self) -> list[int]:
        by_id = sorted((lk.joint_id, i) for i, lk in enumerate(self.info.links) if lk.joint_id >= 0)
        return [i for _, i in by_id]

    def where(self, index: int) -> str:
        return f"model {self.name!r} link {self.info.links[index].name!r}"

    def _build_link(
        self, index: int, link: Link, pose: tuple[np.ndarray, np.ndarray], world: ode.World, joint_limits: bool
    ) -> LinkSim:
        p, r = pose
        sim = LinkSim(index, link, com=np.asarray(link.com, float).copy())
        axis = np.asarray(link.joint_axis, float)
        sim.axis = axis / max(np.linalg.norm(axis), 1e-12)
        where = self.where(index)
        if self.static:
            sim.world_pose = (p, r)
            sim.geoms = make_geoms(link.shapes, self.space, frame=Frame(p, r), where=where)
        else:
            body = ode.Body(world)
            body.setMass(ode_mass(link, where))
            body.setRotation(ode_rotation(r))
            body.setPosition(tuple(float(v) for v in p + r @ sim.com))
            sim.body = body
            sim.geoms = make_geoms(link.shapes, self.space, body=body, frame=Frame(-sim.com, np.eye(3)), where=where)
            self._make_joint(sim, p, r, world, joint_limits)
        for geom in sim.geoms:
            geom.model_name = self.name
            geom.link_index = index
        return sim

    def _make_joint(self, sim: LinkSim, p: np.ndarray, r: np.ndarray, world: ode.World, joint_limits: bool) -> None:
        link = sim.link
        parent = self.links[link.parent].body if link.parent >= 0 else ode.environment
        axis_world = tuple(float(v) for v in r @ sim.axis)
        if link.joint_type == "rotate":
            joint = ode.HingeJoint(world)
            joint.attach(sim.body, parent)
            joint.setAnchor(tuple(float(v) for v in p))
            joint.setAxis(axis_world)
            sim.kind = "hinge"
            sim.offset = self.initial_values[sim.index]
        elif link.joint_type == "slide":
            joint = ode.SliderJoint(world)
            joint.attach(sim.body, parent)
            joint.setAxis(axis_world)
            sim.kind = "slider"
            sim.offset = self.initial_values[sim.index]
        elif link.joint_type in ("fixed", "crawler") and link.parent >= 0:
            joint = ode.FixedJoint(world)
            joint.attach(sim.body, parent)
            joint.setFixed()
            sim.kind = "fixed"
        else:
            if link.joint_type in ("fixed", "crawler"):
                sim.body.setKinematic()  # a fixed root: it holds its place whatever hits it
            return
        joint.setFeedback(True)
        sim.joint = joint
        if joint_limits and sim.kind in ("hinge", "slider"):
            self._set_stops(sim)

    @staticmethod
    def _set_stops(sim: LinkSim) -> None:
        lo, hi = sim.link.q_lower - sim.offset, sim.link.q_upper - sim.offset
        if sim.kind == "hinge":  # ODE reads a hinge in (-pi, pi] and accepts stops there only
            # A stop at the edge itself is met just as the reading wraps to the other end, beyond the
            # other stop, which then drives the joint round and round: keep the stops off the edge.
            edge = np.pi - HINGE_STOP_MARGIN
            lo, hi = max(lo, -edge), min(hi, edge)
        if np.isfinite(lo) and np.isfinite(hi) and lo <= hi:
            sim.joint.setParam(odeparams.LO_STOP, float(lo))
            sim.joint.setParam(odeparams.HI_STOP, float(hi))

    # --- reading back ---

    def link_origin(self, sim: LinkSim) -> tuple[np.ndarray, np.ndarray]:
        """World position and rotation of a link's frame."""
        if sim.body is None:
            assert sim.world_pose is not None
            return sim.world_pose
        r = np.array(sim.body.getRotation()).reshape(3, 3)
        return np.array(sim.body.getPosition()) - r @ sim.com, r

    def link_velocity(self, sim: LinkSim) -> tuple[np.ndarray, np.ndarray]:
        """World linear velocity of a link's frame origin and its angular velocity."""
        if sim.body is None:
            return np.zeros(3), np.zeros(3)
        r = np.array(sim.body.getRotation()).reshape(3, 3)
        w = np.array(sim.body.getAngularVel())
        return np.array(sim.body.getLinearVel()) - cross(w, r @ sim.com), w

    def joint_value(self, sim: LinkSim) -> float:
        if sim.kind == "hinge":
            return float(self.hinges.values[self.hinges.row[sim.index]])
        if sim.kind == "slider":
            return sim.joint.getPosition() + sim.offset
        return 0.0

    def joint_rate(self, sim: LinkSim) -> float:
        if sim.kind == "hinge":
            return sim.joint.getAngleRate()
        if sim.kind == "slider":
            return sim.joint.getPositionRate()
        return 0.0

    def joint_efforts(self, frames: BodyReading) -> np.ndarray:
        """Per joint in controller order, the torque (force) its constraints (motor and stops) applied
        along its axis in the last step; 0 for fixed joints. ``frames``: a reading of the bodies."""
        return self._efforts.compute(frames)

    def link_poses(self) -> np.ndarray:
        """(links, 7): position xyz and rotation as a quaternion wxyz, for observers."""
        out = np.empty((len(self.links), 7))
        if len(self.moving_links) == len(self.links):
            frames = self.link_frames()
            out[:, :3], out[:, 3:] = frames.positions, frames.quaternions
            return out
        for i, sim in enumerate(self.links):
            p, r = self.link_origin(sim)
            out[i, :3] = p
            out[i, 3:] = matrix_quaternion(r) if sim.body is None else sim.body.getQuaternion()
        return out

    def reading(self) -> GatheredReading:
        """Every moving link's body as ODE holds it (centre of mass), gathered once per state of the
        bodies: the guard, the state read, the efforts and the sensors share it. Callers must not
        write into the arrays."""
        if self._reading is None:
            self._reading = self.bodies.read()
        return self._reading

    def root_frame(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The root link's frame origin, rotation, and [linear, angular] velocity there (new arrays)."""
        row = self.reading().rows[0].tolist()
        x, y, z, vx, vy, vz, wx, wy, wz = row[:9]
        r00, r01, r02, r10, r11, r12, r20, r21, r22 = row[9:18]
        cx, cy, cz = self._root_com
        ox = r00 * cx + r01 * cy + r02 * cz  # the centre of mass from the origin, world frame
        oy = r10 * cx + r11 * cy + r12 * cz
        oz = r20 * cx + r21 * cy + r22 * cz
        position = np.array([x - ox, y - oy, z - oz])
        velocity = np.array([vx - (wy * oz - wz * oy), vy - (wz * ox - wx * oz), vz - (wx * oy - wy * ox), wx, wy, wz])
        return position, np.array(row[9:18]).reshape(3, 3), velocity

    def link_frames(self) -> BodyReading:
        """Every moving link's frame origin (not its centre of mass) and velocity there, world frame.
        Computed once per state of the bodies (the observers' link states and the efforts ask
        between two steps); callers must not write into the arrays."""
        if self._frames is None:
            self._frames = self._compute_frames()
            for values in vars(self._frames).values():
                if values is not None:
                    values.flags.writeable = False  # shared until the next step: a write would be a bug
        return self._frames

    def _compute_frames(self) -> BodyReading:
        reading = self.reading()
        offset = einsum("nij,nj->ni", reading.rotations, self._coms)  # centre of mass from the origin
        return BodyReading(
            positions=reading.positions - offset,
            rotations=reading.rotations,
            quaternions=reading.quaternions,
            linear=reading.linear - cross_rows(reading.angular, offset),
            angular=reading.angular,
        )


def _zero() -> float:
    return 0.0


def _value_reader(sim: LinkSim) -> tuple[Callable[[], float], float]:
    """A joint that is not a hinge: its ODE getter and the offset added to what it reads."""
    if sim.kind == "slider":
        return sim.joint.getPosition, sim.offset
    return _zero, 0.0


def _rate_reader(sim: LinkSim) -> Callable[[], float]:
    if sim.kind == "hinge":
        return sim.joint.getAngleRate
    if sim.kind == "slider":
        return sim.joint.getPositionRate
    return _zero


def cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """A 3-vector cross product without numpy's general-case overhead (hot path)."""
    return np.array([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]])


def cross_rows(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise cross products of (n, 3) arrays: one einsum with the permutation symbol (np.cross
    and column-wise sums cost two to three times as much for a robot's 30 rows)."""
    return einsum("ijk,nj,nk->ni", _LEVI_CIVITA, a, b)


class _Efforts:
    """What :meth:`OdeModel.joint_efforts` registers on the model's :class:`JointWrenches`.

    A joint sits at its link's frame origin and ODE reports the constraint wrench on the child
    body: force ``f`` and torque ``t`` about its centre of mass. With ``a`` the joint axis and
    ``c`` the centre of mass (both in the link frame, turned by the body's rotation ``R``), the
    effort about a hinge is ``(t + Rc x f) . Ra = t . Ra + f . R(a x c)``, along a slider ``f . Ra``:
    two link-frame constants per joint, one rotation each, no cross product per tick."""

    def __init__(self, model: OdeModel) -> None:
        measured = [(column, sim) for column, sim in enumerate(model.joints) if sim.kind in ("hinge", "slider")]
        self.size = len(model.joints)
        self.columns = np.array([column for column, _ in measured], dtype=np.intp)
        self.every_joint = np.array_equal(self.columns, np.arange(self.size))  # no zeros to fill in
        self.wrenches = model.wrenches
        rows = [self.wrenches.add(sim) for _, sim in measured]
        if rows != list(range(len(measured))):
            raise AssertionError("joint efforts must be the first joints registered on a model's wrenches")
        # per joint, the link-frame vectors that f and t are projected on, one row of six
        self.weights = np.array([_effort_weights(sim).T.reshape(6) for _, sim in measured]).reshape(-1, 6)

    def compute(self, frames: BodyReading) -> np.ndarray:
        if not len(self.columns):
            return np.zeros(self.size)
        wrenches = self.wrenches.link_frame(frames)
        if len(wrenches) > len(self.columns):  # rows of other readers' joints follow the efforts'
            wrenches = wrenches[: len(self.columns)]
        efforts = einsum("kb,kb->k", wrenches, self.weights)
        if self.every_joint:
            return efforts
        out = np.zeros(self.size)
        out[self.columns] = efforts
        return out


def slice_if_contiguous(rows: list[int]) -> slice | np.ndarray:
    """Rows as a slice when they run one after another (a view instead of a copy each tick)."""
    if rows and rows == list(range(rows[0], rows[0] + len(rows))):
        return slice(rows[0], rows[0] + len(rows))
    return np.array(rows, dtype=np.intp)


def _effort_weights(sim: LinkSim) -> np.ndarray:
    axis, com = np.asarray(sim.axis, float), np.asarray(sim.com, float)
    if sim.kind == "hinge":
        return np.stack([np.cross(axis, com), axis], axis=1)
    return np.stack([axis, np.zeros(3)], axis=1)
