"""What real URDF files carry beyond the format, read as ROS, PyBullet and Gazebo read it.

Two passes over the parsed file before it is read, each deviation a warning with its line:

- leftovers of xacro in attribute values: ``$(optenv NAME default)`` becomes the variable's value
  or the default, ``$(env NAME)`` the variable's value, ``$(find PKG)`` a ``package://PKG`` url;
  ``${...}`` expressions and ``$(arg ...)`` need xacro itself and stay errors;
- elements and attributes the format does not define are ignored. ``<gazebo>`` and
  ``<transmission>`` blocks are free-form: the reader takes what it uses from them and nothing
  there is checked.
"""

from __future__ import annotations

import os
import re

from lxml import etree

from hrpsim.modelloader.urdf_xml import Problems, local_name

ORIGIN = ({"xyz", "rpy"}, set())
# element -> (its attributes, its child elements), as the URDF format defines them
SCHEMA: dict[str, tuple[set[str], set[str]]] = {
    "robot": ({"name", "version"}, {"link", "joint", "material", "transmission", "gazebo"}),
    "link": ({"name", "type"}, {"inertial", "visual", "collision"}),
    "inertial": (set(), {"origin", "mass", "inertia"}),
    "origin": ORIGIN,
    "mass": ({"value"}, set()),
    "inertia": ({"ixx", "ixy", "ixz", "iyy", "iyz", "izz"}, set()),
    "visual": ({"name"}, {"origin", "geometry", "material"}),
    "collision": ({"name"}, {"origin", "geometry"}),
    "geometry": (set(), {"box", "cylinder", "sphere", "mesh", "capsule", "plane"}),
    "box": ({"size"}, set()),
    "cylinder": ({"radius", "length"}, set()),
    "capsule": ({"radius", "length"}, set()),
    "sphere": ({"radius"}, set()),
    "plane": ({"normal"}, set()),
    "mesh": ({"filename", "scale"}, set()),
    "material": ({"name"}, {"color", "texture"}),
    "color": ({"rgba"}, set()),
    "texture": ({"filename"}, set()),
    "joint": (
        {"name", "type"},
        {"origin", "parent", "child", "axis", "calibration", "dynamics", "limit", "mimic", "safety_controller"},
    ),
    "parent": ({"link"}, set()),
    "child": ({"link"}, set()),
    "axis": ({"xyz"}, set()),
    "calibration": ({"reference_position", "rising", "falling"}, set()),
    "dynamics": ({"damping", "friction"}, set()),
    "limit": ({"lower", "upper", "effort", "velocity"}, set()),
    "mimic": ({"joint", "multiplier", "offset"}, set()),
    "safety_controller": ({"soft_lower_limit", "soft_upper_limit", "k_position", "k_velocity"}, set()),
}
FREE_FORM = ("gazebo", "transmission")
HRPSIM_NAMESPACE = "https://hrpsim.org/urdf"  # our own additions (the root's pose in the file)

_SUBSTITUTION = re.compile(r"\$\((\w+)\s*([^)]*)\)")


def expand_leftovers(robot: etree._Element, problems: Problems) -> None:
    """Resolve xacro substitution arguments left in attribute values (see the module notes)."""
    for element in robot.iter():
        if not isinstance(element.tag, str):
            continue
        for name, value in element.attrib.items():
            if "$(" in value or "${" in value:
                resolved = _expand(value, element, name, problems)
                if resolved is not None:
                    element.set(name, resolved)


def _expand(value: str, element: etree._Element, attribute: str, problems: Problems) -> str | None:
    if "${" in value:
        problems.add(element, f"{attribute} {value!r} is a xacro expression: run xacro on the file first")
        return None
    unresolved: list[str] = []

    def substitute(match: re.Match[str]) -> str:
        command, words = match.group(1), match.group(2).split()
        if command == "optenv" and words:
            return os.environ.get(words[0], " ".join(words[1:]))
        if command == "env" and len(words) == 1 and words[0] in os.environ:
            return os.environ[words[0]]
        if command == "find" and len(words) == 1:
            return f"package://{words[0]}"
        unresolved.append(match.group(0))
        return match.group(0)

    resolved = _SUBSTITUTION.sub(substitute, value)
    if unresolved:
        problems.add(
            element,
            f"{attribute} {value!r}: xacro's {', '.join(unresolved)} cannot be resolved here; "
            "run xacro on the file first",
        )
        return None
    problems.warn(element, f"{attribute} {value!r} is left over from xacro; read as {resolved!r}")
    return resolved


def warn_unknown(robot: etree._Element, problems: Problems) -> None:
    """One warning per element or attribute the format does not define (each is ignored)."""
    _check(robot, problems)


def _check(element: etree._Element, problems: Problems) -> None:
    name = local_name(element)
    attributes, children = SCHEMA[name]
    for attribute in element.attrib:
        if attribute not in attributes and not attribute.startswith("{"):
            problems.warn(element, f"unknown attribute {attribute!r} of <{name}> ignored")
    for child in element:
        if not isinstance(child.tag, str):
            continue
        tag = local_name(child)
        if _namespace(child) == HRPSIM_NAMESPACE:
            continue
        if tag not in children or _namespace(child):
            where = f" inside <{name}>" if tag in SCHEMA else ""
            problems.warn(child, f"unknown element <{_prefixed(child)}>{where} ignored")
        elif tag not in FREE_FORM:
            _check(child, problems)


def _namespace(element: etree._Element) -> str:
    tag = element.tag
    return tag[1:].split("}", 1)[0] if isinstance(tag, str) and tag.startswith("{") else ""


def _prefixed(element: etree._Element) -> str:
    return f"{element.prefix}:{local_name(element)}" if element.prefix else local_name(element)
