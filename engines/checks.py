"""Checks every engine makes on what callers hand it: vectors, rotations and per-joint arrays,
with errors that name the field (and the joint)."""

from __future__ import annotations

from typing import Any

import numpy as np

from hrpsim.errors import RequestError


def _request_field(field: str) -> str:
    """The request's own field in a label such as ``robot.link.force``."""
    return field.rsplit(".", 1)[-1]


def real_array(field: str, value: Any, want: str, *, label: str = "") -> np.ndarray:
    """``value`` as float64 when it is real numbers (not booleans, not complex, any shape);
    RequestError naming ``field`` (which wanted ``want`` numbers; ``label``: how the message
    names it, default ``field``) otherwise."""
    try:
        arr = np.asarray(value)
    except (TypeError, ValueError):  # ragged nested lists
        arr = None
    if arr is None or arr.dtype.kind not in "iuf":
        kind = "nothing" if arr is None else {"b": "booleans", "c": "complex numbers"}.get(arr.dtype.kind, repr(value))
        raise RequestError(
            f"{label or field}: expected {want} real numbers, got {kind:.80}", field=_request_field(field)
        )
    return arr.astype(np.float64)


def real_numbers(field: str, value: Any, shapes: tuple[tuple[int, ...], ...]) -> np.ndarray:
    """:func:`real_array` of one of ``shapes`` (the first is the one asked for), in that shape."""
    want = " x ".join(map(str, shapes[0]))
    arr = real_array(field, value, want)
    if arr.shape not in shapes:
        got = arr.size if arr.ndim == 1 else f"an array of shape {arr.shape}"
        raise RequestError(f"{field}: expected {want} numbers, got {got}", field=_request_field(field))
    return arr.reshape(shapes[0])


def vector(field: str, value: Any, n: int) -> np.ndarray:
    """``n`` finite numbers, or RequestError naming ``field``."""
    arr = real_numbers(field, value, ((n,),))
    if not np.all(np.isfinite(arr)):
        bad = int(np.flatnonzero(~np.isfinite(arr))[0])
        raise RequestError(f"{field}: non-finite value at index {bad}", field=_request_field(field))
    return arr


def rotation(field: str, value: Any) -> np.ndarray:
    """A proper 3x3 rotation matrix (3 x 3 or 9 numbers, row-major), or RequestError naming ``field``."""
    r = real_numbers(field, value, ((3, 3), (9,)))
    if not np.all(np.isfinite(r)):
        raise RequestError(f"{field}: non-finite value", field=_request_field(field))
    if not np.allclose(r @ r.T, np.eye(3), atol=1e-6) or np.linalg.det(r) < 0:
        raise RequestError(f"{field}: not a rotation matrix (orthonormal, determinant 1)", field=_request_field(field))
    return r


def command_array(robot: str, field: str, value: Any, names: list[str]) -> np.ndarray | None:
    """One finite number per joint (controller order), None for None; errors name the joint."""
    if value is None:
        return None
    n = len(names)
    if isinstance(value, np.ndarray) and value.dtype.kind in "iuf":  # the usual case: no message made
        arr = value.astype(np.float64)
    else:
        arr = real_array(field, value, f"{n} (one per joint)", label=f"robot {robot!r}: {field}")
    if arr.ndim != 1:
        raise RequestError(
            f"robot {robot!r}: {field} must be a flat list, got an array of shape {arr.shape}", field=field
        )
    if arr.size != n:
        raise RequestError(f"robot {robot!r}: {field} has {arr.size} values, the robot has {n} joints", field=field)
    if np.count_nonzero(np.isfinite(arr)) != n:  # (a count is cheaper than .all() on a few values)
        i = int(np.flatnonzero(~np.isfinite(arr))[0])
        raise RequestError(
            f"robot {robot!r}: {field}[{i}] (joint {names[i]!r}) is not finite: {arr[i]}", field=_request_field(field)
        )
    return arr
