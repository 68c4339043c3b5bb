"""BodyInfo shapes as ODE geoms: the one place that maps our geometry onto ODE's primitives.

``make_geoms(shapes, space, body=..., frame=...)`` creates one geom per shape in ``space``.
``frame`` is the pose of the shapes' link frame: relative to ``body`` (whose origin ODE puts at
the link's centre of mass) when a body is given, else in the world (a static geom).

Mapping (VRML axes, see hrpsim.bodyinfo):

- box, sphere: ODE's own primitives;
- cylinder, capsule: ODE's, whose axis is local Z, turned so that it lies along the shape's Y;
- cone: ODE has none; a cylinder of the same radius and height stands in for it;
- plane: ODE's non-placeable plane (static bodies only: a moving plane has no meaning in ODE);
- mesh: a trimesh when the ODE binding supports them. Debian's python3-pyode is built without
  them (:data:`TRIMESH_SUPPORTED` says so) while its libode has them, so here a mesh is its
  oriented bounding box in the space (the broad phase) carrying an exact libode trimesh in
  ``geom.exact_mesh`` (hrpsim.odemesh), which :func:`hrpsim.engines.ode.trimesh.collide` uses for the
  contacts themselves. Without libode's trimesh, the box alone stands in for the mesh.

Every geom gets ``shape_index`` (its index in ``shapes``) as an attribute, so that a collision
callback can find which shape it hit.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import ode

from hrpsim.bodyinfo import Shape
from hrpsim.conventions import Z_TO_Y
from hrpsim.engines.ode import trimesh as odemesh
from hrpsim.errors import ModelError
from hrpsim.shape_checks import shape_problems

log = logging.getLogger("hrpsim.odegeom")

# Rotates ODE's local Z (cylinder and capsule axis) onto VRML's local Y.


def _trimesh_supported() -> bool:
    try:
        ode.TriMeshData()
    except NotImplementedError:
        return False
    return True


TRIMESH_SUPPORTED = _trimesh_supported()


@dataclass(frozen=True)
class Frame:
    """A rigid transform: ``x_parent = rotation @ x + translation``."""

    translation: np.ndarray = field(default_factory=lambda: np.zeros(3))
    rotation: np.ndarray = field(default_factory=lambda: np.eye(3))

    def compose(self, translation: np.ndarray, rotation: np.ndarray) -> Frame:
        return Frame(self.translation + self.rotation @ translation, self.rotation @ rotation)


IDENTITY = Frame()


def ode_rotation(rotation: np.ndarray) -> tuple[float, ...]:
    """A 3x3 matrix as ODE's row-major 9-tuple."""
    return tuple(float(v) for v in np.asarray(rotation, dtype=np.float64).reshape(9))


@dataclass(frozen=True)
class BoundingBox:
    """An oriented bounding box: centre and axes in the mesh's frame, full extents."""

    center: np.ndarray
    rotation: np.ndarray
    size: np.ndarray


_BOX_CACHE: dict[str, BoundingBox] = {}
_TRIMESH_CACHE: dict[str, object] = {}


def _mesh_key(shape: Shape) -> str:
    digest = hashlib.sha1(np.ascontiguousarray(shape.vertices, dtype=np.float64).tobytes())
    digest.update(np.ascontiguousarray(shape.triangles, dtype=np.int64).tobytes())
    return digest.hexdigest()


def mesh_bounding_box(shape: Shape) -> BoundingBox:
    """The oriented bounding box of a mesh's vertices (principal axes), cached by content."""
    key = _mesh_key(shape)
    box = _BOX_CACHE.get(key)
    if box is None:
        box = _principal_box(np.asarray(shape.vertices, dtype=np.float64))
        _BOX_CACHE[key] = box
    return box


def _principal_box(vertices: np.ndarray) -> BoundingBox:
    mean = vertices.mean(axis=0)
    centred = vertices - mean
    # Principal axes give a tight box for the elongated parts robots are made of.
    _, vectors = np.linalg.eigh(centred.T @ centred)
    if np.linalg.det(vectors) < 0:
        vectors[:, 0] = -vectors[:, 0]
    local = centred @ vectors
    lo, hi = local.min(axis=0), local.max(axis=0)
    center = mean + vectors @ ((lo + hi) / 2.0)
    size = np.maximum(hi - lo, 1e-6)  # a flat mesh still needs a box ODE accepts
    return BoundingBox(center, vectors, size)


