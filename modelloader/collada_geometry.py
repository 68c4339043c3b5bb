"""COLLADA documents as plain data: namespace-free parsing, id lookup, transform elements, meshes
(triangles, polylist, polygons) and the visual scene's node frames.

Used by the COLLADA model reader and, for ``.dae`` mesh files named in URDF, by ``meshes``."""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from lxml import etree

from hrpsim.modelloader.urdf_xml import Problems, floats, integer, parse_xml, read_file
from hrpsim.transforms import axis_angle_matrix

TRANSFORM_TAGS = ("translate", "rotate", "matrix", "scale")


@dataclass
class Document:
    """A parsed COLLADA file with namespaces removed and every ``id`` indexed."""

    root: etree._Element
    problems: Problems
    meter: float = 1.0
    ids: dict[str, etree._Element] = field(default_factory=dict)

    def ref(self, url: str | None, where: etree._Element, what: str) -> etree._Element | None:
        """The element a ``#id`` url names; an unknown or external url is recorded as a problem."""
        if not url or not url.startswith("#"):
            self.problems.add(where, f"{what} url {url!r} is not a local '#id' reference")
            return None
        element = self.ids.get(url[1:])
        if element is None:
            self.problems.add(where, f"{what} {url!r} names no element in this document")
        return element


def parse_document(data: bytes, problems: Problems) -> Document:
    root = parse_xml(data, problems.path, "COLLADA")
    for element in root.iter():
        if isinstance(element.tag, str) and "}" in element.tag:
            element.tag = element.tag.split("}", 1)[1]
    document = Document(root, problems)
    for element in root.iter():
        if isinstance(element.tag, str) and element.get("id"):
            document.ids.setdefault(element.get("id"), element)
    unit = root.find("asset/unit")
    if unit is not None and unit.get("meter") is not None:
        meter = floats(unit.get("meter"), 1, problems, unit, "unit meter")
        if meter is not None and meter[0] > 0:
            document.meter = float(meter[0])
        elif meter is not None:
            problems.add(unit, f"unit meter {meter[0]} is not positive")
    return document


def transform(element: etree._Element, document: Document) -> np.ndarray:
    """The 4x4 product of the transform children of ``element``, in document order.

    Angles in <rotate> are degrees; lengths are scaled to metres."""
    result = np.eye(4)
    for child in element:
        tag = child.tag
        if tag not in TRANSFORM_TAGS:
            continue
        step = _one_transform(child, document)
        if step is not None:
            result = result @ step
    return result


def _one_transform(child: etree._Element, document: Document) -> np.ndarray | None:
    problems = document.problems
    m = np.eye(4)
    if child.tag == "translate":
        values = floats(child.text, 3, problems, child, "translate")
        if values is None:
            return None
        m[:3, 3] = values * document.meter
    elif child.tag == "rotate":
        values = floats(child.text, 4, problems, child, "rotate")
        if values is None:
            return None
        m[:3, :3] = axis_angle_matrix(values[:3], math.radians(values[3]))
    elif child.tag == "matrix":
        values = floats(child.text, 16, problems, child, "matrix")
        if values is None:
            return None
        m = values.reshape(4, 4).copy()
        m[:3, 3] *= document.meter
    else:  # scale
        values = floats(child.text, 3, problems, child, "scale")
        if values is None:
            return None
        m[:3, :3] = np.diag(values)
    return m


# --- meshes --------------------------------------------------------------------------------------


def read_geometry(geometry: etree._Element, document: Document) -> tuple[np.ndarray, np.ndarray] | None:
    """Vertices (metres) and triangles of a <geometry>'s <mesh>; None (with a problem recorded
    when it is malformed) when it holds no triangles."""
    mesh = geometry.find("mesh")
    if mesh is None:
        return None
    sources = {s.get("id"): s for s in mesh.findall("source")}
    positions_of = {}
    for vertices in mesh.findall("vertices"):
        for inp in vertices.findall("input"):
            if inp.get("semantic") == "POSITION":
                positions_of[vertices.get("id")] = inp.get("source", "")
    chunks: list[np.ndarray] = []
    position_url = None
    for primitive in mesh:
        if primitive.tag not in ("triangles", "polylist", "polygons"):
            continue
        vertex_input = next((i for i in primitive.findall("input") if i.get("semantic") == "VERTEX"), None)
        if vertex_input is None:
            document.problems.add(primitive, "primitive without a VERTEX input")
            continue
        position_url = _positions_url(positions_of, vertex_input.get("source", "")) or position_url
        triangles = _primitive_triangles(primitive, vertex_input, document)
        if triangles is not None:
            chunks.append(triangles)
    if not chunks or position_url is None:
        return None
    positions = _source_points(sources.get(position_url[1:]), geometry, document)
    if positions is None:
        return None
    triangles = np.concatenate(chunks).astype(np.int32)
    if triangles.size == 0:
        return None
    if triangles.min() < 0 or triangles.max() >= len(positions):
        document.problems.add(geometry, f"triangle index out of range (mesh has {len(positions)} vertices)")
        return None
    return positions * document.meter, triangles


def _positions_url(positions_of: dict[str, str], vertex_source: str) -> str | None:
    """The POSITION source for a VERTEX input. Some writers reference <vertices> by a path
    ("#geometry/vertices") instead of its id; a mesh's only <vertices> is then meant."""
    key = vertex_source.lstrip("#")
    found = positions_of.get(key) or positions_of.get(key.rsplit("/", 1)[-1])
    if found is None and len(positions_of) == 1:
        found = next(iter(positions_of.values()))
    return found


