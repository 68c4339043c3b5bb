"""Checks every engine makes on what callers hand it: vectors, rotations and per-joint arrays,
with errors that name the field (and the joint)."""

from __future__ import annotations

from typing import Any

import numpy as np

from hrpsim.errors import RequestError


def vector(field: str, value: Any, n: int) -> np.ndarray:
    """``n`` finite numbers, or RequestError naming ``field``."""
    try:
        arr = np.asarray(value, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError):
        raise RequestError(f"{field}: expected {n} numbers, got {value!r}") from None
    if arr.shape != (n,):
        raise RequestError(f"{field}: expected {n} numbers, got {arr.size}")
    if not np.all(np.isfinite(arr)):
        raise RequestError(f"{field}: non-finite value at index {int(np.flatnonzero(~np.isfinite(arr))[0])}")
    return arr


def rotation(field: str, value: Any) -> np.ndarray:
    """A proper 3x3 rotation matrix (9 numbers, row-major), or RequestError naming ``field``."""
    r = vector(field, value, 9).reshape(3, 3)
    if not np.allclose(r @ r.T, np.eye(3), atol=1e-6) or np.linalg.det(r) < 0:
        raise RequestError(f"{field}: not a rotation matrix")
    return r


def command_array(robot: str, field: str, value: Any, names: list[str]) -> np.ndarray | None:
    """One finite number per joint (controller order), None for None; errors name the joint."""
    if value is None:
        return None
    n = len(names)
    try:
        arr = np.asarray(value, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError):
        raise RequestError(f"robot {robot!r}: {field} must be {n} numbers, got {type(value).__name__}") from None
    if arr.shape != (n,):
        raise RequestError(f"robot {robot!r}: {field} has {arr.size} values, the robot has {n} joints")
    bad = np.flatnonzero(~np.isfinite(arr))
    if bad.size:
        i = int(bad[0])
        raise RequestError(f"robot {robot!r}: {field}[{i}] (joint {names[i]!r}) is not finite: {arr[i]}")
    return arr
