"""Drive modes of one model's joints, all through ODE's joint motor (libode 0.16 parameters).

- torque: the command is added as a joint torque (force). A joint with reflected rotor inertia
  Jm = rotorInertia * gearRatio^2 also gets an implicit motor that resists changes of its rate
  like that inertia would: target velocity = the current rate, CFM = dt / Jm (a damper of
  Jm / dt against the change over one step), unbounded force. That puts Jm in joint space, as
  OpenHRP's own engine does, without stiffening the link itself.
- high_gain: the motor drives the joint to q_ref within one step (target velocity
  (q_ref - q) / dt + dq_ref, large force limit): implicit, so stiff and stable at 1-2 ms.
- velocity: the motor's target velocity is dq_ref, its force limit the joint's torque limit.

Mimic joints are not commanded: engines/ode/mimic.py holds them on their masters each step.

A crawler joint's surface speed is its torque command in torque mode (OpenHRP's convention)
and dq_ref otherwise; the contact code reads it from :meth:`Drives.crawler_speed`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import ode

from hrpsim.conventions import initial_drive_modes
from hrpsim.engines.ode import params as odeparams
from hrpsim.engines.ode.body_table import BodyReading
from hrpsim.engines.ode.mimic import MimicJoints
from hrpsim.engines.ode.model import OdeModel, slice_if_contiguous

HIGH_GAIN_FMAX = 1e7  # N m: bounded only so that ODE's LCP stays a box problem


class Drives:
    """Commands and modes of one model's joints (controller order) and their per-step effect."""

    def __init__(self, model: OdeModel, world: ode.World, timestep: float, world_cfm: float) -> None:
        self.model = model
        self.dt = timestep
        self.cfm = world_cfm
        n = len(model.joints)
        self.torque = np.zeros(n)
        self.q_ref = np.array([model.initial_values[js.index] for js in model.joints], dtype=float)
        self.dq_ref = np.zeros(n)
        self.modes = ["torque"] * n
        self.index = {name: i for i, name in enumerate(model.joint_names)}
        self.set_modes(initial_drive_modes(model.name, model.config.drive, model.joint_names))
        self.mimics = MimicJoints(model, world, timestep)  # not commanded: they follow their masters

    # --- commands ---

    def set_modes(self, modes: dict[str, str]) -> None:
        """Modes by joint name, already checked (Engine.apply, or the project's)."""
        for name, mode in modes.items():
            i = self.index[name]
            if mode == "high_gain" and self.modes[i] != "high_gain":
                # Switching into position hold keeps the joint where it is unless told otherwise.
                self.q_ref[i] = self.model.joint_value(self.model.joints[i])
            self.modes[i] = mode
            self._configure_motor(i)
        self._regroup()

    def set_arrays(self, torque: np.ndarray | None, q_ref: np.ndarray | None, dq_ref: np.ndarray | None) -> None:
        if torque is not None:
            self.torque[:] = torque
        if q_ref is not None:
            self.q_ref[:] = q_ref
        if dq_ref is not None:
            self.dq_ref[:] = dq_ref
            for i, mode in enumerate(self.modes):
                if mode == "velocity":
                    self._configure_motor(i)

    def _configure_motor(self, i: int) -> None:
        sim = self.model.joints[i]
        if sim.kind not in ("hinge", "slider"):
            return
        joint, mode = sim.joint, self.modes[i]
        # ODE lets a motor at a joint stop push away from it with up to FudgeFactor x its force for
        # one step; the rotor's motor below holds its speed with up to 1e7 N m, which at a stop under
        # load throws the model apart. It never needs to leave a stop: no fudge for it.
        joint.setParam(odeparams.FUDGE_FACTOR, 1.0)
        if mode == "torque":
            inertia = sim.link.reflected_inertia
            if inertia > 0.0:
                joint.setParam(odeparams.FMAX, HIGH_GAIN_FMAX)
                joint.setParam(odeparams.CFM, self.dt / inertia)
                joint.setParam(odeparams.FUDGE_FACTOR, 0.0)
            else:
                joint.setParam(odeparams.FMAX, 0.0)
                joint.setParam(odeparams.CFM, self.cfm)
        elif mode == "high_gain":
            joint.setParam(odeparams.FMAX, HIGH_GAIN_FMAX)
            joint.setParam(odeparams.CFM, self.cfm)
        else:
            limit = min(abs(sim.link.torque_lower), abs(sim.link.torque_upper))
            joint.setParam(odeparams.FMAX, float(limit) if math.isfinite(limit) and limit > 0 else HIGH_GAIN_FMAX)
            joint.setParam(odeparams.CFM, self.cfm)
            joint.setParam(odeparams.VEL, float(self.dq_ref[i]))

    def _regroup(self) -> None:
        joints = self.model.joints
        self._torque_mask = np.array([mode == "torque" for mode in self.modes], dtype=bool)
        self._all_torque, self._no_torque = bool(self._torque_mask.all()), not self._torque_mask.any()
        torque_group = [
            i for i, js in enumerate(joints) if self.modes[i] == "torque" and js.kind in ("hinge", "slider")
        ]
        self._torque_columns = slice_if_contiguous(torque_group)
        self._torque_adders = [
            joints[i].joint.addTorque if joints[i].kind == "hinge" else joints[i].joint.addForce for i in torque_group
        ]
        rotors = [i for i in torque_group if joints[i].link.reflected_inertia > 0.0]
        self._rotor_columns = rotors
        self._rotor_setters = [joints[i].joint.setParam for i in rotors]
        held = [i for i, js in enumerate(joints) if self.modes[i] == "high_gain" and js.kind in ("hinge", "slider")]
        hinges = [i for i in held if joints[i].kind == "hinge"]
        self._held_columns = slice_if_contiguous(hinges)
        rows = [self.model.hinges.row[joints[i].index] for i in hinges]
        # None: every hinge row, in order (no slicing of the values per step)
        self._held_rows = None if rows == list(range(len(self.model.hinges.offsets))) else slice_if_contiguous(rows)
        # Views of the held columns' commands (set_arrays writes into the arrays in place), when a
        # slice gives them; fancy indexing would copy, so those are taken per step.
        columns = self._held_columns
        self._held_refs = (self.q_ref[columns], self.dq_ref[columns]) if isinstance(columns, slice) else None
        self._held_setters = [joints[i].joint.setParam for i in hinges]
        self._held_sliders = [(i, joints[i]) for i in held if joints[i].kind == "slider"]

    def get_state(self) -> dict[str, Any]:
        """Modes and held commands, for a snapshot."""
        return {"modes": list(self.modes), "commands": np.array([self.torque, self.q_ref, self.dq_ref])}

    def set_state(self, state: dict[str, Any]) -> None:
        """Put back :meth:`get_state`'s modes and commands (after the model's bodies: a switch into
        high gain reads the joints)."""
        self.set_modes(dict(zip(self.model.joint_names, state["modes"], strict=True)))
        self.set_arrays(*state["commands"])

    # --- every step ---

    def apply(self) -> None:
        """Hand this step's torques and motor targets to ODE (before the step)."""
        if self._torque_adders:
            for add, value in zip(self._torque_adders, self.torque[self._torque_columns].tolist(), strict=True):
                add(value)
        if self._rotor_setters:
            rates = self.model.rate_list()
            for set_param, column in zip(self._rotor_setters, self._rotor_columns, strict=True):
                set_param(odeparams.VEL, rates[column])
        inv_dt, q_ref, dq_ref = 1.0 / self.dt, self.q_ref, self.dq_ref
        if self._held_setters:
            self._hold(inv_dt)
        for i, sim in self._held_sliders:
            q = sim.joint.getPosition() + sim.offset
            sim.joint.setParam(odeparams.VEL, (q_ref[i] - q) * inv_dt + dq_ref[i])
        self.mimics.apply()

    def _hold(self, inv_dt: float) -> None:
        """The high-gain hinges' motor targets: onto q_ref within the step, plus dq_ref. In plain
        floats (the same IEEE operations as numpy's, one by one): three array operations on
        thirty numbers cost more than the loop that hands each result to ODE anyway."""
        values = self.model.hinges.values
        q = (values if self._held_rows is None else values[self._held_rows]).tolist()
        if self._held_refs is None:
            q_ref, dq_ref = self.q_ref[self._held_columns], self.dq_ref[self._held_columns]
        else:
            q_ref, dq_ref = self._held_refs
        vel = odeparams.VEL
        for set_param, value, target, rate in zip(self._held_setters, q, q_ref.tolist(), dq_ref.tolist(), strict=True):
            set_param(vel, (target - value) * inv_dt + rate)

    def crawler_speed(self, i: int) -> float:
        return float(self.torque[i] if self.modes[i] == "torque" else self.dq_ref[i])

    def applied(self, frames: BodyReading) -> np.ndarray:
        """Per joint the torque (force) applied in the last step: the command in torque mode,
        the motor's effort otherwise. ``frames``: this tick's reading of the bodies."""
        if self._all_torque:
            return self.torque.copy()
        if self._no_torque:
            return self.model.joint_efforts(frames)
        return np.where(self._torque_mask, self.torque, self.model.joint_efforts(frames))
