"""A model's shapes as triangle meshes in their link's frame, for whatever draws them (the browser
viewer, the Foxglove scene of a recording). Cylinders, cones and capsules follow VRML and have their
axis along the shape's Y (bodyinfo.py); a plane is drawn as a thin square."""

from __future__ import annotations

import numpy as np
import trimesh

from hrpsim.bodyinfo import Shape

PLANE_HALF_SIZE = 10.0  # m: how far a plane (a half-space in the physics) is drawn
Z_TO_Y = np.array([[1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0], [0.0, -1.0, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0]])


def shape_mesh(shape: Shape) -> trimesh.Trimesh | None:
    """The shape as a mesh in its link's frame, or None for a shape with nothing to draw."""
    mesh = _primitive(shape)
    if mesh is None or len(mesh.faces) == 0:
        return None
    pose = np.eye(4)
    pose[:3, :3], pose[:3, 3] = shape.rotation, shape.translation
    mesh.apply_transform(pose)
    return mesh


def _primitive(shape: Shape) -> trimesh.Trimesh | None:
    kind = shape.kind
    if kind == "box":
        return trimesh.creation.box(extents=np.maximum(shape.size, 1e-6))
    if kind == "sphere":
        return trimesh.creation.icosphere(subdivisions=2, radius=shape.radius)
    if kind == "cylinder":
        return trimesh.creation.cylinder(radius=shape.radius, height=shape.height, sections=24).apply_transform(Z_TO_Y)
    if kind == "cone":  # VRML: base at -height/2, apex at +height/2 along Y
        cone = trimesh.creation.cone(radius=shape.radius, height=shape.height, sections=24)
        return cone.apply_translation((0.0, 0.0, -shape.height / 2)).apply_transform(Z_TO_Y)
    if kind == "capsule":
        return trimesh.creation.capsule(height=shape.height, radius=shape.radius).apply_transform(Z_TO_Y)
    if kind == "plane":
        return trimesh.creation.box(extents=(2 * PLANE_HALF_SIZE, 2 * PLANE_HALF_SIZE, 0.002)).apply_translation(
            (0.0, 0.0, -0.001)
        )
    if kind == "mesh" and len(shape.triangles):
        return trimesh.Trimesh(vertices=shape.vertices, faces=shape.triangles, process=False)
    return None


def colour(shape: Shape) -> tuple[int, int, int]:
    rgb = np.clip(np.asarray(shape.appearance.diffuse, dtype=float).reshape(3), 0.0, 1.0)
    return tuple(round(float(c) * 255) for c in rgb)  # type: ignore[return-value]
