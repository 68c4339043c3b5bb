"""VRML Shape nodes -> BodyInfo shapes, posed in the link frame.

``transform`` is the 4x4 affine map from the geometry's frame to the link frame (every
Transform between the Joint and the Shape, scale included). A primitive stays a primitive when
that map is a rotation with a scale the primitive can absorb (any per-axis scale for a box,
uniform for a sphere, equal X and Z for a cylinder or cone); otherwise it becomes a mesh.
Meshes carry their vertices already in the link frame.
"""

from __future__ import annotations

import numpy as np

from hrpsim.bodyinfo import Appearance, Shape
from hrpsim.modelloader.vrml.fields import FieldReader
from hrpsim.modelloader.vrml.files import resolve_url
from hrpsim.modelloader.vrml.nodes import Node
from hrpsim.modelloader.vrml_meshes import (
    GeometryError,
    Mesh,
    box_mesh,
    concave_polygons_to_triangles,
    cylinder_mesh,
    elevation_grid,
    extrusion,
    polygons_to_triangles,
    sphere_mesh,
)
from hrpsim.transforms import axis_angle_matrix

PRIMITIVES = ("Box", "Sphere", "Cylinder", "Cone")
MESHES = ("IndexedFaceSet", "ElevationGrid", "Extrusion")
_TOLERANCE = 1e-6
_SQUARE = 1e-4


def shape_of(shape: Node, transform: np.ndarray, fields: FieldReader) -> Shape | None:
    """The Shape for one VRML Shape node, or None when it has no usable geometry."""
    geometry = fields.node(shape, "geometry")
    if geometry is None:
        return None
    appearance = appearance_of(fields.node(shape, "appearance"), fields)
    try:
        if geometry.type in PRIMITIVES:
            result = _primitive(geometry, transform, fields)
        elif geometry.type in MESHES:
            result = place_mesh(_polygon_mesh(geometry, fields), transform)
        else:
            return None  # PointSet, IndexedLineSet, Text: nothing to collide with
    except GeometryError as exc:
        fields.problems.append(f"{geometry.where}: {geometry.label}: {exc}")
        return None
    if result is None:
        return None
    problem = _primitive_problem(result)
    if problem:
        fields.problems.append(f"{geometry.where}: {geometry.label}: {problem}")
        return None
    result.appearance = appearance
    return result


def _primitive_problem(shape: Shape) -> str:
    if shape.kind == "mesh":
        return ""  # vertices were checked when placed
    numbers = np.concatenate([shape.translation, shape.rotation.ravel(), shape.size, [shape.radius, shape.height]])
    if not np.all(np.isfinite(numbers)):
        return "size or pose is not finite"
    if np.any(shape.size < 0) or shape.radius < 0 or shape.height < 0:
        return f"negative size (size {shape.size.tolist()}, radius {shape.radius}, height {shape.height})"
    return ""


def appearance_of(node: Node | None, fields: FieldReader) -> Appearance:
    look = Appearance()
    if node is None:
        return look
    material = fields.node(node, "material")
    if material is not None:
        look.diffuse = fields.vector(material, "diffuseColor", (0.8, 0.8, 0.8))
        look.transparency = fields.float(material, "transparency", 0.0)
    texture = fields.node(node, "texture")
    if texture is not None and texture.type == "ImageTexture":
        urls = fields.strings(texture, "url")
        if urls:
            # Relative to the file the ImageTexture is written in (an Inline's own folder).
            local = resolve_url(urls[0], texture.where.file)
            look.texture = local if local is not None else urls[0]
    return look


def _primitive(geometry: Node, transform: np.ndarray, fields: FieldReader) -> Shape | None:
    kind = geometry.type
    if kind == "Box":
        return place_primitive("box", transform, size=fields.vector(geometry, "size", (2.0, 2.0, 2.0)))
    if kind == "Sphere":
        return place_primitive("sphere", transform, radius=fields.float(geometry, "radius", 1.0))
    if kind == "Cylinder":
        radius, height = fields.float(geometry, "radius", 1.0), fields.float(geometry, "height", 2.0)
        return place_primitive("cylinder", transform, radius=radius, height=height)
    radius, height = fields.float(geometry, "bottomRadius", 1.0), fields.float(geometry, "height", 2.0)
    return place_primitive("cone", transform, radius=radius, height=height)


