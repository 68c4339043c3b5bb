"""Drive modes of one model's joints in MuJoCo, with the meaning they have on ODE.

Every joint has a motor actuator and an inactive joint equality (``add_drive_elements``), and a
rotor with a drag tendon once it uses the velocity drive (``add_rotor``):

- torque: the actuator is a plain motor (force = ctrl = the command). Reflected rotor inertia is
  the joint's armature, so it is in joint space in every mode.
- high_gain: the joint equality holds the joint at q_ref + dq_ref dt, with direct stiffness
  1/dt^2 and damping 1/dt and an impedance of nearly 1: the constraint's reference acceleration
  (-(v + r/dt)/dt) takes the joint there within one step, implicitly, like ODE's motor with target
  velocity (q_ref - q)/dt + dq_ref. Its force is unbounded.
- velocity: a rotor of immense inertia beside the model turns at dq_ref, and a tendon (joint minus
  rotor) with dry friction equal to the joint's torque limit (1e7 N m if it has none) drags the
  joint along: MuJoCo's friction constraint, made as hard as the hold above, brings the relative
  speed to zero within a step unless that needs more than the limit, exactly ODE's velocity motor.
  (An actuator cannot do this: MuJoCo clamps its force before the implicit step, so a stiff
  velocity servo with a force limit chatters between the limits.)
"""

from __future__ import annotations

import math

import mujoco
import numpy as np

from hrpsim.conventions import initial_drive_modes
from hrpsim.engines.mujoco.layout import ModelLayout, element, helper_body

ROTOR_INERTIA = 1e10  # kg m^2 of a velocity drive's rotor: no joint's drag changes its speed
UNLIMITED = 1e7  # N m: the velocity drive's force limit for joints without one (ODE's motor uses the same)
HARD_IMPEDANCE = (0.9999, 0.9999, 0.001, 0.5, 2.0)  # solimp: the constraint nearly hard at every distance


def add_drive_elements(spec: mujoco.MjSpec, layout: ModelLayout) -> None:
    """Each joint's motor and hold equality; rotors for the joints the project starts in velocity mode."""
    velocity = _velocity_joints(layout)
    for joint in layout.joints:
        if not joint or (joint == layout.joints[0] and layout.info.links[0].joint_type == "free"):
            continue
        spec.add_actuator(
            name=f"{joint}/drive",  # beside an MJCF model's own actuators, which may be named as its joints
            trntype=mujoco.mjtTrn.mjTRN_JOINT,
            target=joint,
            gaintype=mujoco.mjtGain.mjGAIN_FIXED,
            biastype=mujoco.mjtBias.mjBIAS_NONE,
            gainprm=[1.0] + [0.0] * 9,
            ctrllimited=mujoco.mjtLimited.mjLIMITED_FALSE,
            forcelimited=mujoco.mjtLimited.mjLIMITED_FALSE,
        )
        spec.add_equality(
            name=f"{joint}/hold",
            type=mujoco.mjtEq.mjEQ_JOINT,
            name1=joint,
            active=False,
            objtype=mujoco.mjtObj.mjOBJ_JOINT,
        )
        if joint in velocity:
            add_rotor(spec, joint)


def _velocity_joints(layout: ModelLayout) -> set[str]:
    """MuJoCo names of the joints the project starts in velocity mode."""
    drive = layout.config.drive
    labels = [lk.joint_label for lk in layout.info.links]
    chosen = (
        labels
        if drive == "velocity"
        else []
        if isinstance(drive, str)
        else [name for name, mode in drive.items() if mode == "velocity"]
    )
    return {element(layout.name, label) for label in chosen}


def add_rotor(spec: mujoco.MjSpec, joint: str) -> None:
    """The velocity drive's rotor: a separate, immensely heavy wheel turning at dq_ref, which drags
    the joint along through a tendon friction of at most the torque limit (0: no drag). Only joints
    that use the velocity drive get one, because 29 idle rotors cost sample1 a sixth of its speed."""
    rotor = helper_body(spec.worldbody, f"{joint}/rotor")
    rotor.add_joint(
        name=f"{joint}/rotor", type=mujoco.mjtJoint.mjJNT_HINGE, axis=[0.0, 0.0, 1.0], armature=ROTOR_INERTIA
    )
    drag = spec.add_tendon(name=f"{joint}/drag", frictionloss=0.0)
    drag.wrap_joint(joint, 1.0)
    drag.wrap_joint(f"{joint}/rotor", -1.0)


