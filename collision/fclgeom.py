"""BodyInfo shapes as python-fcl objects, for the queries ODE has no answer to: distance and
closest points.

Primitives stay primitives (fcl's GJK is exact for them); only the unsigned query is used, since
fcl's penetration depth (EPA) can loop forever. A pair in which either side is a mesh is measured
mesh against mesh: python-fcl 0.7 reports the closest points of a primitive-versus-mesh query in
the wrong frames and order, while mesh-versus-mesh is right, so the primitive side is tessellated
for that pair only. A mesh is a surface to fcl: a shape wholly inside a mesh is at a positive distance from it.

A plane (BodyInfo: normal along the shape's local +Z) becomes a thick slab whose top face is the
plane: fcl's Halfspace distance query crashes the process in this version.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import fcl
import numpy as np

from hrpsim.bodyinfo import Shape
from hrpsim.conventions import Z_TO_Y

# VRML's cylinder, cone and capsule axis is local Y; fcl's is local Z. This turns Z into Y.
AXIAL_KINDS = ("cylinder", "cone", "capsule")

PLANE_HALF_EXTENT = 500.0  # m: the slab standing in for an infinite plane
PLANE_THICKNESS = 10.0  # m
SPHERE_SUBDIVISIONS = 3
ROUND_SECTIONS = 48


def shape_frame(shape: Shape) -> np.ndarray:
    """The 4x4 pose, in the link frame, of the frame fcl (and ODE) describe the shape in."""
    frame = np.eye(4)
    frame[:3, :3] = shape.rotation
    frame[:3, 3] = shape.translation
    if shape.kind in AXIAL_KINDS:
        frame[:3, :3] = frame[:3, :3] @ Z_TO_Y
    if shape.kind == "plane":
        frame[:3, 3] += frame[:3, :3] @ np.array([0.0, 0.0, -PLANE_THICKNESS / 2])
    return frame


def _primitive(shape: Shape) -> fcl.CollisionGeometry | None:
    kind = shape.kind
    if kind == "box":
        return fcl.Box(*(float(v) for v in shape.size))
    if kind == "sphere":
        return fcl.Sphere(float(shape.radius))
    if kind == "cylinder":
        return fcl.Cylinder(float(shape.radius), float(shape.height))
    if kind == "cone":
        return fcl.Cone(float(shape.radius), float(shape.height))
    if kind == "capsule":
        return fcl.Capsule(float(shape.radius), float(shape.height))
    if kind == "plane":
        return fcl.Box(2 * PLANE_HALF_EXTENT, 2 * PLANE_HALF_EXTENT, PLANE_THICKNESS)
    return None


def triangles_of(shape: Shape) -> tuple[np.ndarray, np.ndarray]:
    """Vertices and triangles of the shape in its fcl frame (see :func:`shape_frame`).

    Primitives are unit solids scaled to size, so that a zero or tiny dimension squashes the
    triangles instead of losing them (trimesh drops degenerate faces, and fcl crashes on a BVH
    without any).
    """
    kind = shape.kind
    if kind == "mesh":
        return np.asarray(shape.vertices, dtype=np.float64), np.asarray(shape.triangles, dtype=np.int64)
    import trimesh  # here, not at the top: a third of a simulator's start-up, needed only by primitives

    r, h = float(shape.radius), float(shape.height)
    if kind == "box":
        mesh, scale = trimesh.creation.box(extents=[1.0, 1.0, 1.0]), np.asarray(shape.size, dtype=np.float64)
    elif kind == "sphere":
        mesh, scale = trimesh.creation.icosphere(subdivisions=SPHERE_SUBDIVISIONS), np.array([r, r, r])
    elif kind == "cylinder":
        mesh, scale = trimesh.creation.cylinder(radius=1.0, height=1.0, sections=ROUND_SECTIONS), np.array([r, r, h])
    elif kind == "cone":
        mesh = trimesh.creation.cone(radius=1.0, height=1.0, sections=ROUND_SECTIONS)
        mesh.apply_translation([0.0, 0.0, -0.5])  # trimesh puts the base at z = 0
        scale = np.array([r, r, h])
    elif kind == "capsule":
        # a sphere of the radius whose halves are pushed apart by the cylinder's height
        mesh = trimesh.creation.icosphere(subdivisions=SPHERE_SUBDIVISIONS)
        vertices = np.asarray(mesh.vertices) * r
        vertices[:, 2] += np.where(mesh.vertices[:, 2] >= 0.0, h / 2, -h / 2)
        return vertices, np.asarray(mesh.faces, dtype=np.int64)
    elif kind == "plane":
        mesh = trimesh.creation.box(extents=[1.0, 1.0, 1.0])
        scale = np.array([2 * PLANE_HALF_EXTENT, 2 * PLANE_HALF_EXTENT, PLANE_THICKNESS])
    else:
        raise ValueError(f"unknown shape kind {kind!r}")
    return np.asarray(mesh.vertices, dtype=np.float64) * scale, np.asarray(mesh.faces, dtype=np.int64)


def _bvh(vertices: np.ndarray, triangles: np.ndarray) -> fcl.BVHModel:
    model = fcl.BVHModel()
    model.beginModel(len(vertices), len(triangles))
    model.addSubModel(vertices, triangles)
    model.endModel()
    return model


@dataclass
class FclShape:
    """One shape of a link: its frame in the link, and its fcl object(s), posed on demand."""

    kind: str
    frame: np.ndarray  # 4x4 in the link frame
    primitive: fcl.CollisionObject | None
    _source: Shape
    _mesh: fcl.CollisionObject | None = field(default=None, repr=False)

    @classmethod
    def of(cls, shape: Shape) -> FclShape:
        geometry = _primitive(shape)
        primitive = None if geometry is None else fcl.CollisionObject(geometry, fcl.Transform())
        return cls(shape.kind, shape_frame(shape), primitive, shape)

    @property
    def mesh(self) -> fcl.CollisionObject:
        if self._mesh is None:
            self._mesh = fcl.CollisionObject(_bvh(*triangles_of(self._source)), fcl.Transform())
        return self._mesh

    def place(self, link_pose: np.ndarray, *, as_mesh: bool) -> fcl.CollisionObject:
        world = link_pose @ self.frame
        obj = self.mesh if as_mesh or self.primitive is None else self.primitive
        obj.setTransform(fcl.Transform(world[:3, :3], world[:3, 3]))
        return obj


def link_shapes(shapes: list[Shape]) -> list[FclShape]:
    return [FclShape.of(s) for s in shapes]


@dataclass
class Separation:
    """The distance between two links and a closest point on each (world frame).

    When the shapes overlap, ``overlapping`` is set and ``distance`` is 0: fcl's penetration
    depth (its EPA) can loop forever (two concentric spheres, a zero-sized shape), so the depth
    is left to ODE's contacts (see collision.queries).
    """

    distance: float
    point1: np.ndarray
    point2: np.ndarray
    overlapping: bool = False


_REQUEST = fcl.DistanceRequest(enable_nearest_points=True)  # unsigned: GJK only, never EPA


def shape_separation(a: FclShape, pose_a: np.ndarray, b: FclShape, pose_b: np.ndarray) -> Separation:
    as_mesh = a.primitive is None or b.primitive is None
    obj_a = a.place(pose_a, as_mesh=as_mesh)
    obj_b = b.place(pose_b, as_mesh=as_mesh)
    result = fcl.DistanceResult()
    distance = fcl.distance(obj_a, obj_b, _REQUEST, result)
    p1, p2 = (np.array(p, dtype=np.float64) for p in result.nearest_points)
    if distance > 0.0:
        return Separation(float(distance), p1, p2)
    if not as_mesh:  # fcl gives no point for overlapping primitives: take the middle of the two
        p1 = p2 = ((pose_a @ a.frame)[:3, 3] + (pose_b @ b.frame)[:3, 3]) / 2
    return Separation(0.0, p1, p2, overlapping=True)


def link_separation(
    shapes_a: list[FclShape], pose_a: np.ndarray, shapes_b: list[FclShape], pose_b: np.ndarray
) -> Separation | None:
    """The closest pair of shapes between two links; None when either has no shapes."""
    best: Separation | None = None
    for a in shapes_a:
        for b in shapes_b:
            sep = shape_separation(a, pose_a, b, pose_b)
            if best is None or sep.distance < best.distance:
                best = sep
            if sep.overlapping:
                return sep
    return best
