"""COLLADA <kinematics_model>: joints, the link tree, each link's frame at zero joint values, and
joint formulas (mimic joints).

A link's frame is its parent's frame times the <attachment_full> transforms (where the joint is,
its axis in that frame) times the link's own transforms. Everything is kept in world coordinates
at zero joint values; the model reader re-expresses it in BodyInfo's link frames."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from lxml import etree

from hrpsim.modelloader.collada_geometry import Document, transform
from hrpsim.modelloader.urdf_xml import floats


@dataclass
class KinJoint:
    sid: str
    name: str
    element: etree._Element
    kind: str  # "revolute" or "prismatic"
    axis: np.ndarray  # in the joint (attachment) frame
    lower: float = -np.inf  # file units: degrees or length units
    upper: float = np.inf


@dataclass
class KinLink:
    sid: str
    name: str
    element: etree._Element
    parent: int = -1
    joint: KinJoint | None = None
    frame: np.ndarray = field(default_factory=lambda: np.eye(4))  # COLLADA link frame in the world
    joint_frame: np.ndarray = field(default_factory=lambda: np.eye(4))  # attachment frame in the world


@dataclass
class LinearFormula:
    """target = multiplier * source + offset (radians or metres)."""

    target: str
    source: str
    multiplier: float
    offset: float


def last_part(reference: str | None) -> str:
    """The final SID of a SIDREF such as ``kmodel1/joint0`` (or the whole string)."""
    return (reference or "").strip().rsplit("/", 1)[-1]


def read_joints(model: etree._Element, document: Document) -> dict[str, KinJoint]:
    joints: dict[str, KinJoint] = {}
    common = model.find("technique_common")
    elements = [] if common is None else list(common)
    for element in elements:
        if element.tag == "instance_joint":
            target = document.ref(element.get("url"), element, "instance_joint")
            if target is None:
                continue
            sid = element.get("sid") or target.get("sid") or target.get("id", "")
            element = target
        elif element.tag == "joint":
            sid = element.get("sid") or element.get("id", "")
        else:
            continue
        joint = _read_joint(element, sid, document)
        if joint is not None:
            joints[sid] = joint
    return joints


def _read_joint(element: etree._Element, sid: str, document: Document) -> KinJoint | None:
    problems = document.problems
    axes = [child for child in element if child.tag in ("revolute", "prismatic")]
    if len(axes) != 1:
        problems.add(element, f"joint {sid!r} has {len(axes)} axes; only single-axis joints are supported")
        return None
    axis_element = axes[0]
    axis = floats(axis_element.findtext("axis"), 3, problems, axis_element, "axis")
    if axis is None:
        return None
    if not np.linalg.norm(axis):
        problems.add(axis_element, "joint axis is the zero vector")
        return None
    joint = KinJoint(sid, element.get("name") or sid, element, axis_element.tag, axis / np.linalg.norm(axis))
    limits = axis_element.find("limits")
    if limits is not None:
        scale = document.meter if joint.kind == "prismatic" else 1.0
        low = floats(limits.findtext("min"), 1, problems, limits, "limits min")
        high = floats(limits.findtext("max"), 1, problems, limits, "limits max")
        if low is not None and high is not None:
            joint.lower, joint.upper = float(low[0]) * scale, float(high[0]) * scale
            if joint.lower > joint.upper:
                problems.add(limits, f"limits min {joint.lower} is above max {joint.upper}")
    return joint


def read_links(model: etree._Element, joints: dict[str, KinJoint], document: Document) -> list[KinLink]:
    """The link tree in pre-order (children in document order)."""
    roots = model.findall("technique_common/link")
    if not roots:
        document.problems.add(model, "kinematics_model has no <link>")
        return []
    if len(roots) > 1:
        names = [r.get("name") or r.get("sid") for r in roots]
        document.problems.add(model, f"kinematics_model has {len(roots)} root links {names}; expected one")
    links: list[KinLink] = []
    _add_link(roots[0], np.eye(4), -1, None, np.eye(4), joints, document, links)
    return links


def _add_link(
    element: etree._Element,
    frame: np.ndarray,
    parent: int,
    joint: KinJoint | None,
    joint_frame: np.ndarray,
    joints: dict[str, KinJoint],
    document: Document,
    links: list[KinLink],
) -> None:
    sid = element.get("sid") or element.get("name") or f"link{len(links)}"
    own = frame @ transform(element, document)
    index = len(links)
    links.append(KinLink(sid, element.get("name") or sid, element, parent, joint, own, joint_frame))
    for attachment in element:
        if attachment.tag in ("attachment_start", "attachment_end"):
            document.problems.add(attachment, f"<{attachment.tag}> (closed kinematic loops) is not supported")
            continue
        if attachment.tag != "attachment_full":
            continue
        child_joint = joints.get(last_part(attachment.get("joint")))
        if child_joint is None:
            document.problems.add(attachment, f"attachment names unknown joint {attachment.get('joint')!r}")
            continue
        at = own @ transform(attachment, document)
        child = attachment.find("link")
        if child is None:
            document.problems.add(attachment, "attachment_full without a <link>")
            continue
        _add_link(child, at, index, child_joint, at, joints, document, links)


# --- formulas ------------------------------------------------------------------------------------


def read_formulas(model: etree._Element, document: Document) -> list[LinearFormula]:
    formulas = []
    for formula in model.iter("formula"):
        target = last_part(formula.findtext("target/param") or formula.get("target"))
        math_element = formula.find("technique_common/math")
        if math_element is None:
            math_element = formula.find("technique/equation/math")
        expression = next(iter(math_element), None) if math_element is not None else None
        linear = _linear(expression) if expression is not None else None
        if linear is None or len(linear[0]) != 1:
            document.problems.add(formula, f"formula for {target!r} is not linear in exactly one joint")
            continue
        (source, multiplier), offset = next(iter(linear[0].items())), linear[1]
        formulas.append(LinearFormula(target, last_part(source), multiplier, offset))
    return formulas


def _linear(node: etree._Element) -> tuple[dict[str, float], float] | None:
    """A MathML expression as ({symbol: coefficient}, constant), or None when not linear."""
    if node.tag == "cn":
        try:
            return {}, float((node.text or "").strip())
        except ValueError:
            return None
    if node.tag == "csymbol" or node.tag == "ci":
        return {(node.text or "").strip(): 1.0}, 0.0
    if node.tag != "apply" or len(node) == 0:
        return None
    op, args = node[0].tag, [_linear(child) for child in node[1:]]
    if any(a is None for a in args) or not args:
        return None
    if op == "plus":
        return _sum(args, [1.0] * len(args))
    if op == "minus":
        if len(args) == 1:
            return _scale(args[0], -1.0)
        return _sum(args, [1.0] + [-1.0] * (len(args) - 1))
    if op == "times":
        result = ({}, 1.0)
        for a in args:
            if result[0] and a[0]:
                return None  # product of two joint values
            result = _scale(a, result[1]) if not result[0] else _scale(result, a[1])
        return result
    if op == "divide" and len(args) == 2 and not args[1][0] and args[1][1] != 0.0:
        return _scale(args[0], 1.0 / args[1][1])
    return None


def _sum(args: list, signs: list[float]) -> tuple[dict[str, float], float]:
    terms: dict[str, float] = {}
    constant = 0.0
    for (coefficients, value), sign in zip(args, signs, strict=True):
        for symbol, k in coefficients.items():
            terms[symbol] = terms.get(symbol, 0.0) + sign * k
        constant += sign * value
    return terms, constant


def _scale(arg: tuple[dict[str, float], float], factor: float) -> tuple[dict[str, float], float]:
    return {s: k * factor for s, k in arg[0].items()}, arg[1] * factor
