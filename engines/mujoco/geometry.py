"""BodyInfo shapes -> MuJoCo geoms, posed in their link's frame.

VRML puts a cylinder's, cone's or capsule's axis along the shape's local Y, MuJoCo along local Z:
those shapes are turned by -90 degrees about X. A cone becomes a cylinder of the same radius and
height (as on ODE). A plane (normal +Z) is MuJoCo's plane, which only a static body may carry. A
mesh is a MuJoCo mesh, which collides as its convex hull (MuJoCo's rule; a mesh that is not
convex is named in a warning); its mass properties come from the link, never from the geometry.
"""

from __future__ import annotations

import logging

import mujoco
import numpy as np

from hrpsim.bodyinfo import Shape
from hrpsim.conventions import Z_TO_Y
from hrpsim.errors import ConfigError

log = logging.getLogger("hrpsim.simserver")

MIN_SIZE = 1e-6  # m: MuJoCo refuses geoms of zero size


def quaternion(rotation: np.ndarray) -> np.ndarray:
    """A rotation matrix as MuJoCo's quaternion (w x y z)."""
    quat = np.empty(4)
    mujoco.mju_mat2Quat(quat, np.ascontiguousarray(rotation, dtype=np.float64).reshape(9))
    return quat


def add_shape(
    spec: mujoco.MjSpec,
    body: mujoco.MjsBody,
    shape: Shape,
    name: str,
    *,
    static: bool,
    frame: tuple[np.ndarray, np.ndarray] | None = None,
    where: str,
) -> mujoco.MjsGeom | None:
    """One geom for ``shape`` on ``body``; ``frame`` is an extra pose in front of the shape's own
    (a static model's link pose). None for shapes with nothing to collide (an empty mesh)."""
    p, r = np.asarray(shape.translation, float), np.asarray(shape.rotation, float)
    if frame is not None:
        p, r = frame[0] + frame[1] @ p, frame[1] @ r
    geom_type, size = _type_and_size(shape, where, static)
    if geom_type is None:
        return None
    if shape.kind in ("cylinder", "cone", "capsule"):
        r = r @ Z_TO_Y
    geom = body.add_geom(name=name, type=geom_type, size=size, pos=p, quat=quaternion(r))
    if shape.kind == "mesh":
        if not is_convex(shape.vertices, shape.triangles):
            log.warning(
                "%s: mesh %s is not convex; MuJoCo collides it as its convex hull (ODE by its "
                "triangles): contacts in its hollows differ between the engines",
                where,
                name,
            )
        mesh = spec.add_mesh(name=name)
        mesh.uservert = np.asarray(shape.vertices, float).reshape(-1).tolist()
        mesh.userface = np.asarray(shape.triangles, int).reshape(-1).tolist()
        mesh.inertia = mujoco.mjtMeshInertia.mjMESH_INERTIA_SHELL  # flat meshes have no volume
        geom.meshname = name
    diffuse = shape.appearance.diffuse
    geom.rgba = [float(diffuse[0]), float(diffuse[1]), float(diffuse[2]), 1.0 - float(shape.appearance.transparency)]
    return geom


def is_convex(vertices: np.ndarray, triangles: np.ndarray, tolerance: float = 1e-6) -> bool:
    """Whether every vertex lies on one side of each triangle's plane (so the hull is the mesh).
    Large meshes are checked in chunks of triangles to bound the memory."""
    v = np.asarray(vertices, float)
    t = np.asarray(triangles, int).reshape(-1, 3)
    scale = max(float(np.ptp(v, axis=0).max()), 1e-12) if len(v) else 1.0
    for start in range(0, len(t), 256):
        tri = v[t[start : start + 256]]
        normals = np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0])
        lengths = np.linalg.norm(normals, axis=1)
        keep = lengths > 1e-12 * scale * scale
        normals = normals[keep] / lengths[keep, None]
        # signed distance of every vertex to every plane: n . v - n . p0
        distances = v @ normals.T - np.einsum("fk,fk->f", normals, tri[keep, 0])[None, :]
        limit = tolerance * scale
        if np.any((distances.max(axis=0) > limit) & (distances.min(axis=0) < -limit)):
            return False
    return True


def _type_and_size(shape: Shape, where: str, static: bool) -> tuple[mujoco.mjtGeom | None, list[float]]:
    kind = shape.kind
    g = mujoco.mjtGeom
    if kind == "box":
        return g.mjGEOM_BOX, [max(float(v) / 2.0, MIN_SIZE) for v in shape.size]
    if kind == "sphere":
        return g.mjGEOM_SPHERE, [max(shape.radius, MIN_SIZE), 0.0, 0.0]
    if kind in ("cylinder", "cone"):
        return g.mjGEOM_CYLINDER, [max(shape.radius, MIN_SIZE), max(shape.height / 2.0, MIN_SIZE), 0.0]
    if kind == "capsule":
        return g.mjGEOM_CAPSULE, [max(shape.radius, MIN_SIZE), max(shape.height / 2.0, MIN_SIZE), 0.0]
    if kind == "plane":
        if not static:
            raise ConfigError(
                f"{where}: a plane can only belong to a static model in MuJoCo "
                f"(make the model static, or give the link a thin box)"
            )
        return g.mjGEOM_PLANE, [0.0, 0.0, 1.0]
    if kind == "mesh":
        if len(shape.triangles) == 0 or len(shape.vertices) < 4:
            return None, []
        return g.mjGEOM_MESH, [0.0, 0.0, 0.0]
    raise ConfigError(f"{where}: shape kind {kind!r} has no MuJoCo form")
