"""COLLADA <articulated_system> and the OpenRAVE robot extensions: axis_info (controller index,
active flag, speeds, via newparam/param indirection), manipulators, attached sensors, attached
actuators, collision settings and the interface type. Links and joints are kept as SIDs here; the
model reader turns them into names."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from lxml import etree

from hrpsim.modelloader.collada_geometry import Document, transform
from hrpsim.modelloader.collada_kinematics import last_part
from hrpsim.modelloader.urdf_xml import floats


@dataclass
class AxisInfo:
    index: int | None = None
    active: bool = True
    locked: bool = False
    speed: float | None = None  # file units per second (degrees for revolute joints)


@dataclass
class ManipulatorSpec:
    element: etree._Element
    name: str
    origin_link: str
    tip_link: str
    tip: np.ndarray  # in the tip link's COLLADA frame
    direction: list[float] | None
    gripper_joints: list[str] = field(default_factory=list)
    closing_directions: list[float] = field(default_factory=list)
    ik_solvers: list[str] = field(default_factory=list)


@dataclass
class SensorSpec:
    element: etree._Element
    name: str
    link: str
    pose: np.ndarray  # in the link's COLLADA frame
    definition: etree._Element | None


@dataclass
class ActuatorSpec:
    element: etree._Element
    name: str
    joint: str
    params: dict[str, Any]


@dataclass
class CollisionSpec:
    ignore_pairs: list[tuple[str, str, etree._Element]] = field(default_factory=list)
    bindings: list[tuple[str, str, str, etree._Element]] = field(default_factory=list)  # type, link, url


def systems(document: Document) -> list[etree._Element]:
    return list(document.root.iter("articulated_system"))


def extras(parent: etree._Element, kind: str) -> list[tuple[etree._Element, etree._Element]]:
    """(extra, its OpenRAVE technique) pairs of the given type directly under ``parent``."""
    found = []
    for extra in parent.findall("extra"):
        if extra.get("type") != kind:
            continue
        technique = extra.find("technique[@profile='OpenRAVE']")
        if technique is None:
            technique = extra.find("technique")
        if technique is not None:
            found.append((extra, technique))
    return found


def _value(holder: etree._Element, tag: str) -> Any:
    """The value of ``holder/<tag>``: a literal <bool>/<float>/<int>, or a <param> naming a
    <newparam sid> in the holder or one of its ancestors."""
    element = holder.find(tag)
    if element is None:
        return None
    for child in element:
        if child.tag == "param":
            return _newparam(holder, (child.text or "").strip())
        literal = _literal(child)
        if literal is not None:
            return literal
    return None


def _newparam(start: etree._Element, sid: str) -> Any:
    node: etree._Element | None = start
    while node is not None:
        for newparam in node.findall("newparam"):
            if newparam.get("sid") == sid:
                return next((v for v in map(_literal, newparam) if v is not None), None)
        node = node.getparent()
    return None


def _literal(element: etree._Element) -> Any:
    text = (element.text or "").strip()
    try:
        if element.tag == "bool":
            return text.lower() in ("true", "1")
        if element.tag == "int":
            return int(text)
        if element.tag == "float":
            return float(text)
    except ValueError:
        return None
    return None


def read_axis_infos(document: Document) -> dict[str, AxisInfo]:
    """Per joint SID: the kinematics axis_info (index, active, locked) and the motion one (speed)."""
    infos: dict[str, AxisInfo] = {}
    by_info_sid: dict[str, str] = {}
    for system in systems(document):
        for element in system.findall("kinematics/technique_common/axis_info"):
            parts = (element.get("axis") or "").strip().split("/")
            joint = parts[-2] if len(parts) >= 2 else parts[-1]
            info = infos.setdefault(joint, AxisInfo())
            by_info_sid[element.get("sid", "")] = joint
            active, locked = _value(element, "active"), _value(element, "locked")
            info.active = True if active is None else bool(active)
            info.locked = bool(locked)
            index = _value(element, "index")
            if index is not None:
                info.index = int(index)
    for system in systems(document):
        for element in system.findall("motion/technique_common/axis_info"):
            joint = by_info_sid.get(last_part(element.get("axis")))
            speed = _value(element, "speed")
            if joint is not None and speed is not None:
                infos[joint].speed = float(speed)
    return infos


def read_manipulators(document: Document) -> list[ManipulatorSpec]:
    found = []
    for system in systems(document):
        for extra, technique in extras(system, "manipulator"):
            origin, tip = technique.find("frame_origin"), technique.find("frame_tip")
            if origin is None or tip is None:
                document.problems.add(extra, "manipulator needs <frame_origin> and <frame_tip>")
                continue
            direction_element = tip.find("direction")
            direction = None
            if direction_element is not None:
                direction = floats(direction_element.text, 3, document.problems, direction_element, "direction")
            spec = ManipulatorSpec(
                extra,
                extra.get("name", ""),
                last_part(origin.get("link")),
                last_part(tip.get("link")),
                transform(tip, document),
                None if direction is None else direction.tolist(),
            )
            for gripper in technique.findall("gripper_joint"):
                spec.gripper_joints.append(last_part(gripper.get("joint")))
                spec.closing_directions.append(_closing_direction(gripper, document))
            spec.ik_solvers = [s.get("type", "") for s in technique.findall("iksolver")]
            found.append(spec)
    return found


def _closing_direction(gripper: etree._Element, document: Document) -> float:
    closing = gripper.find("closing_direction")
    if closing is None:
        closing = gripper.find("chucking_direction")  # the OpenRAVE writer's older name
    value = closing.find("float") if closing is not None else None
    if value is None:
        return 0.0  # the specification's default
    number = floats(value.text, 1, document.problems, value, "closing direction")
    return 0.0 if number is None else float(number[0])


def read_sensors(document: Document) -> list[SensorSpec]:
    found = []
    for system in systems(document):
        for extra, technique in extras(system, "attach_sensor"):
            origin = technique.find("frame_origin")
            instance = technique.find("instance_sensor")
            if origin is None or instance is None:
                document.problems.add(extra, "attach_sensor needs <frame_origin> and <instance_sensor>")
                continue
            definition = document.ref(instance.get("url"), instance, "instance_sensor")
            pose = transform(origin, document)
            found.append(SensorSpec(extra, extra.get("name", ""), last_part(origin.get("link")), pose, definition))
    return found


def read_actuators(document: Document) -> list[ActuatorSpec]:
    found = []
    for system in systems(document):
        for extra, technique in extras(system, "attach_actuator"):
            bind = technique.find("bind_actuator")
            if bind is None:
                document.problems.add(extra, "attach_actuator without <bind_actuator joint=...>")
                continue
            params: dict[str, Any] = {}
            instance = technique.find("instance_actuator")
            if instance is not None:
                definition = document.ref(instance.get("url"), instance, "instance_actuator")
                params = _actuator_params(definition) if definition is not None else {}
            found.append(ActuatorSpec(extra, extra.get("name", ""), last_part(bind.get("joint")), params))
    return found


def _actuator_params(definition: etree._Element) -> dict[str, Any]:
    params: dict[str, Any] = {"type": definition.get("type", "")}
    for child in definition:
        if not isinstance(child.tag, str) or child.tag == "interface_type":
            continue
        text = (child.text or "").strip()
        try:
            params[child.tag] = float(text)
        except ValueError:
            params[child.tag] = text
    return params


def read_collision(model: etree._Element) -> CollisionSpec:
    spec = CollisionSpec()
    for _extra, technique in extras(model, "collision"):
        for pair in technique.findall("ignore_link_pair"):
            spec.ignore_pairs.append((last_part(pair.get("link0")), last_part(pair.get("link1")), pair))
        for bind in technique.findall("bind_instance_geometry"):
            spec.bindings.append((bind.get("type", ""), last_part(bind.get("link")), bind.get("url", ""), bind))
    return spec


def interface_type(document: Document) -> str:
    for holder in [*systems(document), *document.root.iter("kinematics_model")]:
        for _extra, technique in extras(holder, "interface_type"):
            text = technique.findtext("interface")
            if text:
                return text.strip()
    return ""
