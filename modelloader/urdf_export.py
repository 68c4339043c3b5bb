"""BodyInfo to URDF: any loaded model (VRML, URDF, COLLADA) written as a URDF file.

Joints are written in controller (joint_id) order first, so that reading the file back gives the
same controller order. Meshes (and shapes URDF has no primitive for: cones, capsules) are written
as binary STL files in a ``<name>_meshes`` folder beside the URDF.

Written so that other tools load the robot the simulator has:

- a free root is the file's root link, with no ``world`` link: PyBullet, Gazebo and urdfdom load
  such a root free (a ``floating`` joint from ``world`` makes PyBullet fix the base). Its pose in
  the source file, which URDF has no place for, goes to ``<hrpsim:root_origin>``. MuJoCo instead
  merges a root without a joint into its world and frees only a root that a ``floating`` joint
  holds to ``world``: ``floating_joint=True`` writes that form, at the root's pose. A fixed root
  hangs from ``world`` by a fixed joint at its pose;
- limits only where the model has them: a rotating joint without position limits is
  ``continuous`` and has no ``<limit>`` unless it has a velocity or effort limit. Where URDF
  requires a bound the model lacks (urdfdom wants both ``effort`` and ``velocity`` in a
  ``<limit>``, and position bounds on prismatic joints), it is written as 1e30, which readers take
  as "no limit" rather than 0, which they read as "no torque";
- gear ratio and rotor inertia in a ROS ``<transmission>``: ``mechanicalReduction`` for ROS, and
  Drake's ``drake:gear_ratio`` / ``drake:rotor_inertia`` in its actuator, which hrpsim reads back.

What URDF cannot say is left out: sensors, extra joints (closed loops), motor parameters other
than gear ratio and rotor inertia, planes, and the ``crawler`` joint type (written as ``fixed``).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
from lxml import etree

from hrpsim.bodyinfo import Body, Link, Shape
from hrpsim.modelloader.urdf import DRAKE_NAMESPACE
from hrpsim.modelloader.urdf import NO_LIMIT as HUGE_LIMIT  # URDF has no infinite limits
from hrpsim.modelloader.urdf_geometry import CYLINDER_TO_Y
from hrpsim.modelloader.urdf_tolerance import HRPSIM_NAMESPACE
from hrpsim.modelloader.urdf_xml import matrix_rpy
from hrpsim.transforms import axis_angle_matrix


def write_urdf(body: Body, path: str | Path, *, file_urls: bool = False, floating_joint: bool = False) -> Path:
    """Write ``body`` to ``path`` (meshes beside it); return the path written.

    Mesh files are named relative to the URDF, or as absolute ``file://`` urls with
    ``file_urls`` (what ROS tools, which do not take relative names, need). A free root hangs
    from ``world`` by a ``floating`` joint with ``floating_joint`` (what MuJoCo needs to leave it
    free), else it is the file's root (what PyBullet needs)."""
    path = Path(path).resolve()
    path.parent.mkdir(parents=True, exist_ok=True)
    writer = _UrdfWriter(body, path, file_urls, floating_joint)
    tree = writer.build()
    path.write_bytes(etree.tostring(tree, pretty_print=True, xml_declaration=True, encoding="utf-8"))
    return path


def _num(value: float) -> str:
    return repr(float(value))


def _vector(values: np.ndarray) -> str:
    return " ".join(_num(v) for v in np.asarray(values, dtype=np.float64).reshape(-1))