def mesh_trimesh_data(shape: Shape) -> object:
    """ODE trimesh data for a mesh, built once per mesh content (needs TRIMESH_SUPPORTED)."""
    key = _mesh_key(shape)
    data = _TRIMESH_CACHE.get(key)
    if data is None:
        data = ode.TriMeshData()
        data.build([tuple(map(float, v)) for v in shape.vertices], [tuple(map(int, t)) for t in shape.triangles])
        _TRIMESH_CACHE[key] = data
    return data


def _check_shape(shape: Shape, where: str) -> None:
    problems = shape_problems(shape)
    if problems:
        raise ModelError(f"{where}: {shape.kind}: {problems[0]}")


def _create(shape: Shape, space: ode.SpaceBase | None) -> tuple[ode.GeomObject, Frame]:
    """The geom and its pose relative to the shape frame."""
    kind = shape.kind
    if kind == "box":
        return ode.GeomBox(space, tuple(float(max(s, 1e-9)) for s in shape.size)), IDENTITY
    if kind == "sphere":
        return ode.GeomSphere(space, float(shape.radius)), IDENTITY
    if kind in ("cylinder", "cone"):
        return ode.GeomCylinder(space, float(shape.radius), float(shape.height)), Frame(np.zeros(3), Z_TO_Y)
    if kind == "capsule":
        return ode.GeomCapsule(space, float(shape.radius), float(shape.height)), Frame(np.zeros(3), Z_TO_Y)
    if kind == "mesh":
        if TRIMESH_SUPPORTED:
            return ode.GeomTriMesh(mesh_trimesh_data(shape), space), IDENTITY
        box = mesh_bounding_box(shape)
        return ode.GeomBox(space, tuple(float(s) for s in box.size)), Frame(box.center, box.rotation)
    raise ModelError(f"shape kind {kind!r} has no ODE geom")


def make_geoms(
    shapes: Sequence[Shape],
    space: ode.SpaceBase | None,
    *,
    body: ode.Body | None = None,
    frame: Frame = IDENTITY,
    where: str = "shape",
) -> list[ode.GeomObject]:
    """One geom per shape in ``space``, attached to ``body`` (or static, posed in the world).

    ``frame``: the shapes' link frame relative to the body's frame (ODE's body frame is at the
    centre of mass with the link's orientation), or in the world for a static geom.
    ``where`` names the owner in errors ("model floor link BASE").
    """
    geoms: list[ode.GeomObject] = []
    for index, shape in enumerate(shapes):
        label = f"{where} shape {index}"
        _check_shape(shape, label)
        shape_frame = frame.compose(np.asarray(shape.translation, float), np.asarray(shape.rotation, float))
        if shape.kind == "plane":
            geoms.append(_make_plane(space, shape_frame, body, label))
        else:
            geom, local = _create(shape, space)
            pose = shape_frame.compose(local.translation, local.rotation)
            _place(geom, pose, body)
            if shape.kind == "mesh" and not TRIMESH_SUPPORTED and odemesh.AVAILABLE:
                geom.exact_mesh = odemesh.ExactMesh(shape.vertices, shape.triangles)
                geom.exact_mesh.place(geom, shape_frame.translation, shape_frame.rotation)
            geoms.append(geom)
        geoms[-1].shape_index = index
        # Looked up at every collision (trimesh.collide): on a geom without it, each lookup would
        # raise and catch an AttributeError.
        geoms[-1].exact_mesh = getattr(geoms[-1], "exact_mesh", None)
    return geoms


def _make_plane(space: ode.SpaceBase | None, pose: Frame, body: ode.Body | None, where: str) -> ode.GeomObject:
    if body is not None:
        raise ModelError(f"{where}: a plane can only belong to a static model (ODE planes cannot move)")
    normal = pose.rotation @ np.array([0.0, 0.0, 1.0])
    return ode.GeomPlane(space, tuple(float(v) for v in normal), float(normal @ pose.translation))


def _place(geom: ode.GeomObject, pose: Frame, body: ode.Body | None) -> None:
    if body is not None:
        geom.setBody(body)
        geom.setOffsetPosition(tuple(float(v) for v in pose.translation))
        geom.setOffsetRotation(ode_rotation(pose.rotation))
    else:
        geom.setPosition(tuple(float(v) for v in pose.translation))
        geom.setRotation(ode_rotation(pose.rotation))
