"""The robot's kinematics and dynamics for a controller, on Pinocchio.

Units are SI (m, rad, kg, N, N m, s); "world" is the simulator's world frame (Z up). A link's frame
sits at its joint (hrpsim.bodyinfo), a sensor's frame where the model file mounts it.

Generalised coordinates: a free root first, then every joint in the controller's order (the order
of ``state.q``). The root's 6 velocity coordinates are Pinocchio's free flyer's: the root frame's
linear velocity, then its angular velocity, both expressed in the root link's frame (``update``
converts the world-frame ``state.root_velocity``). So with ``n`` joints, ``nv`` is ``n + 6`` for a
free root and ``n`` for a fixed one; mass matrices are ``nv x nv``, Jacobians ``6 x nv`` (linear
rows first) and ``inverse_dynamics`` returns ``nv`` generalised forces (for a free root the first 6
are the wrench the root would need, in its own frame).

Gravity is (0, 0, -9.8) m/s^2 unless given (``gravity=``), as in OpenHRP's samples; a controller's
``self.model`` is given the world's. A new model's root stands where the model file places it (the
root link's translation and rotation) unless given ``root_position``/``root_rotation``; a
controller's ``self.model`` is given where the project places its robot.

One state, one forward pass: ``set``/``update`` only store the state; the first query after it runs
Pinocchio's joint placements and joint Jacobians once (``computeJointJacobians``), and every link
pose, frame Jacobian and the centre of mass are read off that pass; each other result is computed
on first use and kept until the state changes.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
import pinocchio as pin

from hrpsim.bodyinfo import Body
from hrpsim.errors import NotFound, RequestError
from hrpsim.toolkit.ik import IKOptions, IKResult, Target, solve_ik
from hrpsim.toolkit.model_build import build_model, place_root
from hrpsim.toolkit.zmp import model_zmp, sensor_zmp

WORLD = "world"  # axes of the world, at the frame's origin (Pinocchio's LOCAL_WORLD_ALIGNED)
LOCAL = "local"  # axes of the frame itself, at its origin
_REFERENCES = {WORLD: pin.ReferenceFrame.LOCAL_WORLD_ALIGNED, LOCAL: pin.ReferenceFrame.LOCAL}


class Pose(NamedTuple):
    position: np.ndarray  # (3,) m, world frame
    rotation: np.ndarray  # (3, 3) the frame's axes in world coordinates


class _Given(NamedTuple):
    """What ``set`` was given, read as ``update`` reads a state."""

    q: Any
    dq: Any
    root_position: Any
    root_rotation: Any
    root_velocity: Any
    time: float
    tick: int


class RobotModel:
    """One robot's rigid-body model, set to one configuration at a time (``update`` or ``set``)."""

    def __init__(
        self,
        body: Body,
        *,
        gravity: Any = (0.0, 0.0, -9.8),
        root_position: Any = None,
        root_rotation: Any = None,
    ) -> None:
        self.body = body
        built = build_model(body)
        self._built = built
        self.pin_model: pin.Model = built.model
        self.pin_model.gravity = pin.Motion(np.asarray(gravity, float), np.zeros(3))
        self.data: pin.Data = self.pin_model.createData()
        self.joint_names: list[str] = body.joint_names
        self.free_root = built.free_root
        self._root = 6 if self.free_root else 0
        self.joint_q_index, self.joint_v_index = self._joint_indices()
        self._frames = _frame_ids(self.pin_model)
        order = np.concatenate([np.arange(self._root), self.joint_v_index, self._others()]).astype(int)
        # None: Pinocchio's velocity order is ours already
        self._order: np.ndarray | None = None if np.array_equal(order, np.arange(self.nv)) else order
        self._mimics = self._mimic_indices()
        self._root_pose: tuple[np.ndarray, np.ndarray] | None = None
        self._welded_mass, self._welded_com = 0.0, np.zeros(3)
        moving = sum(inertia.mass for inertia in self.pin_model.inertias[1:])
        self._total_mass = float(moving + sum(inertia.mass for inertia, _ in built.welded))
        self.q = pin.neutral(self.pin_model)  # Pinocchio's order and conventions
        self._v = np.zeros(self.pin_model.nv)
        self._rates: np.ndarray | None = None  # the joints' rates as given (controller order)
        self._root_velocity: Any = np.zeros(6)  # world frame, as given; turned into the root's axes when used
        self._results: dict[str, Any] = {}  # what has been computed for the current state
        self._ik_data: pin.Data | None = None
        self.time = 0.0
        self.tick = -1
        root = body.root
        self.set(
            np.zeros(len(self.joint_names)),
            root_position=root.translation if root_position is None else root_position,
            root_rotation=root.rotation if root_rotation is None else root_rotation,
        )

    # --- sizes and names ---

    @property
    def nv(self) -> int:
        return int(self.pin_model.nv)

    @property
    def total_mass(self) -> float:
        """kg, every link (massless ones count 1 g, as in the engines)."""
        return self._total_mass

    def frame_id(self, name: str) -> int:
        """Pinocchio's frame id of a link or sensor named ``name``."""
        try:
            return self._frames[name]
        except KeyError:
            links = ", ".join(lk.name for lk in self.body.links)
            raise NotFound(f"model {self.body.name!r} has no link or sensor named {name!r}; links: {links}") from None

    # --- configuration ---

    def update(self, state: Any) -> None:
        """Take the configuration and velocities of a controller's ``state`` (once per tick); None for
        a root quantity keeps its value. The velocities are read from the state when first needed
        (most ticks need none), so the state's arrays must not change after: a state never does."""
        joints = np.asarray(state.q, float)
        if joints.shape != self.joint_q_index.shape:
            raise self._wrong_length("q", joints)
        rates = state.dq
        if rates is not None:
            rates = np.asarray(rates, float)
            if rates.shape != self.joint_q_index.shape:
                raise self._wrong_length("dq", rates)
        self.q[self.joint_q_index] = joints
        position, rotation, velocity = state.root_position, state.root_rotation, state.root_velocity
        if not self.free_root:
            if position is not None or rotation is not None:
                self._place(position, rotation)
        elif position is not None and rotation is not None:
            self.q[:7] = pin.SE3ToXYZQUAT(pin.SE3(np.asarray(rotation, float), np.asarray(position, float)))
        elif position is not None:
            self.q[:3] = position
        elif rotation is not None:
            self.q[3:7] = pin.Quaternion(np.asarray(rotation, float)).coeffs()
        self._rates = rates
        if velocity is not None:
            self._root_velocity = velocity
        for (index, master), _, multiplier, offset in self._mimics:
            self.q[index] = multiplier * self.q[master] + offset
        self._results.clear()
        self.time, self.tick = state.time, state.tick

    def set(
        self,
        q: Any,
        dq: Any = None,
        *,
        root_position: Any = None,
        root_rotation: Any = None,
        root_velocity: Any = None,
    ) -> None:
        """Joint values (rad or m, controller order), rates (default zero), and the root's world pose
        and world-frame velocity (linear then angular). Unset root quantities keep their values."""
        rates = None if dq is None else np.array(dq, float)  # copies: the caller may reuse its arrays
        velocity = None if root_velocity is None else np.array(root_velocity, float)
        self.update(_Given(q, rates, root_position, root_rotation, velocity, self.time, self.tick))

    def _wrong_length(self, name: str, values: np.ndarray) -> RequestError:
        return RequestError(
            f"{name} has shape {values.shape}, expected ({len(self.joint_names)},): one value per joint of "
            f"{self.body.name!r}, in controller order ({', '.join(self.joint_names)})"
        )

    @property
    def v(self) -> np.ndarray:
        """Generalised velocities of the current state (Pinocchio's order and conventions)."""
        if "v" not in self._results:
            self._v[self.joint_v_index] = 0.0 if self._rates is None else self._rates
            if self.free_root:
                rotation_t = pin.Quaternion(self.q[3:7]).toRotationMatrix().T
                velocity = np.asarray(self._root_velocity, float)
                self._v[:3], self._v[3:6] = rotation_t @ velocity[:3], rotation_t @ velocity[3:]
            for _, (rate, master_rate), multiplier, _ in self._mimics:
                self._v[rate] = multiplier * self._v[master_rate]
            self._results["v"] = True
        return self._v

    @property
    def root_pose(self) -> Pose:
        if self.free_root:
            return Pose(self.q[:3].copy(), pin.Quaternion(self.q[3:7]).toRotationMatrix())
        assert self._root_pose is not None
        return Pose(*self._root_pose)

    def _place(self, position: Any, rotation: Any) -> None:
        """Put a fixed root at this world pose (None keeps that part)."""
        old = self._root_pose
        position = old[0] if position is None else np.asarray(position, float)  # type: ignore[index]
        rotation = old[1] if rotation is None else np.asarray(rotation, float)  # type: ignore[index]
        if old is not None and np.array_equal(position, old[0]) and np.array_equal(rotation, old[1]):
            return
        self._root_pose = (position.copy(), rotation.copy())
        self._welded_mass, self._welded_com = place_root(self._built, position, rotation)

    # --- kinematics: one pass per state ---

    def link_pose(self, name: str) -> Pose:
        """World pose of a link's frame (at its joint) or a sensor's frame."""
        if "kinematics" not in self._results:
            self._kinematics()
        frame_id = self._frames.get(name)
        if frame_id is None:
            frame_id = self.frame_id(name)
        placement = pin.updateFramePlacement(self.pin_model, self.data, frame_id)  # a copy, kept by its arrays
        return Pose(placement.translation, placement.rotation)

    sensor_pose = link_pose

    def jacobian(self, name: str, *, frame: str = WORLD) -> np.ndarray:
        """6 x nv: the velocity (linear, then angular) of a link's or sensor's frame origin per unit
        generalised velocity, in world axes (``frame="world"``) or the frame's own (``"local"``)."""
        reference = _REFERENCES.get(frame)
        if reference is None:
            raise RequestError(f"frame={frame!r}: use {WORLD!r} or {LOCAL!r}")
        if "kinematics" not in self._results:
            self._kinematics()
        frame_id = self._frames.get(name)
        if frame_id is None:
            frame_id = self.frame_id(name)
        return self._ours_columns(pin.getFrameJacobian(self.pin_model, self.data, frame_id, reference))

    def com(self) -> np.ndarray:
        """Centre of mass of the whole robot, world frame (m)."""
        if "kinematics" not in self._results:
            self._kinematics()
        centre = pin.centerOfMass(self.pin_model, self.data, pin.POSITION, False)
        if self._welded_mass:
            moving = self.total_mass - self._welded_mass
            centre = (centre * moving + self._welded_com * self._welded_mass) / self.total_mass
        return centre

    def com_velocity(self) -> np.ndarray:
        """Velocity of the centre of mass, world frame (m/s)."""
        return self.com_jacobian() @ self._ours_vector(self.v)

    def com_jacobian(self) -> np.ndarray:
        """3 x nv: the centre of mass's world velocity per unit generalised velocity."""
        if "com_jacobian" not in self._results:
            jacobian = pin.jacobianCenterOfMass(self.pin_model, self.data, self.q, False)
            moving = self.total_mass - self._welded_mass
            self._results["com_jacobian"] = self._ours_columns(jacobian * (moving / self.total_mass))
        return self._results["com_jacobian"]

    # --- dynamics ---

    def mass_matrix(self) -> np.ndarray:
        """nv x nv joint-space inertia (kg, kg m, kg m^2), rotor inertia included."""
        if "mass" not in self._results:
            upper = pin.crba(self.pin_model, self.data, self.q)
            self._results["mass"] = self._ours_matrix(np.triu(upper) + np.triu(upper, 1).T)
        return self._results["mass"]

    def gravity(self) -> np.ndarray:
        """nv generalised forces (N m, N) that hold the robot still against gravity."""
        if "gravity" not in self._results:
            self._results["gravity"] = pin.computeGeneralizedGravity(self.pin_model, self.data, self.q)
        return self._ours_vector(self._results["gravity"])

    def coriolis(self) -> np.ndarray:
        """nv Coriolis and centrifugal forces C(q, dq) dq at the current velocities."""
        effects = pin.nonLinearEffects(self.pin_model, self.data, self.q, self.v)
        return self._ours_vector(effects) - self.gravity()

    def inverse_dynamics(self, ddq: Any) -> np.ndarray:
        """nv generalised forces giving accelerations ``ddq`` (nv, our order) at the current state:
        M ddq + C dq + g, rotor inertia included (computed torque)."""
        acceleration = np.zeros(self.nv)
        acceleration[self._order if self._order is not None else slice(None)] = np.asarray(ddq, float)
        return self._ours_vector(pin.rnea(self.pin_model, self.data, self.q, self.v, acceleration))

    def joint_torques(self, generalised: np.ndarray) -> np.ndarray:
        """The joints' part (controller order) of an nv vector: what to send as torque."""
        return np.asarray(generalised)[self._root : self._root + len(self.joint_names)]

    # --- balance and inverse kinematics (zmp.py, ik.py) ---

    def zmp(self, ddq: Any = None, *, height: float = 0.0) -> np.ndarray | None:
        """The ZMP (world, on z = ``height``) the motion with accelerations ``ddq`` needs at the current
        velocities (default ``ddq`` zero: under the centre of mass only when the robot is at rest);
        None in the air. A free root only."""
        return model_zmp(self, ddq, height=height)

    def sensor_zmp(
        self, state: Any, *, sensors: list[str] | None = None, height: float = 0.0, feet: bool = True
    ) -> np.ndarray | None:
        """The ZMP from the force sensors of ``state`` (default: all; see zmp.sensor_zmp)."""
        return sensor_zmp(self, state, sensors=sensors, height=height, feet=feet)

    def solve_ik(
        self, targets: list[Target], *, q: Any = None, joints: list[str] | None = None, options: IKOptions | None = None
    ) -> IKResult:
        """Damped least-squares IK from ``q`` (default: now); see ik.solve_ik. Leaves the model as it is."""
        return solve_ik(self, targets, q=q, joints=joints, options=options)

    @property
    def ik_data(self) -> pin.Data:
        """Scratch data for IK iterations, so they leave this tick's results alone."""
        if self._ik_data is None:
            self._ik_data = self.pin_model.createData()
        return self._ik_data

    # --- internals ---

    def _kinematics(self) -> None:
        """Every joint's world placement and Jacobian columns for the current state, once."""
        if "kinematics" not in self._results:
            pin.computeJointJacobians(self.pin_model, self.data, self.q)
            self._results["kinematics"] = True

    def _ours_vector(self, values: np.ndarray) -> np.ndarray:
        return values.copy() if self._order is None else values.take(self._order)

    def _ours_columns(self, matrix: np.ndarray) -> np.ndarray:
        return matrix if self._order is None else matrix.take(self._order, axis=1)

    def _ours_matrix(self, matrix: np.ndarray) -> np.ndarray:
        return matrix if self._order is None else matrix[np.ix_(self._order, self._order)]

    def _joint_indices(self) -> tuple[np.ndarray, np.ndarray]:
        joints = [self.pin_model.joints[self.pin_model.getJointId(name)] for name in self.joint_names]
        return np.array([j.idx_q for j in joints], dtype=int), np.array([j.idx_v for j in joints], dtype=int)

    def _others(self) -> np.ndarray:
        """Velocity indices of joints the controller does not see (mimics without a joint id)."""
        seen = set(range(self._root)) | set(self.joint_v_index.tolist())
        return np.array([i for i in range(self.nv) if i not in seen], dtype=int)

    def _mimic_indices(self) -> list[tuple[tuple[int, int], tuple[int, int], float, float]]:
        """Per mimic joint the controller does not drive: (its q index, its master's), (the same for
        v), multiplier, offset."""
        model, found = self.pin_model, []
        for link in self.body.links:
            if link.mimic is None or link.joint_id >= 0 or not model.existJointName(link.mimic.joint):
                continue
            joint = model.joints[model.getJointId(link.joint_label)]
            master = model.joints[model.getJointId(link.mimic.joint)]
            indices = ((joint.idx_q, master.idx_q), (joint.idx_v, master.idx_v))
            found.append((*indices, link.mimic.multiplier, link.mimic.offset))
        return found


def _frame_ids(model: pin.Model) -> dict[str, int]:
    """Frame id by name, the first of a name as Pinocchio's getFrameId finds it."""
    ids: dict[str, int] = {}
    for index, frame in enumerate(model.frames):
        ids.setdefault(frame.name, index)
    return ids