class _UrdfWriter:
    def __init__(self, body: Body, path: Path, file_urls: bool, floating_joint: bool) -> None:
        self.body = body
        self.path = path
        self.file_urls = file_urls
        self.floating_joint = floating_joint
        self.mesh_dir = path.parent / f"{path.stem}_meshes"
        self.mesh_count = 0

    def build(self) -> etree._Element:
        namespaces = {"drake": DRAKE_NAMESPACE, "hrpsim": HRPSIM_NAMESPACE}
        robot = etree.Element("robot", name=self.body.name or self.path.stem, nsmap=namespaces)
        robot.append(etree.Comment(f" written by hrpsim from {self.body.format or 'a model'} {self.body.source} "))
        root = self.body.root
        # a root called "world" is the ground itself; any other fixed root hangs from it
        anchored = root.name != "world" and (root.joint_type == "fixed" or self.floating_joint)
        if anchored:
            robot.append(etree.Element("link", name="world"))
        elif root.name != "world" and not _is_identity(root):
            pose = {"xyz": _vector(root.translation), "rpy": _vector(matrix_rpy(root.rotation))}
            etree.SubElement(robot, f"{{{HRPSIM_NAMESPACE}}}root_origin", pose)
        for link in self.body.links:
            robot.append(self._link(link))
        if anchored:
            robot.append(self._root_joint(root))
        for link in self._joint_order():
            robot.append(self._joint(link))
        for link in self._joint_order():
            if (link.gear_ratio != 1.0 or link.rotor_inertia) and link.joint_type in ("rotate", "slide"):
                robot.append(_transmission(link))
        return robot

    # --- links ---------------------------------------------------------------------------------

    def _link(self, link: Link) -> etree._Element:
        element = etree.Element("link", name=link.name)
        if link.mass > 0.0:
            inertial = etree.SubElement(element, "inertial")
            etree.SubElement(inertial, "origin", xyz=_vector(link.com), rpy="0 0 0")
            etree.SubElement(inertial, "mass", value=_num(link.mass))
            i = link.inertia
            etree.SubElement(
                inertial, "inertia",
                ixx=_num(i[0, 0]), ixy=_num(i[0, 1]), ixz=_num(i[0, 2]),
                iyy=_num(i[1, 1]), iyz=_num(i[1, 2]), izz=_num(i[2, 2]),
            )  # fmt: skip
        for index, shape in enumerate(link.visuals or link.shapes):
            self._geometry(element, "visual", shape, f"{link.name}_visual{index}")
        for index, shape in enumerate(link.shapes):
            self._geometry(element, "collision", shape, f"{link.name}_collision{index}")
        return element

    def _geometry(self, parent: etree._Element, role: str, shape: Shape, label: str) -> None:
        rotation, translation = shape.rotation, shape.translation
        if shape.kind == "plane":
            parent.append(etree.Comment(f" {label}: an infinite plane has no URDF form; left out "))
            return
        holder = etree.Element(role)
        geometry = etree.Element("geometry")
        if shape.kind == "box":
            etree.SubElement(geometry, "box", size=_vector(shape.size))
        elif shape.kind == "sphere":
            etree.SubElement(geometry, "sphere", radius=_num(shape.radius))
        elif shape.kind == "cylinder":
            rotation = rotation @ CYLINDER_TO_Y.T  # back onto URDF's Z axis
            etree.SubElement(geometry, "cylinder", radius=_num(shape.radius), length=_num(shape.height))
        else:
            filename = self._mesh_file(shape, label)
            if filename is None:
                return
            etree.SubElement(geometry, "mesh", filename=filename)
        etree.SubElement(holder, "origin", xyz=_vector(translation), rpy=_vector(matrix_rpy(rotation)))
        holder.append(geometry)
        if role == "visual":
            material = etree.SubElement(holder, "material", name=f"{label}_material")
            alpha = 1.0 - shape.appearance.transparency
            etree.SubElement(material, "color", rgba=_vector([*shape.appearance.diffuse, alpha]))
        parent.append(holder)

    def _mesh_file(self, shape: Shape, label: str) -> str | None:
        import trimesh  # slow to import; only models with meshes need it

        vertices, triangles = _triangles(shape)
        if len(triangles) == 0:
            return None
        self.mesh_dir.mkdir(parents=True, exist_ok=True)
        target = self.mesh_dir / f"{label}.stl"
        trimesh.Trimesh(vertices=vertices, faces=triangles, process=False).export(target)
        self.mesh_count += 1
        return target.as_uri() if self.file_urls else f"{self.mesh_dir.name}/{target.name}"

    # --- joints --------------------------------------------------------------------------------

    def _joint_order(self) -> list[Link]:
        """Controller joints in joint_id order, then every other joint in link order."""
        children = self.body.links[1:]
        with_id = sorted((lk for lk in children if lk.joint_id >= 0), key=lambda lk: lk.joint_id)
        return with_id + [lk for lk in children if lk.joint_id < 0]

    def _root_joint(self, root: Link) -> etree._Element:
        name = root.joint_name if root.joint_name and root.joint_name != root.name else f"world_to_{root.name}"
        element = etree.Element("joint", name=name, type="fixed" if root.joint_type == "fixed" else "floating")
        self._origin(element, root)
        etree.SubElement(element, "parent", link="world")
        etree.SubElement(element, "child", link=root.name)
        return element

    def _joint(self, link: Link) -> etree._Element:
        kind = _urdf_type(link)
        element = etree.Element("joint", name=link.joint_label, type=kind)
        self._origin(element, link)
        etree.SubElement(element, "parent", link=self.body.links[link.parent].name)
        etree.SubElement(element, "child", link=link.name)
        if kind in ("revolute", "continuous", "prismatic"):
            etree.SubElement(element, "axis", xyz=_vector(link.joint_axis))
            limit = _limit(link, kind)
            if limit is not None:
                element.append(limit)
            if link.mimic is not None:
                etree.SubElement(
                    element, "mimic", joint=link.mimic.joint,
                    multiplier=_num(link.mimic.multiplier), offset=_num(link.mimic.offset),
                )  # fmt: skip
        if link.joint_type == "crawler":
            element.append(etree.Comment(" a crawler joint in the source model; URDF has no such type "))
        return element

    @staticmethod
    def _origin(element: etree._Element, link: Link) -> None:
        etree.SubElement(element, "origin", xyz=_vector(link.translation), rpy=_vector(matrix_rpy(link.rotation)))


