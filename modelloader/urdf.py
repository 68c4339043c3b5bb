"""URDF reader: a ``<robot>`` file into a BodyInfo Body.

Links are ordered pre-order from the root, children in the file order of their joints; controller
order (joint_id) is the file order of movable joints that do not mimic another. A root attached
to a link called ``world`` by a fixed joint becomes a fixed root (a floating one, a free root).
Every problem in the file is collected and reported at once, each with its line and element path.
What ROS, PyBullet or Gazebo read anyway is read the same way, with one warning per deviation
saying what was assumed (urdf_tolerance.py, and in this file: massless links, mimics and
transmissions naming no joint, reductions that are not numbers); the warnings are kept in
``Body.metadata["warnings"]``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from lxml import etree

from hrpsim.bodyinfo import Body, Link, Mimic
from hrpsim.modelloader.openhrp_mass import MAX_LINK_MASS_KG, inertia_problem, nearest_inertia
from hrpsim.modelloader.urdf_geometry import GeometryContext, collect_materials, material_of, read_origin, read_shape
from hrpsim.modelloader.urdf_tolerance import HRPSIM_NAMESPACE, expand_leftovers, warn_unknown
from hrpsim.modelloader.urdf_xml import Problems, floats, local_name, number, parse_xml, read_file

JOINT_TYPES = {"revolute": "rotate", "continuous": "rotate", "prismatic": "slide", "fixed": "fixed", "floating": "free"}
MOVABLE = ("revolute", "continuous", "prismatic")
WORLD = "world"
NO_LIMIT = 1e30  # a bound this large means "unlimited"
DRAKE_NAMESPACE = "http://drake.mit.edu"


@dataclass
class _Joint:
    element: etree._Element
    name: str
    type: str
    parent: str
    child: str
    rotation: np.ndarray = field(default_factory=lambda: np.eye(3))
    translation: np.ndarray = field(default_factory=lambda: np.zeros(3))


def load_urdf(path: str | Path) -> Body:
    """Read a URDF file; raise ModelError listing every problem found (file:line: element path)."""
    path = Path(path).resolve()
    problems = Problems(path, "URDF", tolerant=True)
    robot = parse_xml(read_file(path, "URDF"), path, "URDF", problems)
    return _UrdfReader(path, robot, problems).read()


class _UrdfReader:
    def __init__(self, path: Path, robot: etree._Element, problems: Problems) -> None:
        self.path = path
        self.robot = robot
        self.problems = problems
        self.geometry = GeometryContext(path, self.problems, files=[str(path)])
        self.links: dict[str, Link] = {}
        self.joints: list[_Joint] = []

    def read(self) -> Body:
        if self.robot.tag != "robot":
            self.problems.add(self.robot, f"root element is <{self.robot.tag}>, expected <robot>")
            self.problems.raise_if_any()
        expand_leftovers(self.robot, self.problems)
        warn_unknown(self.robot, self.problems)
        collect_materials(self.robot, self.geometry)
        for element in self.robot.findall("link"):
            self._read_link(element)
        joint_links = {}
        for element in self.robot.findall("joint"):
            joint = self._read_joint(element)
            if joint is not None:
                joint_links[joint.name] = self._joint_link(joint)
        self._check_mimics(joint_links)
        self._read_transmissions(joint_links)
        ordered = self._tree_order()
        self.problems.raise_if_any()
        return self._body(ordered, joint_links)

    # --- links -------------------------------------------------------------------------------

    def _read_link(self, element: etree._Element) -> None:
        name = element.get("name")
        if not name:
            self.problems.add(element, "link without a name")
            return
        if name in self.links:
            self.problems.add(element, f"link {name!r} is defined twice")
            return
        link = Link(name=name)
        inertial = element.find("inertial")
        if inertial is not None:
            self._read_inertial(inertial, link)
        for visual in element.findall("visual"):
            shape = read_shape(visual, self.geometry, material_of(visual, self.geometry))
            if shape is not None:
                link.visuals.append(shape)
        for collision in element.findall("collision"):
            shape = read_shape(collision, self.geometry)
            if shape is not None:
                link.shapes.append(shape)
        self.links[name] = link

    def _read_inertial(self, inertial: etree._Element, link: Link) -> None:
        rotation, com = read_origin(inertial.find("origin"), self.problems)
        mass_element = inertial.find("mass")
        if mass_element is None:
            self.problems.add(inertial, "<inertial> without <mass>")
        else:
            mass = number(mass_element.get("value"), self.problems, mass_element, "mass value")
            if mass is not None and mass < 0.0:
                self.problems.add(mass_element, f"mass {mass} is negative")
            elif mass is not None and not mass <= MAX_LINK_MASS_KG:
                self.problems.add(mass_element, f"mass {mass:g} is beyond {MAX_LINK_MASS_KG:g} kg (or not finite)")
            elif mass == 0.0:  # usual for a fixed base or a dummy link
                self.problems.warn(mass_element, "mass 0: a massless link (it moves with its parent's mass)")
            elif mass is not None:
                link.mass = mass
        link.com = com
        element = inertial.find("inertia")
        if element is None:
            self.problems.add(inertial, "<inertial> without <inertia>")
            return
        names = ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")
        values = [number(element.get(n), self.problems, element, n, default=0.0) for n in names]
        if any(v is None for v in values):
            return
        ixx, ixy, ixz, iyy, iyz, izz = values
        tensor = np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]], dtype=np.float64)
        why = inertia_problem(tensor)
        if why:  # PyBullet reads only the diagonal and urdfdom does not look: the file loads there
            self.problems.warn(
                element,
                f"{why}: its nearest positive semi-definite tensor used (negative "
                "eigenvalues set to 0); give the tensor about the centre of mass in "
                "the <origin> frame",
            )
            tensor = nearest_inertia(tensor)
        # the inertial frame may be rotated; BodyInfo keeps the tensor in the link frame
        link.inertia = rotation @ tensor @ rotation.T

    # --- joints ------------------------------------------------------------------------------

    def _read_joint(self, element: etree._Element) -> _Joint | None:
        name = element.get("name")
        kind = element.get("type")
        ok = True
        if not name:
            self.problems.add(element, "joint without a name")
            ok = False
        elif any(j.name == name for j in self.joints):
            self.problems.add(element, f"joint {name!r} is defined twice")
            ok = False
        if kind == "planar":
            self.problems.add(element, "planar joints are not supported (use two prismatic joints and a revolute one)")
            ok = False
        elif kind not in JOINT_TYPES:
            self.problems.add(element, f"unknown joint type {kind!r} (expected one of {', '.join(JOINT_TYPES)})")
            ok = False
        parent = self._link_ref(element, "parent")
        child = self._link_ref(element, "child")
        if not ok or parent is None or child is None:
            return None
        rotation, translation = read_origin(element.find("origin"), self.problems)
        joint = _Joint(element, name, kind, parent, child, rotation, translation)
        self.joints.append(joint)
        return joint

    def _link_ref(self, element: etree._Element, role: str) -> str | None:
        ref = element.find(role)
        if ref is None or not ref.get("link"):
            self.problems.add(element, f"joint without <{role} link=...>")
            return None
        name = ref.get("link")
        if name not in self.links and name != WORLD:
            self.problems.add(ref, f"{role} link {name!r} is not defined in this file")
            return None
        return name

    def _joint_link(self, joint: _Joint) -> Link:
        """The joint's fields, to be copied onto its child link once the tree is known."""
        element = joint.element
        link = Link(name=joint.child, joint_name=joint.name, joint_type=JOINT_TYPES[joint.type])
        link.rotation, link.translation = joint.rotation, joint.translation
        if joint.type in MOVABLE:
            axis_element = element.find("axis")
            axis = np.array([1.0, 0.0, 0.0])
            if axis_element is not None:
                read = floats(axis_element.get("xyz", "1 0 0"), 3, self.problems, axis_element, "axis xyz")
                if read is not None and np.linalg.norm(read) == 0.0:
                    self.problems.add(axis_element, "joint axis is the zero vector")
                elif read is not None:
                    axis = read / np.linalg.norm(read)
            link.joint_axis = axis
            self._read_limits(joint, link)
        mimic = element.find("mimic")
        if mimic is not None and joint.type in MOVABLE:
            multiplier = number(mimic.get("multiplier"), self.problems, mimic, "multiplier", default=1.0)
            offset = number(mimic.get("offset"), self.problems, mimic, "offset", default=0.0)
            link.mimic = Mimic(joint=mimic.get("joint", ""), multiplier=multiplier or 0.0, offset=offset or 0.0)
        return link

    def _read_limits(self, joint: _Joint, link: Link) -> None:
        limit = joint.element.find("limit")
        if limit is None:
            if joint.type != "continuous":
                self.problems.warn(joint.element, f"{joint.type} joint without <limit>: left unlimited")
            return
        if joint.type != "continuous":
            lower = number(limit.get("lower"), self.problems, limit, "lower", default=0.0) or 0.0
            upper = number(limit.get("upper"), self.problems, limit, "upper", default=0.0) or 0.0
            if lower > upper:  # some simulators' way of writing "no limit"
                self.problems.warn(limit, f"lower limit {lower} is above upper limit {upper}: taken as unlimited")
                lower, upper = -np.inf, np.inf
            # URDF cannot write an infinite bound; writers (ours included) use a huge number
            link.q_lower = -np.inf if lower <= -NO_LIMIT else lower
            link.q_upper = np.inf if upper >= NO_LIMIT else upper
        # a velocity or effort of zero (or none) means "not given", not "cannot move"
        velocity = number(limit.get("velocity"), self.problems, limit, "velocity", default=0.0) or 0.0
        effort = number(limit.get("effort"), self.problems, limit, "effort", default=0.0) or 0.0
        if 0.0 < velocity < NO_LIMIT:
            link.dq_lower, link.dq_upper = -velocity, velocity
        if 0.0 < effort < NO_LIMIT:
            link.torque_lower, link.torque_upper = -effort, effort

    def _check_mimics(self, joint_links: dict[str, Link]) -> None:
        """Every mimic names a movable joint; a mimic of a mimic is resolved to the independent
        joint at the end of the chain (q = m1 (m2 q + o2) + o1), a closed chain is an error."""
        for joint in self.joints:
            link = joint_links[joint.name]
            if link.mimic is None:
                continue
            where = joint.element.find("mimic")
            multiplier, offset, seen = link.mimic.multiplier, link.mimic.offset, {joint.name}
            source = joint_links.get(link.mimic.joint)
            while source is not None and source.mimic is not None and source.joint_name not in seen:
                seen.add(source.joint_name)
                multiplier, offset = multiplier * source.mimic.multiplier, multiplier * source.mimic.offset + offset
                source = joint_links.get(source.mimic.joint)
            if source is None or source.joint_type not in ("rotate", "slide"):
                self.problems.warn(
                    where,
                    f"mimic names {link.mimic.joint!r}, not a movable joint of this file: "
                    "the joint is read as an independent one",
                )
                link.mimic = None
            elif source.mimic is not None:
                self.problems.add(where, f"mimic joints {sorted(seen)} mimic each other in a circle")
            else:
                link.mimic = Mimic(source.joint_name, multiplier, offset)

    def _read_transmissions(self, joint_links: dict[str, Link]) -> None:
        """A transmission's gear ratio (OpenHRP gearRatio) and motor rotor inertia: Drake's
        ``drake:gear_ratio`` and ``drake:rotor_inertia`` in its actuator, else ROS's
        mechanicalReduction. Anything else in the block is for other tools."""
        for transmission in self.robot.findall("transmission"):
            joint = transmission.find("joint")
            if joint is None:
                continue
            link = joint_links.get(joint.get("name", ""))
            if link is None:
                self.problems.warn(joint, f"transmission names no joint of this file ({joint.get('name')!r}); ignored")
                continue
            actuator = transmission.find("actuator")
            reduction = transmission.find("actuator/mechanicalReduction")
            if reduction is None:
                reduction = transmission.find("mechanicalReduction")  # the older layout
            drake_ratio = _drake_element(actuator, "gear_ratio")
            ratio = self._transmission_value(drake_ratio if drake_ratio is not None else reduction)
            if ratio is not None:
                link.gear_ratio = ratio
            rotor = self._transmission_value(_drake_element(actuator, "rotor_inertia"))
            if rotor is not None:
                link.rotor_inertia = rotor

    def _transmission_value(self, element: etree._Element | None) -> float | None:
        """The number in a ``value`` attribute or the text; one that is not a number is ignored
        with a warning (files carry placeholders such as ``reduction``)."""
        if element is None:
            return None
        text = (element.get("value") if element.get("value") is not None else element.text or "").strip()
        try:
            return float(text)
        except ValueError:
            self.problems.warn(element, f"{local_name(element)} {text!r} is not a number; ignored")
            return None

    # --- tree --------------------------------------------------------------------------------

    def _tree_order(self) -> list[str]:
        """Link names in pre-order from the root (children in joint file order); records two
        parents, several roots and cycles as problems."""
        parent_joint: dict[str, _Joint] = {}
        for joint in self.joints:
            if joint.child in parent_joint:
                first = parent_joint[joint.child].name
                self.problems.add(joint.element, f"link {joint.child!r} already has parent joint {first!r}")
            else:
                parent_joint[joint.child] = joint
        names = list(self.links)
        if WORLD not in self.links and any(j.parent == WORLD for j in self.joints):
            names.append(WORLD)
        roots = [name for name in names if name not in parent_joint]
        if not names:
            self.problems.add(self.robot, "the robot has no links")
            return []
        if len(roots) != 1:
            listed = ", ".join(repr(r) for r in roots) or "none (every link is some joint's child: a cycle)"
            self.problems.add(self.robot, f"a robot needs exactly one root link; found {listed}")
            if not roots:
                return []
        order = self._preorder(roots[0])
        unreached = [name for name in names if name not in order and name not in roots]
        if unreached and len(roots) == 1:
            message = f"links {unreached} form a cycle and are not reachable from root {roots[0]!r}"
            self.problems.add(self.robot, message)
        return order

    def _preorder(self, root: str) -> list[str]:
        children: dict[str, list[str]] = {}
        for joint in self.joints:
            children.setdefault(joint.parent, []).append(joint.child)
        order: list[str] = []
        stack = [root]
        seen = set()
        while stack:
            name = stack.pop()
            if name in seen:
                continue
            seen.add(name)
            order.append(name)
            stack.extend(reversed(children.get(name, [])))
        return order

    # --- assembly ----------------------------------------------------------------------------

    def _body(self, order: list[str], joint_links: dict[str, Link]) -> Body:
        by_child = {joint.child: joint for joint in self.joints}
        order, root_joint = self._strip_world(order, by_child)
        index = {name: i for i, name in enumerate(order)}
        links: list[Link] = []
        for name in order:
            link = self.links[name]
            joint = by_child.get(name)
            if joint is not None and joint is not root_joint:
                _copy_joint(joint_links[joint.name], link)
                link.parent = index[joint.parent]
            links.append(link)
        root = links[0]
        if root_joint is None:
            root.joint_type = "fixed" if root.name == WORLD else "free"
        else:
            _copy_joint(joint_links[root_joint.name], root)
            root.joint_type = "fixed" if root_joint.type == "fixed" else "free"
        root.parent = -1
        next_id = 0
        for joint in self.joints:  # controller order: file order of independent movable joints
            link = links[index[joint.child]] if joint.child in index else None
            if link is not None and joint.type in MOVABLE and link.mimic is None and link is not root:
                link.joint_id = next_id
                next_id += 1
        body = Body(name=self.robot.get("name", self.path.stem), links=links, source=str(self.path), format="urdf")
        body.metadata["files"] = list(dict.fromkeys(self.geometry.files))
        body.static = self._gazebo_static()
        self._read_root_origin(root)
        if self.problems.warnings:
            body.metadata["warnings"] = list(self.problems.warnings)
        return body

    def _gazebo_static(self) -> bool:
        """Gazebo's ``<gazebo><static>true</static></gazebo>``: a model that never moves."""
        flags = [e.text for e in self.robot.findall("gazebo/static")]
        return any((flag or "").strip().lower() in ("true", "1") for flag in flags)

    def _read_root_origin(self, root: Link) -> None:
        """The root's pose in its file (written by hrpsim for a free root, which URDF cannot place)."""
        element = self.robot.find(f"{{{HRPSIM_NAMESPACE}}}root_origin")
        if element is not None and root.joint_type == "free":
            root.rotation, root.translation = read_origin(element, self.problems)

    def _strip_world(self, order: list[str], by_child: dict[str, _Joint]) -> tuple[list[str], _Joint | None]:
        """Drop a ``world`` root that holds one fixed or floating joint: it is the ground, not a
        link. Any other ``world`` root stays as a massless fixed link."""
        if not order or order[0] != WORLD:
            return order, None
        below = [j for j in self.joints if j.parent == WORLD]
        if len(below) == 1 and below[0].type in ("fixed", "floating"):
            return order[1:], below[0]
        self.links.setdefault(WORLD, Link(name=WORLD))
        self.links[WORLD].joint_type = "fixed"
        return order, None


def _drake_element(actuator: etree._Element | None, name: str) -> etree._Element | None:
    """``<drake:NAME>`` in an actuator, with or without the drake namespace declared."""
    if actuator is None:
        return None
    wanted = (f"{{{DRAKE_NAMESPACE}}}{name}", f"drake:{name}")  # the second: read with an undeclared prefix
    return next((child for child in actuator if child.tag in wanted), None)


def _copy_joint(source: Link, target: Link) -> None:
    for name in (
        "joint_name",
        "joint_type",
        "joint_axis",
        "translation",
        "rotation",
        "q_lower",
        "q_upper",
        "dq_lower",
        "dq_upper",
        "torque_lower",
        "torque_upper",
        "mimic",
        "gear_ratio",
        "rotor_inertia",
    ):
        setattr(target, name, getattr(source, name))


__all__ = ["load_urdf"]
