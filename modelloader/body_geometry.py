"""Choreonoid ``Shape`` elements -> BodyInfo shapes, posed in the link frame.

Primitives keep Choreonoid's defaults (a 1 m box, radius 1 and height 1) and its axes (a
cylinder, cone or capsule along local Y, as VRML and BodyInfo). Polygon geometry
(IndexedFaceSet, TriangleMesh, Extrusion, ElevationGrid) becomes a mesh; a ``Resource``
geometry is a mesh file read by modelloader.body_resources.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from hrpsim.bodyinfo import Appearance, Shape
from hrpsim.modelloader.body_values import BodyFile
from hrpsim.modelloader.body_yaml import YMap
from hrpsim.modelloader.vrml_meshes import GeometryError, Mesh, elevation_grid, extrusion, polygons_to_triangles
from hrpsim.modelloader.vrml_shapes import place_mesh, place_primitive
from hrpsim.transforms import axis_angle_matrix

PRIMITIVES = {"Box": "box", "Sphere": "sphere", "Cylinder": "cylinder", "Cone": "cone", "Capsule": "capsule"}
POLYGONS = ("IndexedFaceSet", "TriangleMesh", "Extrusion", "ElevationGrid")

# (geometry node, its placement in the link frame) -> shapes; for ``type: Resource`` geometry
ResourceGeometry = Callable[[YMap, np.ndarray], list[Shape]]


def read_shape(file: BodyFile, node: YMap, transform: np.ndarray, resource: ResourceGeometry) -> list[Shape]:
    """The shapes of one ``Shape`` element whose parent frame is ``transform`` in the link."""
    own, _ = file.pose(node, "Shape")
    placed = transform @ own
    geometry = node.get("geometry")
    if not isinstance(geometry, YMap):
        if geometry is not None:
            file.add(node, "Shape", "geometry must be a mapping with a type", "geometry")
        return []
    kind = file.string(geometry, "type", "geometry")
    look = appearance_of(file, node.get("appearance"))
    try:
        if kind in PRIMITIVES:
            shapes = [_primitive(file, geometry, kind, placed)]
        elif kind in POLYGONS:
            shapes = [place_mesh(_polygons(file, geometry, kind), placed)]
        elif kind == "Resource":
            shapes = resource(geometry, placed)
        else:
            known = ", ".join([*PRIMITIVES, *POLYGONS, "Resource"])
            file.add(geometry, f"geometry {kind!r}", f"unknown geometry type (known: {known})", "type")
            return []
    except GeometryError as exc:
        file.add(geometry, f"geometry {kind}", str(exc))
        return []
    result = [s for s in shapes if s is not None]
    for shape in result:
        if kind != "Resource":
            shape.appearance = look
    return result


def _primitive(file: BodyFile, geometry: YMap, kind: str, placed: np.ndarray) -> Shape | None:
    what = f"geometry {kind}"
    size = file.vector(geometry, "size", what, 3, (1.0, 1.0, 1.0))
    radius = file.number(geometry, "radius", what, 1.0)
    height = file.number(geometry, "height", what, 1.0)
    if np.any(size < 0) or radius < 0 or height < 0:
        file.add(geometry, what, "sizes must not be negative")
        return None
    shape = place_primitive(PRIMITIVES[kind], placed, size=size, radius=radius, height=height)
    if shape is None:
        file.add(geometry, what, "a capsule under a non-uniform scale cannot be represented")
    return shape


def _polygons(file: BodyFile, geometry: YMap, kind: str) -> Mesh:
    what = f"geometry {kind}"
    if kind == "ElevationGrid":
        heights = file.vector(geometry, "height", what, 0, ())
        return elevation_grid(
            heights,
            file.integer(geometry, "xDimension", what, 0, 0),
            file.integer(geometry, "zDimension", what, 0, 0),
            file.number(geometry, "xSpacing", what, 1.0),
            file.number(geometry, "zSpacing", what, 1.0),
            ccw=geometry.get("ccw", True) is not False,
        )
    if kind == "Extrusion":
        return _extrusion(file, geometry, what)
    points = file.vector(geometry, ("vertices", "coordinate"), what, 0, ())
    index = file.vector(geometry, ("faces", "coordIndex"), what, 0, ())
    if points.size % 3:
        raise GeometryError(f"{points.size} coordinates do not make 3D points")
    vertices = points.reshape(-1, 3)
    if kind == "TriangleMesh":
        if index.size % 3:
            raise GeometryError(f"{index.size} face indices do not make triangles")
        triangles = index.reshape(-1, 3).astype(np.int32)
        if triangles.size and (triangles.min() < 0 or triangles.max() >= len(vertices)):
            raise GeometryError("a face index is outside the vertex list")
        return vertices, triangles
    return vertices, polygons_to_triangles(index, len(vertices))


def _extrusion(file: BodyFile, geometry: YMap, what: str) -> Mesh:
    cross = file.vector(geometry, "crossSection", what, 0, (1, 1, 1, -1, -1, -1, -1, 1, 1, 1))
    spine = file.vector(geometry, "spine", what, 0, (0, 0, 0, 0, 1, 0))
    scale = file.vector(geometry, "scale", what, 0, (1, 1))
    orientation = file.vector(geometry, "orientation", what, 0, (0, 0, 1, 0))
    # Choreonoid reads whole points and drops a trailing part (TankBody.body's scale has 3 numbers)
    cross, spine = cross[: cross.size // 2 * 2], spine[: spine.size // 3 * 3]
    scale, orientation = scale[: scale.size // 2 * 2], orientation[: orientation.size // 4 * 4]
    if not scale.size:
        raise GeometryError("scale needs at least one pair of numbers")
    turns = [axis_angle_matrix(aa[:3], file.radians(aa[3])) for aa in orientation.reshape(-1, 4)]
    return extrusion(
        cross.reshape(-1, 2),
        spine.reshape(-1, 3),
        scale.reshape(-1, 2),
        turns or [np.eye(3)],
        begin_cap=file.raw(geometry, "beginCap", True) is not False,
        end_cap=file.raw(geometry, "endCap", True) is not False,
    )


def appearance_of(file: BodyFile, node: object) -> Appearance:
    """Diffuse colour and transparency (specular, shininess and textures are a viewer's business)."""
    look = Appearance()
    if not isinstance(node, YMap) or not isinstance(node.get("material"), YMap):
        return look
    material = node["material"]
    colour = file.vector(material, ("diffuseColor", "diffuse"), "material", 3)
    if colour is not None:
        look.diffuse = colour
    look.transparency = file.number(material, "transparency", "material", 0.0)
    return look
