"""BodyInfo shapes as flat-shaded triangles for a camera: positions and face normals in the link frame.

Round shapes (sphere, cylinder, cone, capsule) become ROUND_SEGMENTS facets around; a plane becomes a
square PLANE_EXTENT wide. VRML's round shapes stand along their local Y, trimesh makes them along Z,
so those are turned Z -> Y before the shape's own pose is applied.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from hrpsim.bodyinfo import Shape

if TYPE_CHECKING:
    import trimesh

PLANE_EXTENT = 1000.0  # m
ROUND_SEGMENTS = 32
_Z_TO_Y = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, -1.0, 0.0]])


def shape_triangles(shape: Shape) -> tuple[np.ndarray, np.ndarray] | None:
    """(3T, 3) vertex positions, three per triangle, and (3T, 3) face normals, in the link frame;
    None for a shape with nothing to draw."""
    made = _shape_mesh(shape)
    if made is None:
        return None
    vertices, faces = made
    rotation = np.asarray(shape.rotation, dtype=np.float64)
    corners = vertices[faces] @ rotation.T + np.asarray(shape.translation, dtype=np.float64)  # (T, 3, 3)
    normals = np.cross(corners[:, 1] - corners[:, 0], corners[:, 2] - corners[:, 0])
    length = np.linalg.norm(normals, axis=1, keepdims=True)
    keep = length[:, 0] > 0  # degenerate triangles have no face to draw
    normals = normals[keep] / length[keep]
    return corners[keep].reshape(-1, 3), np.repeat(normals, 3, axis=0)


def _shape_mesh(shape: Shape) -> tuple[np.ndarray, np.ndarray] | None:
    """(vertices, faces) in the shape frame."""
    import trimesh  # here, not at the top: most simulators have no camera and start faster without it

    kind = shape.kind
    if kind == "box":
        mesh = trimesh.creation.box(extents=shape.size)
    elif kind == "sphere":
        mesh = trimesh.creation.uv_sphere(radius=shape.radius, count=(ROUND_SEGMENTS, ROUND_SEGMENTS))
    elif kind == "cylinder":
        mesh = _stand_up(trimesh.creation.cylinder(radius=shape.radius, height=shape.height, sections=ROUND_SEGMENTS))
    elif kind == "capsule":
        count = (ROUND_SEGMENTS, ROUND_SEGMENTS)
        mesh = _stand_up(trimesh.creation.capsule(height=shape.height, radius=shape.radius, count=count))
    elif kind == "cone":
        cone = trimesh.creation.cone(radius=shape.radius, height=shape.height, sections=ROUND_SEGMENTS)
        cone.apply_translation((0.0, 0.0, -shape.height / 2))  # trimesh's base sits at z = 0, VRML's is centred
        mesh = _stand_up(cone)
    elif kind == "plane":
        half = PLANE_EXTENT / 2
        corners = np.array([[-half, -half, 0.0], [half, -half, 0.0], [half, half, 0.0], [-half, half, 0.0]])
        return corners, np.array([[0, 1, 2], [0, 2, 3]])
    elif kind == "mesh" and len(shape.vertices) and len(shape.triangles):
        return np.asarray(shape.vertices, dtype=np.float64), np.asarray(shape.triangles, dtype=np.int64)
    else:
        return None
    return np.asarray(mesh.vertices, dtype=np.float64), np.asarray(mesh.faces, dtype=np.int64)


def _stand_up(mesh: trimesh.Trimesh) -> trimesh.Trimesh:
    transform = np.eye(4)
    transform[:3, :3] = _Z_TO_Y
    return mesh.apply_transform(transform)