def _limit(link: Link, kind: str) -> etree._Element | None:
    """The joint's ``<limit>``: the bounds the model has, 1e30 for those URDF requires but the
    model lacks; None for a continuous joint that has none at all."""
    effort = _symmetric(link.torque_lower, link.torque_upper)
    velocity = _symmetric(link.dq_lower, link.dq_upper)
    if kind == "continuous" and math.isinf(effort) and math.isinf(velocity):
        return None
    limit = etree.Element("limit")
    if kind != "continuous":
        limit.set("lower", _num(max(link.q_lower, -HUGE_LIMIT)))
        limit.set("upper", _num(min(link.q_upper, HUGE_LIMIT)))
    limit.set("effort", _num(min(effort, HUGE_LIMIT)))
    limit.set("velocity", _num(min(velocity, HUGE_LIMIT)))
    return limit


def _transmission(link: Link) -> etree._Element:
    """The joint's gear ratio and rotor inertia: a ROS simple transmission's mechanical reduction,
    and Drake's tags in its actuator (the reflected inertia is rotor_inertia * gear_ratio^2)."""
    element = etree.Element("transmission", name=f"{link.joint_label}_transmission")
    etree.SubElement(element, "type").text = "transmission_interface/SimpleTransmission"
    joint = etree.SubElement(element, "joint", name=link.joint_label)
    etree.SubElement(joint, "hardwareInterface").text = "hardware_interface/EffortJointInterface"
    actuator = etree.SubElement(element, "actuator", name=f"{link.joint_label}_motor")
    etree.SubElement(actuator, "mechanicalReduction").text = _num(link.gear_ratio)
    etree.SubElement(actuator, f"{{{DRAKE_NAMESPACE}}}gear_ratio", value=_num(link.gear_ratio))
    etree.SubElement(actuator, f"{{{DRAKE_NAMESPACE}}}rotor_inertia", value=_num(link.rotor_inertia))
    return element


def _urdf_type(link: Link) -> str:
    if link.joint_type == "rotate":
        unlimited = math.isinf(link.q_lower) and math.isinf(link.q_upper) and link.mimic is None
        return "continuous" if unlimited else "revolute"
    return {"slide": "prismatic", "free": "floating"}.get(link.joint_type, "fixed")


def _symmetric(lower: float, upper: float) -> float:
    """The one bound URDF keeps for a two-sided velocity or effort limit (inf when unlimited)."""
    return min(abs(lower), abs(upper))


def _is_identity(link: Link) -> bool:
    return bool(np.allclose(link.translation, 0.0) and np.allclose(link.rotation, np.eye(3)))


def _triangles(shape: Shape) -> tuple[np.ndarray, np.ndarray]:
    """A mesh for shapes URDF cannot write as primitives (cone, capsule) or meshes as they are."""
    import trimesh

    if shape.kind == "mesh":
        return shape.vertices, shape.triangles
    y_axis = axis_angle_matrix(np.array([1.0, 0.0, 0.0]), -math.pi / 2)  # trimesh's Z onto BodyInfo's Y
    if shape.kind == "cone":
        solid = trimesh.creation.cone(radius=shape.radius, height=shape.height)
        solid.apply_translation([0.0, 0.0, -shape.height / 2.0])  # BodyInfo cones are centred
    elif shape.kind == "capsule":
        solid = trimesh.creation.capsule(height=shape.height, radius=shape.radius)
    else:
        return np.zeros((0, 3)), np.zeros((0, 3), dtype=np.int32)
    vertices = np.asarray(solid.vertices) @ y_axis.T
    return vertices, np.asarray(solid.faces, dtype=np.int32)
