"""Rotations shared by loaders, the simulator and the collision service."""

from __future__ import annotations

import math

import numpy as np


def axis_angle_matrix(axis: np.ndarray | list[float], angle: float) -> np.ndarray:
    """Rotation by ``angle`` radians about ``axis`` (Rodrigues). The axis need not be unit
    length; a zero axis is no rotation (callers that must refuse it check first)."""
    a = np.asarray(axis, dtype=np.float64)
    norm = float(np.linalg.norm(a))
    if norm < 1e-12 or angle == 0.0:
        return np.eye(3)
    x, y, z = a / norm
    c, s = math.cos(angle), math.sin(angle)
    t = 1.0 - c
    return np.array(
        [
            [t * x * x + c, t * x * y - s * z, t * x * z + s * y],
            [t * x * y + s * z, t * y * y + c, t * y * z - s * x],
            [t * x * z - s * y, t * y * z + s * x, t * z * z + c],
        ]
    )


def quaternion_matrix(q: np.ndarray | list[float]) -> np.ndarray:
    """The rotation matrix of a unit quaternion (w, x, y, z)."""
    w, x, y, z = (float(v) for v in q)
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
        ]
    )


def is_degenerate_rotation(axis: np.ndarray | list[float], angle: float) -> bool:
    """A non-zero angle about a zero axis: a rotation that cannot be meant."""
    return angle != 0.0 and float(np.linalg.norm(np.asarray(axis, dtype=np.float64))) < 1e-12


def pose(translation: np.ndarray | list[float] = (0.0, 0.0, 0.0), rotation: np.ndarray | None = None) -> np.ndarray:
    """A 4x4 homogeneous transform."""
    out = np.eye(4)
    out[:3, 3] = np.asarray(translation, dtype=np.float64)
    if rotation is not None:
        out[:3, :3] = rotation
    return out


def matrix_quaternion(r: np.ndarray) -> np.ndarray:
    """A rotation matrix as a unit quaternion (w x y z), the inverse of :func:`quaternion_matrix`."""
    w = np.sqrt(max(0.0, 1.0 + r[0, 0] + r[1, 1] + r[2, 2])) / 2.0
    x = np.copysign(np.sqrt(max(0.0, 1.0 + r[0, 0] - r[1, 1] - r[2, 2])) / 2.0, r[2, 1] - r[1, 2])
    y = np.copysign(np.sqrt(max(0.0, 1.0 - r[0, 0] + r[1, 1] - r[2, 2])) / 2.0, r[0, 2] - r[2, 0])
    z = np.copysign(np.sqrt(max(0.0, 1.0 - r[0, 0] - r[1, 1] + r[2, 2])) / 2.0, r[1, 0] - r[0, 1])
    return np.array([w, x, y, z])
