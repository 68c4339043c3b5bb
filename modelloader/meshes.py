"""Mesh files (STL, OBJ, PLY, OFF, glTF ... through trimesh; COLLADA .dae through our own COLLADA
geometry reader) turned into plain vertex and triangle arrays.

trimesh gets the file's bytes, read by hrpsim.files' rules, and a resolver that reads the files
a mesh names (an OBJ's materials, a glTF's buffers) by the same rules: it opens nothing itself."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np

from hrpsim.files import check_readable, read_regular


class MeshError(ValueError):
    """A mesh file that exists but cannot be read; the message says why."""


def load_mesh(path: Path, scale: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Vertices (N, 3) float64, scaled per axis, and triangles (M, 3) int32 of the file's mesh
    (all its parts merged, in the file's own frame)."""
    check_readable(path, "mesh file")
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

    data = read_regular(path, "mesh file")
    try:
        loaded = trimesh.load(
            io.BytesIO(data),
            file_type=path.suffix.lower().lstrip("."),
            resolver=_checked_files(path.parent),
            process=False,
        )
        parts = _parts(loaded)
    except Exception as exc:  # trimesh raises many unrelated types for unreadable files
        raise MeshError(f"{path}: cannot read mesh: {exc}") from None
    vertices, faces, count = [], [], 0
    for points, triangles in parts:
        vertices.append(points)
        faces.append(triangles + count)
        count += len(points)
    if count == 0 or sum(len(f) for f in faces) == 0:
        raise MeshError(f"{path}: mesh file holds no triangles")
    return np.concatenate(vertices), np.concatenate(faces).astype(np.int32)


def _checked_files(folder: Path):  # -> trimesh.resolvers.Resolver
    """A trimesh resolver that reads what a mesh file names beside it by hrpsim.files' rules."""
    from trimesh.resolvers import Resolver

    class CheckedFiles(Resolver):
        def __init__(self, base: Path) -> None:
            self.base = base

        def get(self, key: str) -> bytes:
            return read_regular(self.base / key, "file a mesh names")

        def write(self, name: str, data: object) -> None:
            raise PermissionError(f"{name}: a mesh is read, never written")

        def namespaced(self, namespace: str) -> Resolver:
            return CheckedFiles(self.base / namespace)

        def keys(self) -> list[str]:
            return []  # what a folder holds is nobody's business

    return CheckedFiles(folder)


def _parts(loaded) -> list[tuple[np.ndarray, np.ndarray]]:
    """(vertices, faces) of each placed geometry. Only geometry is read: merging through
    trimesh would copy materials too, and textures need image libraries we do not use."""
    if hasattr(loaded, "graph"):
        parts = []
        for node in loaded.graph.nodes_geometry:
            matrix, name = loaded.graph[node]
            geometry = loaded.geometry[name]
            if not hasattr(geometry, "faces"):
                continue
            points = np.asarray(geometry.vertices, dtype=np.float64) @ matrix[:3, :3].T + matrix[:3, 3]
            parts.append((points, np.asarray(geometry.faces, dtype=np.int64).reshape(-1, 3)))
        return parts
    if not hasattr(loaded, "faces"):
        return []
    return [(np.asarray(loaded.vertices, dtype=np.float64), np.asarray(loaded.faces, dtype=np.int64).reshape(-1, 3))]


def _load_dae(path: Path) -> tuple[np.ndarray, np.ndarray]:
    from hrpsim.modelloader.collada_geometry import read_dae_mesh

    return read_dae_mesh(path)
