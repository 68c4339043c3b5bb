"""Mesh files (STL, OBJ, PLY, OFF, glTF ... through trimesh; COLLADA .dae through our own COLLADA
geometry reader) turned into plain vertex and triangle arrays."""

from __future__ import annotations

from pathlib import Path

import numpy as np


class MeshError(ValueError):
    """A mesh file that exists but cannot be read; the message says why."""


def load_mesh(path: Path, scale: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Vertices (N, 3) float64, scaled per axis, and triangles (M, 3) int32 of the file's mesh
    (all its parts merged, in the file's own frame)."""
    if path.suffix.lower() == ".dae":
        vertices, triangles = _load_dae(path)
    else:
        vertices, triangles = _load_with_trimesh(path)
    if scale is not None:
        vertices = vertices * np.asarray(scale, dtype=np.float64).reshape(1, 3)
    if not np.all(np.isfinite(vertices)):
        raise MeshError(f"{path}: mesh has non-finite vertex coordinates")
    return vertices, triangles


def _load_with_trimesh(path: Path) -> tuple[np.ndarray, np.ndarray]:
    import trimesh  # imported here: it is slow to import and only mesh files need it

    try:
        mesh = trimesh.load(str(path), force="mesh", process=False)
    except Exception as exc:  # trimesh raises many unrelated types for unreadable files
        raise MeshError(f"{path}: cannot read mesh: {exc}") from None
    vertices = np.asarray(getattr(mesh, "vertices", np.zeros((0, 3))), dtype=np.float64).reshape(-1, 3)
    faces = np.asarray(getattr(mesh, "faces", np.zeros((0, 3))), dtype=np.int32).reshape(-1, 3)
    if vertices.size == 0 or faces.size == 0:
        raise MeshError(f"{path}: mesh file holds no triangles")
    return vertices, faces


def _load_dae(path: Path) -> tuple[np.ndarray, np.ndarray]:
    from modelloader.collada_geometry import read_dae_mesh

    return read_dae_mesh(path)
