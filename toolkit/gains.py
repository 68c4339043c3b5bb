"""PD gains that suit the robot: stable and well damped at the controller's period, from its model.

A joint's effective inertia is what a torque on it moves when every other joint (and a free root) is
left free: I_j = 1 / (M^-1)_jj, from the mass matrix with the rotor inertias (gearRatio^2 x
rotorInertia) on its diagonal. Held for h seconds, an explicit PD acts on it per step through
a = h D / I and b = h^2 P / I (hrpsim.pd_stability: stable for a < 2, b < 4 - 2a). Every joint gets the
same a and b, so every joint responds alike per step whatever its inertia: P_j = b I_j / h^2,
D_j = a I_j / h. The joints are coupled through M: the law's modes see a and b scaled by the eigenvalues
l of S^1/2 W S^1/2 (W: the joints' block of M^-1, S = diag(I)), 1 <= l_max <= n. a = 1 / l_max and
b = 0.5 / l_max put the stiffest mode's poles at 0 and 0.5 (its rate error gone in a step, its position
error halving each step; P at a quarter of its bound); a slower mode l has a damping ratio of
sqrt(l / (2 l_max)), as any law with one gain per joint damps the heavy, slow modes less.

The inertias are the free ones even for a robot standing: a foot can tip onto its edge, and a law
tuned to the whole body above the ankle explodes the foot that lifts. A robot without rotor inertia
is therefore soft at a 2 ms period (GR001's joints move 1e-5 to 1e-3 kg m^2): a shorter step, or
the file's rotor inertias, make it stiffer.
"""

from __future__ import annotations

import numpy as np

from hrpsim.pd_stability import step_gains

# Imported here, not on first use: a controller module that imports this one loads Pinocchio before it
# attaches, so its first tick does not wait for the import (a third of a second on a busy machine).
try:
    from hrpsim.toolkit.model import RobotModel
except ImportError as exc:
    raise ImportError(
        f"PD gains from the robot's model need its toolkit (pip install 'hrpsim[toolkit]'): {exc}"
    ) from exc

DAMPING_STEP = 1.0  # a of the stiffest mode: half the damping bound, its rate error gone in a step
STIFFNESS_STEP = 0.5  # b of the stiffest mode: its position error halves each step (a quarter of the bound)


def joint_inertias(model: RobotModel) -> tuple[np.ndarray, float]:
    """Each joint's effective inertia (kg m^2, or kg for a slide joint; controller order) at the model's
    configuration, and the coupling factor l_max >= 1 of its joint-space modes."""
    joints = model.joint_torques(np.arange(model.nv))
    if not len(joints):  # a body without joints (a free box): nothing to hold
        return np.zeros(0), 1.0
    free = np.linalg.inv(model.mass_matrix())[np.ix_(joints, joints)]
    inertias = 1.0 / np.diag(free)
    scale = np.sqrt(inertias)
    coupling = float(np.linalg.eigvalsh(scale[:, None] * free * scale[None, :]).max())
    return inertias, max(coupling, 1.0)


def hold_gains(model: RobotModel, period: float) -> tuple[np.ndarray, np.ndarray]:
    """(P, D) per joint, controller order: stable and well damped with torques held ``period`` s."""
    if not period > 0:
        raise ValueError(f"the controller's period must be positive to choose gains, got {period!r}")
    inertias, coupling = joint_inertias(model)
    return step_gains(inertias, period, DAMPING_STEP / coupling, STIFFNESS_STEP / coupling)
