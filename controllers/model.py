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
``self.model`` is given the world's.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
import pinocchio as pin

from hrpsim.bodyinfo import Body
from hrpsim.controllers.ik import IKOptions, IKResult, Target, solve_ik
from hrpsim.controllers.model_build import build_model, place_root
from hrpsim.controllers.zmp import model_zmp, sensor_zmp
from hrpsim.errors import NotFound, RequestError

WORLD = "world"  # axes of the world, at the frame's origin (Pinocchio's LOCAL_WORLD_ALIGNED)
LOCAL = "local"  # axes of the frame itself, at its origin
_REFERENCES = {WORLD: pin.ReferenceFrame.LOCAL_WORLD_ALIGNED, LOCAL: pin.ReferenceFrame.LOCAL}


class Pose(NamedTuple):
    position: np.ndarray  # (3,) m, world frame
    rotation: np.ndarray  # (3, 3) the frame's axes in world coordinates


class RobotModel:
    """One robot's rigid-body model, set to one configuration at a time (``update`` or ``set``)."""

    def __init__(self, body: Body, *, gravity: Any = (0.0, 0.0, -9.8)) -> None:
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
        self._order = np.concatenate([np.arange(self._root), self.joint_v_index, self._others()]).astype(int)
        self._identity_order = bool(np.array_equal(self._order, np.arange(self.nv)))
        self._mimics = self._mimic_indices()
        self._root_pose: tuple[np.ndarray, np.ndarray] | None = None
        self._welded_mass, self._welded_com = 0.0, np.zeros(3)
        moving = sum(inertia.mass for inertia in self.pin_model.inertias[1:])
        self._total_mass = float(moving + sum(inertia.mass for inertia, _ in built.welded))
        self.q = pin.neutral(self.pin_model)  # Pinocchio's order and conventions
        self.v = np.zeros(self.pin_model.nv)
        self._done: set[str] = set()
        self._ik_data: pin.Data | None = None
        self.time = 0.0
        self.tick = -1
        if not self.free_root:
            self._place(np.zeros(3), np.eye(3))

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
        model = self.pin_model
        if model.existFrame(name):
            return int(model.getFrameId(name))
        links = ", ".join(lk.name for lk in self.body.links)
        raise NotFound(f"model {self.body.name!r} has no link or sensor named {name!r}; links: {links}")

    # --- configuration ---

    def update(self, state: Any) -> None:
        """Take the configuration and velocities of a controller's ``state`` (once per tick)."""
        self.set(
            state.q,
            state.dq,
            root_position=state.root_position,
            root_rotation=state.root_rotation,
            root_velocity=state.root_velocity,
        )
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
        """Joint values (rad or m, controller order), rates, and the root's world pose and world-frame
        velocity (linear then angular). Unset root quantities keep their values."""
        self.q[self.joint_q_index] = np.asarray(q, float)
        self.v[self.joint_v_index] = 0.0 if dq is None else np.asarray(dq, float)
        if root_position is not None or root_rotation is not None:
            position = self.root_pose.position if root_position is None else np.asarray(root_position, float)
            rotation = self.root_pose.rotation if root_rotation is None else np.asarray(root_rotation, float)
            if self.free_root:
                self.q[:3] = position
                self.q[3:7] = pin.Quaternion(rotation).coeffs()
            else:
                self._place(position, rotation)
        if self.free_root and root_velocity is not None:
            rotation_t = pin.Quaternion(self.q[3:7]).toRotationMatrix().T
            velocity = np.asarray(root_velocity, float)
            self.v[:3], self.v[3:6] = rotation_t @ velocity[:3], rotation_t @ velocity[3:]
        for (index, master), (rate, master_rate), multiplier, offset in self._mimics:
            self.q[index] = multiplier * self.q[master] + offset
            self.v[rate] = multiplier * self.v[master_rate]
        self._done.clear()

    @property
    def root_pose(self) -> Pose:
        if self.free_root:
            return Pose(self.q[:3].copy(), pin.Quaternion(self.q[3:7]).toRotationMatrix())
        assert self._root_pose is not None
        return Pose(*self._root_pose)

    def _place(self, position: np.ndarray, rotation: np.ndarray) -> None:
        old = self._root_pose
        if old is not None and np.array_equal(position, old[0]) and np.array_equal(rotation, old[1]):
            return
        self._root_pose = (position.copy(), rotation.copy())
        self._welded_mass, self._welded_com = place_root(self._built, position, rotation)

    # --- kinematics ---

    def link_pose(self, name: str) -> Pose:
        """World pose of a link's frame (at its joint) or a sensor's frame."""
        self._kinematics()
        placement = self.data.oMf[self.frame_id(name)]
        return Pose(placement.translation.copy(), placement.rotation.copy())

    sensor_pose = link_pose

    def jacobian(self, name: str, *, frame: str = WORLD) -> np.ndarray:
        """6 x nv: the velocity (linear, then angular) of a link's or sensor's frame origin per unit
        generalised velocity, in world axes (``frame="world"``) or the frame's own (``"local"``)."""
        try:
            reference = _REFERENCES[frame]
        except KeyError:
            raise RequestError(f"frame={frame!r}: use {WORLD!r} or {LOCAL!r}") from None
        self._jacobians()
        return self._ours_columns(pin.getFrameJacobian(self.pin_model, self.data, self.frame_id(name), reference))

    def com(self) -> np.ndarray:
        """Centre of mass of the whole robot, world frame (m)."""
        self._com()
        moving = self.total_mass - self._welded_mass
        return (self.data.com[0] * moving + self._welded_com * self._welded_mass) / self.total_mass

    def com_velocity(self) -> np.ndarray:
        """Velocity of the centre of mass, world frame (m/s)."""
        return self.com_jacobian() @ self._ours_vector(self.v)

    def com_jacobian(self) -> np.ndarray:
        """3 x nv: the centre of mass's world velocity per unit generalised velocity."""
        if "com_jacobian" not in self._done:
            jacobian = pin.jacobianCenterOfMass(self.pin_model, self.data, self.q, False)
            moving = self.total_mass - self._welded_mass
            self._com_jacobian = self._ours_columns(jacobian * (moving / self.total_mass))
            self._done.add("com_jacobian")
        return self._com_jacobian

    # --- dynamics ---

    def mass_matrix(self) -> np.ndarray:
        """nv x nv joint-space inertia (kg, kg m, kg m^2), rotor inertia included."""
        if "mass" not in self._done:
            upper = pin.crba(self.pin_model, self.data, self.q)
            self._mass = self._ours_matrix(np.triu(upper) + np.triu(upper, 1).T)
            self._done.add("mass")
        return self._mass

    def gravity(self) -> np.ndarray:
        """nv generalised forces (N m, N) that hold the robot still against gravity."""
        return self._ours_vector(pin.computeGeneralizedGravity(self.pin_model, self.data, self.q))

    def coriolis(self) -> np.ndarray:
        """nv Coriolis and centrifugal forces C(q, dq) dq at the current velocities."""
        effects = pin.nonLinearEffects(self.pin_model, self.data, self.q, self.v)
        return self._ours_vector(effects) - self.gravity()

    def inverse_dynamics(self, ddq: Any) -> np.ndarray:
        """nv generalised forces giving accelerations ``ddq`` (nv, our order) at the current state:
        M ddq + C dq + g, rotor inertia included (computed torque)."""
        acceleration = np.zeros(self.nv)
        acceleration[self._order] = np.asarray(ddq, float)
        return self._ours_vector(pin.rnea(self.pin_model, self.data, self.q, self.v, acceleration))

    def joint_torques(self, generalised: np.ndarray) -> np.ndarray:
        """The joints' part (controller order) of an nv vector: what to send as torque."""
        return np.asarray(generalised)[self._root : self._root + len(self.joint_names)]

    # --- balance and inverse kinematics (zmp.py, ik.py) ---

    def zmp(self, ddq: Any = None, *, height: float = 0.0) -> np.ndarray | None:
        """The ZMP (world, on z = ``height``) the motion with accelerations ``ddq`` needs (default
        zero: the static ZMP, under the centre of mass); None in the air. A free root only."""
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
        if "kinematics" not in self._done:
            pin.forwardKinematics(self.pin_model, self.data, self.q, self.v)
            pin.updateFramePlacements(self.pin_model, self.data)
            self._done.add("kinematics")

    def _jacobians(self) -> None:
        if "jacobians" not in self._done:
            pin.computeJointJacobians(self.pin_model, self.data, self.q)
            pin.updateFramePlacements(self.pin_model, self.data)
            self._done.update(("jacobians", "kinematics"))

    def _com(self) -> None:
        if "com" not in self._done:
            pin.centerOfMass(self.pin_model, self.data, self.q, self.v)
            self._done.add("com")

    def _ours_vector(self, values: np.ndarray) -> np.ndarray:
        return values.copy() if self._identity_order else values[self._order]

    def _ours_columns(self, matrix: np.ndarray) -> np.ndarray:
        return matrix.copy() if self._identity_order else matrix[:, self._order]

    def _ours_matrix(self, matrix: np.ndarray) -> np.ndarray:
        return matrix if self._identity_order else matrix[np.ix_(self._order, self._order)]

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
