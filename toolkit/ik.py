"""Damped least-squares inverse kinematics over a RobotModel.

Targets are world-frame positions (m) of a point fixed in a link (its frame origin by default)
and/or world orientations (3 x 3) of the link's frame. Each iteration solves
``dq = J^T (J J^T + damping^2 I)^-1 e`` for the stacked errors ``e`` (position in m, orientation
as a rotation vector in rad, world axes) and clamps the joints to their limits. The root stays
where it is; only the chosen joints (default: every joint the controller drives) move. A solve
that does not converge returns the iterate whose stacked error has the least norm (the start
included), so never a configuration farther from the targets than where it started.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
import pinocchio as pin

from hrpsim.errors import RequestError

if TYPE_CHECKING:
    from hrpsim.toolkit.model import RobotModel


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
    ``converged``: every target within the tolerances. Errors are those of ``q``, the largest over
    the targets."""

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
    result says ``converged=False`` and holds the nearest configuration found (the iterate with the
    least error, the start included), with its errors. A target or ``q`` that is not finite is a
    RequestError naming it."""
    opts = options or IKOptions()
    if not targets:
        raise RequestError("solve_ik: give at least one Target")
    goals = [_checked(index, target) for index, target in enumerate(targets)]
    pm = model.pin_model
    data = model.ik_data
    config = model.q.copy()
    if q is not None:
        config[model.joint_q_index] = _finite_vector("q", q, len(model.joint_names))
    chosen = _chosen(model, joints)
    q_index, v_index = model.joint_q_index[chosen], model.joint_v_index[chosen]
    lower, upper = pm.lowerPositionLimit[q_index], pm.upperPositionLimit[q_index]
    frames = [model.frame_id(t.link) for t in targets]
    best: tuple[float, np.ndarray, float, float] | None = None  # (error, joints, position, rotation errors)
    iteration = 0
    while True:
        pin.computeJointJacobians(pm, data, config)
        error, rows, position_error, rotation_error = _errors(pm, data, goals, frames)
        size = float(np.linalg.norm(error))
        if best is None or size < best[0]:
            best = (size, config[model.joint_q_index].copy(), position_error, rotation_error)
        if position_error <= opts.tolerance and rotation_error <= opts.rotation_tolerance:
            return IKResult(config[model.joint_q_index].copy(), True, iteration, position_error, rotation_error)
        if iteration >= opts.max_iterations:
            break
        jacobian = np.vstack(rows)[:, v_index]
        step = jacobian.T @ np.linalg.solve(jacobian @ jacobian.T + opts.damping**2 * np.eye(len(error)), error)
        step *= min(1.0, opts.max_step / max(float(np.max(np.abs(step))), 1e-300))
        moved = np.clip(config[q_index] + step, lower, upper)
        if np.max(np.abs(moved - config[q_index])) < 1e-15:
            break  # stuck against limits or at the nearest point: unreachable
        config[q_index] = moved
        iteration += 1
    return IKResult(best[1], False, iteration, best[2], best[3])


class _Goal(NamedTuple):
    """A checked Target: finite arrays, None where it asks nothing."""

    position: np.ndarray | None
    rotation: np.ndarray | None
    point: np.ndarray


def _checked(index: int, target: Target) -> _Goal:
    where = f"targets[{index}] ({target.link})"
    position = None if target.position is None else _finite_vector(f"{where}.position", target.position, 3)
    rotation = None if target.rotation is None else _finite_matrix(f"{where}.rotation", target.rotation)
    if position is None and rotation is None:
        raise RequestError(f"solve_ik: {where}: a Target needs a position, a rotation or both")
    return _Goal(position, rotation, _finite_vector(f"{where}.point", target.point, 3))


def _finite_vector(name: str, values: Any, length: int) -> np.ndarray:
    array = np.asarray(values, float)
    if array.shape != (length,):
        raise RequestError(f"solve_ik: {name} has shape {array.shape}, expected ({length},)")
    if not np.all(np.isfinite(array)):
        raise RequestError(f"solve_ik: {name} is {array.tolist()}: every value must be finite")
    return array


def _finite_matrix(name: str, values: Any) -> np.ndarray:
    array = np.asarray(values, float)
    if array.shape != (3, 3):
        raise RequestError(f"solve_ik: {name} has shape {array.shape}, expected (3, 3) (a rotation matrix)")
    if not np.all(np.isfinite(array)):
        raise RequestError(f"solve_ik: {name} is {array.tolist()}: every value must be finite")
    return array


def _chosen(model: RobotModel, joints: list[str] | None) -> np.ndarray:
    if joints is None:
        return np.arange(len(model.joint_names))
    index = {n: i for i, n in enumerate(model.joint_names)}
    unknown = [n for n in joints if n not in index]
    if unknown:
        raise RequestError(f"solve_ik: no joint named {', '.join(unknown)}; joints: {', '.join(model.joint_names)}")
    return np.array([index[n] for n in joints], dtype=int)


def _errors(
    pm: pin.Model, data: pin.Data, goals: list[_Goal], frames: list[int]
) -> tuple[np.ndarray, list[np.ndarray], float, float]:
    errors, rows, worst_position, worst_rotation = [], [], 0.0, 0.0
    for goal, frame in zip(goals, frames, strict=True):
        placement = pin.updateFramePlacement(pm, data, frame)
        jacobian = pin.getFrameJacobian(pm, data, frame, pin.ReferenceFrame.LOCAL_WORLD_ALIGNED)
        if goal.position is not None:
            offset = placement.rotation @ goal.point
            error = goal.position - (placement.translation + offset)
            errors.append(error)
            rows.append(jacobian[:3] - pin.skew(offset) @ jacobian[3:])
            worst_position = max(worst_position, float(np.linalg.norm(error)))
        if goal.rotation is not None:
            error = pin.log3(goal.rotation @ placement.rotation.T)
            errors.append(error)
            rows.append(jacobian[3:])
            worst_rotation = max(worst_rotation, float(np.linalg.norm(error)))
    return np.concatenate(errors), rows, worst_position, worst_rotation