def place_primitive(
    kind: str, transform: np.ndarray, *, size: np.ndarray | None = None, radius: float = 0.0, height: float = 0.0
) -> Shape | None:
    """A box, sphere, cylinder, cone or capsule (VRML axes) under an affine ``transform``: a
    primitive when the map is a rotation with a scale the primitive absorbs, else a mesh (None
    for a capsule, which has no mesh form here)."""
    linear, offset = transform[:3, :3], transform[:3, 3].copy()
    scales = np.linalg.norm(linear, axis=0)
    rotation = linear / np.where(scales > 0, scales, 1.0)
    # Exporters round their matrices: columns a few 1e-6 off square are still a rotation.
    rigid = bool(np.allclose(rotation.T @ rotation, np.eye(3), atol=_SQUARE)) and np.linalg.det(rotation) > 0
    if rigid:
        rotation = _nearest_rotation(rotation)
    if kind == "box":
        size = np.asarray(size, dtype=np.float64)
        if rigid:
            return Shape("box", translation=offset, rotation=rotation, size=size * scales)
        return place_mesh(box_mesh(size), transform)
    if kind == "sphere":
        if rigid and np.ptp(scales) <= _TOLERANCE * max(1.0, scales.max()):
            return Shape("sphere", translation=offset, rotation=rotation, radius=radius * scales[0])
        return place_mesh(sphere_mesh(radius), transform)
    if rigid and abs(scales[0] - scales[2]) <= _TOLERANCE * max(1.0, scales.max()):
        return Shape(kind, translation=offset, rotation=rotation, radius=radius * scales[0], height=height * scales[1])
    if kind == "capsule":
        return None
    return place_mesh(cylinder_mesh(radius, radius if kind == "cylinder" else 0.0, height), transform)


def _nearest_rotation(matrix: np.ndarray) -> np.ndarray:
    u, _, vt = np.linalg.svd(matrix)
    return u @ vt


def _polygon_mesh(geometry: Node, fields: FieldReader) -> Mesh:
    ccw = fields.bool(geometry, "ccw", True)
    if geometry.type == "IndexedFaceSet":
        coord = fields.node(geometry, "coord")
        points = fields.numbers(coord, "point") if coord is not None else np.zeros(0)
        if points.size % 3:
            raise GeometryError(f"{points.size} coordinates do not make 3D points")
        vertices = points.reshape(-1, 3)
        index = fields.numbers(geometry, "coordIndex")
        if not fields.bool(geometry, "convex", True):
            return vertices, concave_polygons_to_triangles(index, vertices, ccw=ccw)
        return vertices, polygons_to_triangles(index, len(vertices), ccw=ccw)
    if geometry.type == "ElevationGrid":
        return elevation_grid(
            fields.numbers(geometry, "height"),
            fields.int(geometry, "xDimension", 0),
            fields.int(geometry, "zDimension", 0),
            fields.float(geometry, "xSpacing", 1.0),
            fields.float(geometry, "zSpacing", 1.0),
            ccw=ccw,
        )
    return _extrusion(geometry, fields, ccw)


def _extrusion(geometry: Node, fields: FieldReader, ccw: bool) -> Mesh:
    cross = fields.numbers(geometry, "crossSection", (1, 1, 1, -1, -1, -1, -1, 1, 1, 1))
    spine = fields.numbers(geometry, "spine", (0, 0, 0, 0, 1, 0))
    scale = fields.numbers(geometry, "scale", (1, 1))
    orientation = fields.numbers(geometry, "orientation", (0, 0, 1, 0))
    if cross.size % 2 or spine.size % 3 or scale.size % 2 or orientation.size % 4 or not scale.size:
        raise GeometryError("crossSection, spine, scale or orientation has a count that does not fit its type")
    turns = []
    for axis_angle in orientation.reshape(-1, 4) if orientation.size else np.array([[0, 0, 1, 0.0]]):
        turns.append(axis_angle_matrix(axis_angle[:3], axis_angle[3]))
    return extrusion(
        cross.reshape(-1, 2),
        spine.reshape(-1, 3),
        scale.reshape(-1, 2),
        turns,
        begin_cap=fields.bool(geometry, "beginCap", True),
        end_cap=fields.bool(geometry, "endCap", True),
        ccw=ccw,
    )


def place_mesh(mesh: Mesh, transform: np.ndarray) -> Shape | None:
    """A mesh (in its own frame) placed by an affine ``transform``; None when it has no triangles."""
    vertices, triangles = mesh
    if len(triangles) == 0:
        return None
    if not np.all(np.isfinite(vertices)):
        raise GeometryError("non-finite vertex coordinates")
    linear = transform[:3, :3]
    placed = vertices @ linear.T + transform[:3, 3]
    if np.linalg.det(linear) < 0:  # a mirroring scale turns faces inside out
        triangles = triangles[:, [0, 2, 1]]
    return Shape("mesh", vertices=np.ascontiguousarray(placed), triangles=np.ascontiguousarray(triangles))
