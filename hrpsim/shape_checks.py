"""Checks of a shape's numbers before any C library sees it.

ODE aborts the process on a round shape without radius, a NaN pose or an offset past its hash
space's reach, and fcl and MuJoCo fail on some of the same; so every shape that reaches the
simulator or the collision service is checked here first (without importing any of them), and
each problem is named.
"""

from __future__ import annotations

import numpy as np

from hrpsim.bodyinfo import SHAPE_KINDS, Shape

MAX_EXTENT = 1e6  # m: sizes and offsets past this make ODE's hash space fail an assertion (abort)


def shape_problems(shape: Shape) -> list[str]:
    """What about ``shape`` would make ODE fail or abort the process; [] when it is safe."""
    if shape.kind not in SHAPE_KINDS:
        return [f"unknown kind (known: {', '.join(SHAPE_KINDS)})"]
    try:
        pose = np.concatenate([np.ravel(shape.translation), np.ravel(shape.rotation)]).astype(np.float64)
        dims = np.array([shape.radius, shape.height, *np.ravel(shape.size)], dtype=np.float64)
    except (TypeError, ValueError):
        return ["pose or size is not numeric"]
    if pose.shape != (12,) or dims.shape != (5,):
        return ["translation must have 3 values, rotation 3x3, size 3"]
    if not (np.isfinite(pose).all() and np.isfinite(dims).all()):
        return ["non-finite size or pose"]
    if (dims < 0).any():
        return ["negative size"]
    if max(np.abs(pose).max(), dims.max()) >= MAX_EXTENT:
        return [f"reaches beyond {MAX_EXTENT:g} m, where ODE's collision space fails"]
    # ODE aborts the process on round shapes without radius or (cylinders) height; boxes it can take
    if shape.kind in ("sphere", "cylinder", "cone", "capsule") and shape.radius <= 0:
        return ["radius must be positive"]
    if shape.kind in ("cylinder", "cone") and shape.height <= 0:
        return ["height must be positive"]
    if shape.kind == "mesh":
        return _mesh_problems(shape)
    return []


def _mesh_problems(shape: Shape) -> list[str]:
    vertices = np.asarray(shape.vertices)
    triangles = np.asarray(shape.triangles)
    if vertices.size == 0 or triangles.size == 0:
        return ["mesh has no vertices or no triangles"]
    if vertices.ndim != 2 or vertices.shape[1] != 3:
        return [f"vertices must have shape (N, 3), got {vertices.shape}"]
    if triangles.ndim != 2 or triangles.shape[1] != 3:
        return [f"triangles must have shape (M, 3), got {triangles.shape}"]
    if not np.isfinite(vertices.astype(np.float64)).all():
        return ["non-finite vertices"]
    if np.abs(vertices).max() >= MAX_EXTENT:
        return [f"reaches beyond {MAX_EXTENT:g} m, where ODE's collision space fails"]
    if triangles.min() < 0 or triangles.max() >= len(vertices):
        return [f"triangle indices must lie in 0..{len(vertices) - 1}"]
    return []
