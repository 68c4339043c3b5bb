"""Damped least-squares inverse kinematics over a RobotModel.

Targets are world-frame positions (m) of a point fixed in a link (its frame origin by default)
and/or world orientations (3 x 3) of the link's frame. Each iteration solves
``dq = J^T (J J^T + damping^2 I)^-1 e`` for the stacked errors ``e`` (position in m, orientation
as a rotation vector in rad, world axes) and clamps the joints to their limits. The root stays
where it is; only the chosen joints (default: every joint the controller drives) move.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pinocchio as pin

from hrpsim.errors import RequestError

if TYPE_CHECKING:
    from hrpsim.controllers.model import RobotModel


@dataclass
class Target:
    """Where a link should be: ``position`` of ``point`` (in the link frame) and/or ``rotation``."""

    link: str
    position: Any = None  # (3,) m, world
    rotation: Any = None  # (3, 3), world
    point: Any = (0.0, 0.0, 0.0)  # m, link frame


@dataclass
class IKResult:
    """``q``: every joint in controller order (the ones IK did not move keep their values).
    ``converged``: every target within the tolerances. Errors are the largest left over."""

    q: np.ndarray
    converged: bool
    iterations: int
    position_error: float  # m
    rotation_error: float  # rad


@dataclass
class IKOptions:
    tolerance: float = 1e-7  # m
    rotation_tolerance: float = 1e-7  # rad
    max_iterations: int = 200
    damping: float = 1e-3
    max_step: float = 0.2  # rad (or m) per joint per iteration: keeps far targets on a straight path


def solve_ik(
    model: RobotModel,
    targets: list[Target],
    *,
    q: Any = None,
    joints: list[str] | None = None,
    options: IKOptions | None = None,
) -> IKResult:
    """Joint values that put each target's link where it asks, starting from ``q`` (controller order;
    default: the model's current configuration). Never raises for an unreachable target: the
    result says ``converged=False`` and holds the nearest configuration found."""
    opts = options or IKOptions()
    if not targets:
        raise RequestError("solve_ik: give at least one Target")
    pm = model.pin_model
    data = model.ik_data
    config = model.q.copy()
    if q is not None:
        config[model.joint_q_index] = np.asarray(q, float)
    chosen = _chosen(model, joints)
    q_index, v_index = model.joint_q_index[chosen], model.joint_v_index[chosen]
    lower, upper = pm.lowerPositionLimit[q_index], pm.upperPositionLimit[q_index]
    frames = [model.frame_id(t.link) for t in targets]
    iteration, position_error, rotation_error = 0, np.inf, np.inf
    while True:
        pin.computeJointJacobians(pm, data, config)
        pin.updateFramePlacements(pm, data)
        error, rows, position_error, rotation_error = _errors(pm, data, targets, frames)
        done = position_error <= opts.tolerance and rotation_error <= opts.rotation_tolerance
        if done or iteration >= opts.max_iterations:
            break
        jacobian = np.vstack(rows)[:, v_index]
        step = jacobian.T @ np.linalg.solve(jacobian @ jacobian.T + opts.damping**2 * np.eye(len(error)), error)
        step *= min(1.0, opts.max_step / max(float(np.max(np.abs(step))), 1e-300))
        moved = np.clip(config[q_index] + step, lower, upper)
        if np.max(np.abs(moved - config[q_index])) < 1e-15:
            break  # stuck against limits or at the nearest point: unreachable
        config[q_index] = moved
        iteration += 1
    return IKResult(config[model.joint_q_index].copy(), bool(done), iteration, position_error, rotation_error)


def _chosen(model: RobotModel, joints: list[str] | None) -> np.ndarray:
    if joints is None:
        return np.arange(len(model.joint_names))
    index = {n: i for i, n in enumerate(model.joint_names)}
    unknown = [n for n in joints if n not in index]
    if unknown:
        raise RequestError(f"solve_ik: no joint named {', '.join(unknown)}; joints: {', '.join(model.joint_names)}")
    return np.array([index[n] for n in joints], dtype=int)


def _errors(
    pm: pin.Model, data: pin.Data, targets: list[Target], frames: list[int]
) -> tuple[np.ndarray, list[np.ndarray], float, float]:
    errors, rows, worst_position, worst_rotation = [], [], 0.0, 0.0
    for target, frame in zip(targets, frames, strict=True):
        placement = data.oMf[frame]
        jacobian = pin.getFrameJacobian(pm, data, frame, pin.ReferenceFrame.LOCAL_WORLD_ALIGNED)
        if target.position is not None:
            offset = placement.rotation @ np.asarray(target.point, float)
            error = np.asarray(target.position, float) - (placement.translation + offset)
            errors.append(error)
            rows.append(jacobian[:3] - pin.skew(offset) @ jacobian[3:])
            worst_position = max(worst_position, float(np.linalg.norm(error)))
        if target.rotation is not None:
            error = pin.log3(np.asarray(target.rotation, float) @ placement.rotation.T)
            errors.append(error)
            rows.append(jacobian[3:])
            worst_rotation = max(worst_rotation, float(np.linalg.norm(error)))
    if not errors:
        raise RequestError("solve_ik: a Target needs a position, a rotation or both")
    return np.concatenate(errors), rows, worst_position, worst_rotation
