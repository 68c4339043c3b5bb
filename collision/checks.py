"""Checks on what arrives over the wire, before any of it reaches ODE or fcl.

Both libraries are C code that can abort or crash the process on a NaN pose, a negative size or a
triangle index past the vertex list, so every number is checked here first and each problem is
reported with the field (or the body, link and shape) it came from.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from hrpsim.bodyinfo import Body
from hrpsim.errors import ModelError, RequestError
from hrpsim.shape_checks import shape_problems


def number(field: str, value: Any, *, positive: bool = False, minimum: float | None = None) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float | np.floating | np.integer):
        raise RequestError(f"{field} must be a number, got {value!r}")
    value = float(value)
    if not math.isfinite(value):
        raise RequestError(f"{field} must be finite, got {value!r}")
    if positive and value <= 0:
        raise RequestError(f"{field} must be positive, got {value!r}")
    if minimum is not None and value < minimum:
        raise RequestError(f"{field} must be >= {minimum:g}, got {value!r}")
    return value


def array(field: str, value: Any, shape: tuple[int, ...]) -> np.ndarray:
    """A finite float array of exactly ``shape``."""
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise RequestError(f"{field} must be an array of numbers of shape {shape}, got {value!r}") from None
    if arr.shape != shape:
        raise RequestError(f"{field} must have shape {shape}, got {arr.shape}")
    if not np.isfinite(arr).all():
        raise RequestError(f"{field} has non-finite values: {arr.tolist()}")
    return arr


def unit_vector(field: str, value: Any) -> np.ndarray:
    vec = array(field, value, (3,))
    norm = float(np.linalg.norm(vec))
    if norm < 1e-12:
        raise RequestError(f"{field} must be a non-zero vector, got {vec.tolist()}")
    return vec / norm


def rigid_pose(field: str, value: Any) -> np.ndarray:
    """A 4x4 transform whose rotation part is a rotation (to 1e-6)."""
    pose = array(field, value, (4, 4))
    rot = pose[:3, :3]
    if not np.allclose(rot @ rot.T, np.eye(3), atol=1e-6) or np.linalg.det(rot) < 0:
        raise RequestError(f"{field}: the upper-left 3x3 block is not a rotation matrix")
    return pose


def names(field: str, value: Any) -> list[str] | None:
    if value is None:
        return None
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
        raise RequestError(f"{field} must be a list of body names, got {value!r}")
    return list(value)


def check_body(body: Body) -> None:
    """Raise ModelError listing every link or shape that ODE or fcl could not take."""
    problems: list[str] = []
    if not body.links:
        problems.append(f"body {body.name!r} has no links")
    for i, link in enumerate(body.links):
        where = f"body {body.name!r} link {link.name!r}"
        if not -1 <= link.parent < i:
            problems.append(f"{where}: parent index {link.parent} does not come before the link")
        pose = np.concatenate([np.ravel(link.translation), np.ravel(link.rotation), np.ravel(link.joint_axis)])
        if pose.shape != (15,) or not np.isfinite(pose).all():
            problems.append(f"{where}: translation, rotation or joint axis is malformed or non-finite")
        for k, shape in enumerate(link.shapes):
            problems.extend(f"{where} shape {k} ({shape.kind}): {p}" for p in shape_problems(shape))
    if problems:
        head = f"body {body.name!r} cannot be used for collision queries"
        raise ModelError(f"{head}: {problems[0]}" if len(problems) == 1 else head, problems)
