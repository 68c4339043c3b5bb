"""A native MJCF model's ball joints as BodyInfo's three hinges (modelloader/mjcf.py reads a
ball as ``NAME_x``, ``NAME_y``, ``NAME_z``: turns about the body's X, then the turned Y, then the
twice-turned Z). MuJoCo keeps the ball (a quaternion, no gimbal lock); the controller's arrays
hold the three angles, their rates and torques:

- angles: the ball's rotation R = Rx(a) Ry(b) Rz(c);
- rates: MuJoCo's angular velocity (in the body's frame) w = J (da, db, dc), solved for the rates;
- torques: the hinges' torques t do the work the ball's torque T (body frame) does, t = J^T T,
  so T = J^-T t, put on three motors about the body's axes.

At b = +-90 degrees the three hinges lose one turn (J is singular): rates and torques there are
least-squares. A ball joint takes torque commands only (no hold or velocity drive for a ball).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import mujoco
import numpy as np

from hrpsim.transforms import axis_angle_matrix

AXES = np.eye(3)


def ball_angles(quat: np.ndarray) -> np.ndarray:
    """(a, b, c) with the ball's rotation Rx(a) Ry(b) Rz(c)."""
    r = np.empty(9)
    mujoco.mju_quat2Mat(r, quat)
    r = r.reshape(3, 3)
    return np.array(
        [math.atan2(-r[1, 2], r[2, 2]), math.asin(max(-1.0, min(1.0, r[0, 2]))), math.atan2(-r[0, 1], r[0, 0])]
    )


def ball_quaternion(angles: np.ndarray) -> np.ndarray:
    rotation = np.eye(3)
    for axis, angle in zip(AXES, angles, strict=True):
        rotation = rotation @ axis_angle_matrix(axis, float(angle))
    quat = np.empty(4)
    mujoco.mju_mat2Quat(quat, rotation.ravel())
    return quat


def rate_matrix(angles: np.ndarray) -> np.ndarray:
    """J: the body-frame angular velocity of unit rates of the three hinges (columns)."""
    _, b, c = angles
    return np.array(
        [
            [math.cos(b) * math.cos(c), math.sin(c), 0.0],
            [-math.cos(b) * math.sin(c), math.cos(c), 0.0],
            [math.sin(b), 0.0, 1.0],
        ]
    )


@dataclass
class _Ball:
    qpos: int  # the quaternion's address
    dof: int  # the first of its three dofs
    columns: np.ndarray  # the three hinges' places in the controller's arrays (-1: no jointId)
    links: list[int]
    motors: np.ndarray  # the three motors about the body's axes


class Balls:
    """One model's ball joints."""

    def __init__(
        self, model: mujoco.MjModel, balls: list[tuple[str, list[int]]], column_of_link: dict[int, int]
    ) -> None:
        self.items = []
        for name, links in balls:
            joint = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, name)
            motors = np.array(
                [mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_ACTUATOR, f"{name}/drive{k}") for k in range(3)]
            )
            columns = np.array([column_of_link.get(i, -1) for i in links])
            self.items.append(
                _Ball(int(model.jnt_qposadr[joint]), int(model.jnt_dofadr[joint]), columns, links, motors)
            )

    def __bool__(self) -> bool:
        return bool(self.items)

    def read(self, qpos: np.ndarray, qvel: np.ndarray, q: np.ndarray, dq: np.ndarray) -> None:
        """Write each ball's angles and rates into controller-order arrays."""
        for ball in self.items:
            angles = ball_angles(qpos[ball.qpos : ball.qpos + 4])
            rates = np.linalg.lstsq(rate_matrix(angles), qvel[ball.dof : ball.dof + 3], rcond=None)[0]
            seen = ball.columns >= 0
            q[ball.columns[seen]], dq[ball.columns[seen]] = angles[seen], rates[seen]

    def link_values(self, qpos: np.ndarray, qvel: np.ndarray, values: np.ndarray, rates: np.ndarray) -> None:
        """The same, into link-order arrays."""
        for ball in self.items:
            angles = ball_angles(qpos[ball.qpos : ball.qpos + 4])
            values[ball.links] = angles
            rates[ball.links] = np.linalg.lstsq(rate_matrix(angles), qvel[ball.dof : ball.dof + 3], rcond=None)[0]

    def place(self, qpos: np.ndarray, qvel: np.ndarray, values: np.ndarray | None, rates: np.ndarray | None) -> None:
        """Put the balls at link-order angles (and rates)."""
        for ball in self.items:
            angles = ball_angles(qpos[ball.qpos : ball.qpos + 4]) if values is None else values[ball.links]
            if values is not None:
                qpos[ball.qpos : ball.qpos + 4] = ball_quaternion(angles)
            if rates is not None:
                qvel[ball.dof : ball.dof + 3] = rate_matrix(angles) @ rates[ball.links]

    def drive(self, qpos: np.ndarray, ctrl: np.ndarray, torque: np.ndarray, effort: np.ndarray) -> None:
        """The three motors of each ball from the hinges' torques (controller order)."""
        for ball in self.items:
            hinge = np.where(ball.columns >= 0, torque[np.maximum(ball.columns, 0)], 0.0)
            jacobian = rate_matrix(ball_angles(qpos[ball.qpos : ball.qpos + 4]))
            ctrl[ball.motors] = np.linalg.lstsq(jacobian.T, hinge, rcond=None)[0]
            seen = ball.columns >= 0
            effort[ball.columns[seen]] = hinge[seen]

    def refused_mode(self, names: list[str], modes: dict[str, str]) -> str:
        """Why these modes cannot be (a ball's hinges take torque commands only), or ""."""
        for ball in self.items:
            for column in ball.columns[ball.columns >= 0]:
                mode = modes.get(names[column], "torque")
                if mode != "torque":
                    return (
                        f"joint {names[column]!r} is one axis of a MuJoCo ball joint, which the mujoco engine "
                        f"drives by torque only (not {mode}): drive it by torque, or run on world.engine: ode"
                    )
        return ""


def add_ball_motors(spec: mujoco.MjSpec, balls: list[tuple[str, list[int]]]) -> None:
    """Three plain motors on each ball, about its body's X, Y and Z."""
    for name, _links in balls:
        for k in range(3):
            spec.add_actuator(
                name=f"{name}/drive{k}",
                trntype=mujoco.mjtTrn.mjTRN_JOINT,
                target=name,
                gear=[*AXES[k], 0.0, 0.0, 0.0],
                gainprm=[1.0] + [0.0] * 9,
                ctrllimited=mujoco.mjtLimited.mjLIMITED_FALSE,
                forcelimited=mujoco.mjtLimited.mjLIMITED_FALSE,
            )