def _primitive_triangles(
    primitive: etree._Element, vertex_input: etree._Element, document: Document
) -> np.ndarray | None:
    problems = document.problems
    offsets = [integer(i.get("offset", "0"), problems, i, "input offset") for i in primitive.findall("input")]
    if any(o is None for o in offsets):
        return None
    stride = max(offsets) + 1
    offset = int(vertex_input.get("offset", "0"))
    polygons: list[np.ndarray] = []
    for p in primitive.findall("p"):
        values = floats(p.text or "", None, problems, p, "<p> indices")
        if values is None:
            return None
        polygons.append(values.astype(np.int64))
    if not polygons:
        return np.zeros((0, 3), dtype=np.int64)
    if primitive.tag == "triangles":
        flat = np.concatenate(polygons)
        if flat.size % (3 * stride):
            problems.add(primitive, f"<p> holds {flat.size} indices, not a whole number of triangles")
            return None
        return flat.reshape(-1, stride)[:, offset].reshape(-1, 3)
    if primitive.tag == "polylist":
        vcount_element = primitive.find("vcount")
        counts = floats(vcount_element.text if vcount_element is not None else "", None, problems, primitive, "vcount")
        if counts is None:
            return None
        if np.any(counts < 0) or np.any(counts != np.round(counts)):
            problems.add(primitive, "vcount holds a negative or fractional vertex count")
            return None
        flat = np.concatenate(polygons)
        if flat.size != int(counts.sum()) * stride:
            problems.add(primitive, "vcount does not match the number of indices in <p>")
            return None
        corners = flat.reshape(-1, stride)[:, offset]
        return _fans(np.split(corners, np.cumsum(counts.astype(np.int64))[:-1]))
    return _fans([poly.reshape(-1, stride)[:, offset] for poly in polygons])


def _fans(polygons: list[np.ndarray]) -> np.ndarray:
    triangles = [[poly[0], poly[k], poly[k + 1]] for poly in polygons for k in range(1, len(poly) - 1)]
    return np.array(triangles, dtype=np.int64).reshape(-1, 3)


def _source_points(source: etree._Element | None, where: etree._Element, document: Document) -> np.ndarray | None:
    if source is None:
        document.problems.add(where, "mesh positions source not found")
        return None
    array = source.find("float_array")
    accessor = source.find("technique_common/accessor")
    stride = 3 if accessor is None else integer(accessor.get("stride", "3"), document.problems, accessor, "stride", 1)
    if stride is None:
        return None
    values = floats(array.text if array is not None else None, None, document.problems, source, "float_array")
    if values is None:
        return None
    if stride < 3 or values.size % stride:
        document.problems.add(source, f"float_array of {values.size} numbers does not fit stride {stride}")
        return None
    return values.reshape(-1, stride)[:, :3].copy()


# --- visual scene --------------------------------------------------------------------------------


def walk_nodes(start: etree._Element, frame: np.ndarray, document: Document, depth: int = 0) -> Iterator[tuple]:
    """(node, world frame) for ``start`` and every node below it, following
    <instance_node> references (each node's frame includes its own transforms)."""
    if depth > 64:
        document.problems.add(start, "nodes nested more than 64 deep (a cycle of instance_node?)")
        return
    own = frame @ transform(start, document)
    yield start, own
    for child in start:
        if child.tag == "node":
            yield from walk_nodes(child, own, document, depth + 1)
        elif child.tag == "instance_node":
            target = document.ref(child.get("url"), child, "instance_node")
            if target is not None:
                yield from walk_nodes(target, own, document, depth + 1)


def scene_roots(document: Document) -> list[etree._Element]:
    """The top nodes of the instantiated visual scene (or of the first one)."""
    instance = document.root.find("scene/instance_visual_scene")
    scene = document.ids.get((instance.get("url") or "")[1:]) if instance is not None else None
    if scene is None:
        scene = document.root.find("library_visual_scenes/visual_scene")
    return [] if scene is None else scene.findall("node")


def read_dae_mesh(path: Path) -> tuple[np.ndarray, np.ndarray]:
    """All the geometry a .dae file's visual scene places, merged into one mesh in its frame."""
    from hrpsim.modelloader.meshes import MeshError

    problems = Problems(path, "COLLADA mesh")
    document = parse_document(read_file(path, "COLLADA mesh"), problems)
    up = document.root.findtext("asset/up_axis", "Z_UP").strip()
    up_fix = np.eye(4)
    if up == "Y_UP":  # our frames are Z up; a Y-up file turns +Y onto +Z
        up_fix[:3, :3] = axis_angle_matrix(np.array([1.0, 0.0, 0.0]), math.pi / 2)
    vertices, triangles = [], []
    count = 0
    for top in scene_roots(document):
        for node, frame in walk_nodes(top, up_fix, document):
            for instance in node.findall("instance_geometry"):
                geometry = document.ref(instance.get("url"), instance, "instance_geometry")
                mesh = read_geometry(geometry, document) if geometry is not None else None
                if mesh is None:
                    continue
                points = mesh[0] @ frame[:3, :3].T + frame[:3, 3]
                vertices.append(points)
                triangles.append(mesh[1] + count)
                count += len(points)
    if problems.items:
        raise MeshError(f"{path}: cannot read COLLADA mesh: " + "; ".join(problems.items))
    if not vertices:
        raise MeshError(f"{path}: COLLADA file places no triangle geometry in its visual scene")
    return np.concatenate(vertices), np.concatenate(triangles).astype(np.int32)