class Drives:
    """Commands and modes of one robot's joints (controller order) and what they do each step."""

    def __init__(
        self,
        model: mujoco.MjModel,
        data: mujoco.MjData,
        robot: str,
        joint_names: list[str],
        mujoco_joints: list[str],
        initial: np.ndarray,
        torque_limits: list[float],
        configured: str | dict[str, str],
    ) -> None:
        self.m, self.d, self.robot = model, data, robot
        self._ctrl = data.ctrl  # (a view kept: each attribute of an MjData makes a new array)
        self.dt = float(model.opt.timestep)
        self.names = joint_names
        self.mujoco_joints = mujoco_joints
        self.index = {name: i for i, name in enumerate(joint_names)}
        n = len(joint_names)
        self.torque, self.q_ref, self.dq_ref = np.zeros(n), initial.astype(float).copy(), np.zeros(n)
        self.modes = ["torque"] * n
        self.limits = torque_limits
        obj = mujoco.mjtObj

        def ids(kind: mujoco.mjtObj, suffix: str) -> np.ndarray:
            return np.array([mujoco.mj_name2id(model, kind, j + suffix) if j else -1 for j in mujoco_joints], dtype=int)

        self.actuators, self.equalities, self.tendons = (
            ids(obj.mjOBJ_ACTUATOR, "/drive"),
            ids(obj.mjOBJ_EQUALITY, "/hold"),
            ids(obj.mjOBJ_TENDON, "/drag"),
        )
        joints, rotors = ids(obj.mjOBJ_JOINT, ""), ids(obj.mjOBJ_JOINT, "/rotor")
        self.qpos = np.where(joints >= 0, model.jnt_qposadr[np.maximum(joints, 0)], -1)
        self.rotor_qpos = np.where(rotors >= 0, model.jnt_qposadr[np.maximum(rotors, 0)], -1)
        self.rotor_dof = np.where(rotors >= 0, model.jnt_dofadr[np.maximum(rotors, 0)], -1)
        hard = ([-1.0 / self.dt**2, -1.0 / self.dt], HARD_IMPEDANCE)
        for k in self.equalities[self.equalities >= 0]:
            model.eq_solref[k], model.eq_solimp[k] = hard
        for k in self.tendons[self.tendons >= 0]:
            model.tendon_solref_fri[k], model.tendon_solimp_fri[k] = hard
        self.effort = np.zeros(n)
        self._groups()
        self.set_modes(initial_drive_modes(self.robot, configured, self.names))

    def without_rotor(self, modes: dict[str, str]) -> list[int]:
        """Joints (controller indices) these modes put in velocity mode that have no rotor yet."""
        return [
            self.index[name]
            for name, mode in modes.items()
            if mode == "velocity" and self.actuators[self.index[name]] >= 0 and self.tendons[self.index[name]] < 0
        ]

    def set_modes(self, modes: dict[str, str]) -> None:
        """Modes by joint name, already checked (Engine.apply, or the project's)."""
        for name, mode in modes.items():
            i = self.index[name]
            if mode == "high_gain" and self.modes[i] != "high_gain" and self.qpos[i] >= 0:
                # switching into hold keeps the joint where it is (its value counts from MuJoCo's qpos0)
                self.q_ref[i] = self.d.qpos[self.qpos[i]] - self.m.qpos0[self.qpos[i]]
            self.modes[i] = mode
            self._configure(i)
        self._groups()

    def _configure(self, i: int) -> None:
        act, mode = self.actuators[i], self.modes[i]
        if act < 0:
            return
        self.m.actuator_gainprm[act, 0] = 1.0 if mode == "torque" else 0.0
        self.d.eq_active[self.equalities[i]] = int(mode == "high_gain")
        limit = self.limits[i]
        limit = limit if math.isfinite(limit) and limit > 0.0 else UNLIMITED
        if self.tendons[i] >= 0:
            self.m.tendon_frictionloss[self.tendons[i]] = limit if mode == "velocity" else 0.0

    def _groups(self) -> None:
        driven = self.actuators >= 0
        modes = np.array(self.modes)
        self._torque = np.flatnonzero(driven & (modes == "torque"))
        self._velocity = np.flatnonzero(driven & (modes == "velocity"))
        self._hold = np.flatnonzero(driven & (modes == "high_gain"))
        self._torque_actuators = self.actuators[self._torque]
        # every joint in torque mode (the commonest case): whole arrays, no gathering
        self._torque_only = slice(None) if self._torque.size == len(self.names) else self._torque
        # the constraint kinds as plain ints: numpy compares an array with a MuJoCo enum object element
        # by element in Python (120 us a step for 60 rows, as long as the step itself)
        groups = (
            (self._hold, int(mujoco.mjtConstraint.mjCNSTR_EQUALITY), self.equalities, self.m.neq),
            (self._velocity, int(mujoco.mjtConstraint.mjCNSTR_FRICTION_TENDON), self.tendons, self.m.ntendon),
        )
        self._constrained = [group for group in groups if group[0].size]  # effort: a constraint's force
        self.sets_constraints = bool(self._constrained)  # apply() sets more than the controls

    def set_arrays(self, torque: np.ndarray | None, q_ref: np.ndarray | None, dq_ref: np.ndarray | None) -> None:
        for target, values in ((self.torque, torque), (self.q_ref, q_ref), (self.dq_ref, dq_ref)):
            if values is not None:
                target[:] = values

    def take_over(self, old: Drives) -> None:
        """Continue where ``old`` (the same robot's drives in the model before a recompile) was."""
        self.set_modes(dict(zip(self.names, old.modes, strict=True)))
        self.set_arrays(old.torque, old.q_ref, old.dq_ref)
        self.effort[:] = old.effort

    def apply(self) -> None:
        """This step's actuator controls and hold targets (before the step)."""
        if self._torque.size:
            self._ctrl[self._torque_actuators] = self.torque[self._torque_only]
        velocity = self._velocity
        if velocity.size:
            d = self.d
            d.qpos[self.rotor_qpos[velocity]] = 0.0  # only the rotor's speed matters to the drag
            d.qvel[self.rotor_dof[velocity]] = self.dq_ref[velocity]
        hold = self._hold
        if hold.size:
            self.m.eq_data[self.equalities[hold], 0] = self.q_ref[hold] + self.dq_ref[hold] * self.dt

    def record_effort(self) -> None:
        """Each joint's applied torque (force) in the step just taken (after it, before the next)."""
        self.effort[self._torque_only] = self.torque[self._torque_only]
        if not self._constrained:
            return
        d = self.d
        kinds, ids, forces = d.efc_type[: d.nefc], d.efc_id[: d.nefc], d.efc_force[: d.nefc]
        for group, kind, elements, count in self._constrained:  # joints in hold or velocity mode
            rows = np.flatnonzero(kinds == kind)
            by_element = np.zeros(count)  # the force of each element's constraint row (0: none in this step)
            by_element[ids[rows]] = forces[rows]
            self.effort[group] = by_element[elements[group]]

    def applied(self) -> np.ndarray:
        return self.effort.copy()
