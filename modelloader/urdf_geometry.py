"""URDF <visual>/<collision> geometry and <material>: shapes in BodyInfo conventions, mesh files
found through ``package://`` and relative paths, named materials usable before their definition."""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from lxml import etree

from hrpsim.bodyinfo import Appearance, Shape
from hrpsim.files import may_read
from hrpsim.modelloader.meshes import MeshError, load_mesh
from hrpsim.modelloader.urdf_xml import Problems, floats, number, rpy_matrix
from hrpsim.transforms import axis_angle_matrix

# A URDF cylinder's axis is its Z; BodyInfo's (VRML's) is Y: Rx(+90 deg) takes Y onto Z.
CYLINDER_TO_Y = axis_angle_matrix(np.array([1.0, 0.0, 0.0]), math.pi / 2)
# capsule and plane are extensions some simulators read
SHAPE_TAGS = ("box", "sphere", "cylinder", "capsule", "plane", "mesh")


@dataclass
class GeometryContext:
    urdf_path: Path
    problems: Problems
    materials: dict[str, Appearance] = field(default_factory=dict)
    files: list[str] = field(default_factory=list)
    meshes: dict[tuple[str, tuple[float, ...] | None], tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)

    def mesh(self, path: Path, scale: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        """The arrays of a mesh file at ``scale``, read once per URDF read: a link's <visual> and
        <collision> usually name the same file. Shapes share the arrays; nothing writes into them."""
        key = (str(path), None if scale is None else tuple(float(s) for s in scale))
        if key not in self.meshes:
            self.meshes[key] = load_mesh(path, scale)
        return self.meshes[key]


def read_origin(element: etree._Element | None, problems: Problems) -> tuple[np.ndarray, np.ndarray]:
    """(rotation, translation) of an <origin>; a missing element or attribute means zero."""
    if element is None:
        return np.eye(3), np.zeros(3)
    xyz = floats(element.get("xyz", "0 0 0"), 3, problems, element, "xyz")
    rpy = floats(element.get("rpy", "0 0 0"), 3, problems, element, "rpy")
    rotation = rpy_matrix(rpy) if rpy is not None else np.eye(3)
    return rotation, (xyz if xyz is not None else np.zeros(3))


def collect_materials(robot: etree._Element, ctx: GeometryContext) -> None:
    """Register every named material that defines a colour or texture, wherever it appears:
    files use a name before the link that defines it."""
    for element in robot.iter("material"):
        name = element.get("name")
        if name and (element.find("color") is not None or element.find("texture") is not None):
            ctx.materials.setdefault(name, _appearance(element, ctx))


def _appearance(element: etree._Element, ctx: GeometryContext) -> Appearance:
    appearance = Appearance()
    color = element.find("color")
    if color is not None:
        rgba = floats(color.get("rgba"), 4, ctx.problems, color, "rgba")
        if rgba is not None:
            appearance.diffuse = np.clip(rgba[:3], 0.0, 1.0)
            appearance.transparency = float(np.clip(1.0 - rgba[3], 0.0, 1.0))
    texture = element.find("texture")
    if texture is not None and texture.get("filename"):
        found, _tried = resolve_resource(texture.get("filename", ""), ctx.urdf_path)
        appearance.texture = str(found) if found is not None else texture.get("filename", "")
    return appearance


def material_of(visual: etree._Element, ctx: GeometryContext) -> Appearance:
    element = visual.find("material")
    if element is None:
        return Appearance()
    if element.find("color") is not None or element.find("texture") is not None:
        return _appearance(element, ctx)
    name = element.get("name", "")
    if name in ctx.materials:
        return ctx.materials[name]
    ctx.problems.warn(element, f"material {name!r} is never defined; default colour used")
    return Appearance()


def read_shape(holder: etree._Element, ctx: GeometryContext, appearance: Appearance | None = None) -> Shape | None:
    """The shape of a <visual> (given its ``appearance``) or <collision>, posed in the link frame.

    Other elements beside the shape (a <material> put inside <geometry>) are left to the
    schema check's warning; a visual whose mesh cannot be read is dropped with a warning, since
    drawing without it changes nothing the simulation computes."""
    rotation, translation = read_origin(holder.find("origin"), ctx.problems)
    geometry = holder.find("geometry")
    if geometry is None:
        ctx.problems.add(holder, "missing <geometry>")
        return None
    kinds = [child for child in geometry if isinstance(child.tag, str) and child.tag in SHAPE_TAGS]
    if len(kinds) != 1:
        found = ", ".join(str(child.tag) for child in geometry if isinstance(child.tag, str)) or "nothing"
        ctx.problems.add(geometry, f"<geometry> must hold exactly one of box, cylinder, sphere, mesh; found {found}")
        return None
    shape = _primitive_or_mesh(kinds[0], ctx, visual=appearance is not None)
    if shape is None:
        return None
    if shape.kind in ("cylinder", "capsule"):
        rotation = rotation @ CYLINDER_TO_Y
    shape.rotation = rotation @ shape.rotation
    shape.translation = translation
    if appearance is not None:
        shape.appearance = appearance
    return shape


def _primitive_or_mesh(element: etree._Element, ctx: GeometryContext, *, visual: bool) -> Shape | None:
    problems = ctx.problems
    kind = element.tag
    if kind == "box":
        size = floats(element.get("size"), 3, problems, element, "size")
        return None if size is None else Shape(kind="box", size=size)
    if kind == "sphere":
        radius = number(element.get("radius"), problems, element, "radius")
        return None if radius is None else Shape(kind="sphere", radius=radius)
    if kind == "cylinder":
        radius = number(element.get("radius"), problems, element, "radius")
        length = number(element.get("length"), problems, element, "length")
        if radius is None or length is None:
            return None
        return Shape(kind="cylinder", radius=radius, height=length)
    if kind == "capsule":  # an extension some simulators read: axis Z like the cylinder
        radius = number(element.get("radius"), problems, element, "radius")
        length = number(element.get("length"), problems, element, "length")
        if radius is None or length is None:
            return None
        return Shape(kind="capsule", radius=radius, height=length)
    if kind == "plane":  # the same kind of extension: an infinite plane through the origin
        normal = floats(element.get("normal", "0 0 1"), 3, problems, element, "normal")
        if normal is None or not np.linalg.norm(normal):
            return None
        return Shape(kind="plane", rotation=_z_onto(normal / np.linalg.norm(normal)))
    if kind == "mesh":
        return _mesh(element, ctx, visual)
    return None


def _z_onto(normal: np.ndarray) -> np.ndarray:
    """A rotation taking +Z onto ``normal`` (a unit vector)."""
    z = np.array([0.0, 0.0, 1.0])
    axis = np.cross(z, normal)
    if np.linalg.norm(axis) < 1e-12:
        return np.eye(3) if normal[2] > 0 else axis_angle_matrix(np.array([1.0, 0.0, 0.0]), math.pi)
    return axis_angle_matrix(axis, math.acos(float(np.clip(normal @ z, -1.0, 1.0))))


def _mesh(element: etree._Element, ctx: GeometryContext, visual: bool) -> Shape | None:
    filename = element.get("filename")
    if not filename:
        ctx.problems.add(element, "mesh without a filename")
        return None
    scale = floats(element.get("scale", "1 1 1"), 3, ctx.problems, element, "scale")
    found, tried = resolve_resource(filename, ctx.urdf_path)
    try:
        if found is None:
            raise MeshError(f"mesh {filename!r} not found; tried: {', '.join(str(p) for p in tried)}")
        vertices, triangles = ctx.mesh(found, scale)
    except MeshError as exc:
        if visual and ctx.problems.tolerant:
            ctx.problems.warn(element, f"{exc}; this visual is left out (the physics does not use it)")
        else:
            ctx.problems.add(element, str(exc))
        return None
    if str(found) not in ctx.files:
        ctx.files.append(str(found))
    return Shape(kind="mesh", vertices=vertices, triangles=triangles)


def resolve_resource(url: str, urdf_path: Path) -> tuple[Path | None, list[Path]]:
    """The file a URDF url names, and every path tried on the way.

    ``package://NAME/REST`` is looked for in each ROS_PACKAGE_PATH entry (as ENTRY/NAME/REST, or
    ENTRY/REST when the entry is itself the package), then in the folders above the URDF file
    (a folder called NAME, or one holding NAME). ``file://`` urls are absolute; anything else is
    relative to the URDF file's folder, or failing that to a folder above it."""
    candidates = _candidates(url, urdf_path)
    for candidate in candidates:
        if may_read(candidate) and candidate.is_file():  # outside the folders: never looked at
            return candidate.resolve(), candidates
    return None, candidates


def _candidates(url: str, urdf_path: Path) -> list[Path]:
    if url.startswith("file://"):
        return [Path(url[len("file://") :])]
    if not url.startswith("package://"):
        relative = Path(url)
        if relative.is_absolute():
            return [relative]
        # relative to the file; then, as simulators with a search path do, to the folders above it
        return [folder / relative for folder in [urdf_path.parent, *urdf_path.parent.resolve().parents]]
    package, _, rest = url[len("package://") :].lstrip("/").partition("/")
    paths: list[Path] = []
    for entry in os.environ.get("ROS_PACKAGE_PATH", "").split(os.pathsep):
        if entry:
            base = Path(entry)
            paths += [base / package / rest] + ([base / rest] if base.name == package else [])
    for folder in [urdf_path.parent.resolve(), *urdf_path.parent.resolve().parents]:
        if folder.name == package:
            paths.append(folder / rest)
        paths.append(folder / package / rest)
    return paths
