"""Joint and mass keys of a Choreonoid link, with Choreonoid's meanings.

A link without joint keys is a fixed joint on axis Z; jointType revolute -> rotate, prismatic
(slide) -> slide, free, fixed, pseudo_continuous_track -> crawler; ``jointAxis`` is X, -Y ... or
a vector; ranges and speeds of revolute joints are angles (degrees unless the file says radian);
``unlimited`` is no limit. A link without mass keys or RigidBody elements weighs 1 kg with a
unit inertia (Choreonoid's Link defaults); link keys and RigidBody elements combine by the
parallel-axis rule.
"""

from __future__ import annotations

import math

import numpy as np

from hrpsim.bodyinfo import Link
from hrpsim.modelloader.body_elements import RigidPart, read_inertia
from hrpsim.modelloader.body_values import BodyFile
from hrpsim.modelloader.body_yaml import YMap
from hrpsim.modelloader.openhrp_mass import MAX_LINK_MASS_KG

JOINT_TYPES = {
    "revolute": "rotate",
    "prismatic": "slide",
    "slide": "slide",
    "free": "free",
    "fixed": "fixed",
    "pseudo_continuous_track": "crawler",
    "pseudoContinuousTrack": "crawler",
}
AXES = {"X": (1, 0, 0), "Y": (0, 1, 0), "Z": (0, 0, 1)}


def read_joint(file: BodyFile, node: YMap, link: Link, label: str) -> None:
    """The joint keys of a link node, written into ``link`` (absent keys leave it as it is)."""
    link.joint_id = file.integer(node, "jointId", label, link.joint_id)
    kind = file.string(node, "jointType", label)
    if kind:
        if kind in JOINT_TYPES:
            link.joint_type = JOINT_TYPES[kind]
        else:
            file.add(
                node, label, f"jointType {kind!r} is not one of {', '.join(JOINT_TYPES)}", file.key(node, "jointType")
            )
    axis = file.raw(node, "jointAxis")
    if axis is not None:
        link.joint_axis = _axis(file, node, axis, label)
    rotary = link.joint_type == "rotate" and file.degree
    lower, upper = _range(file, node, "jointRange", label, rotary)
    if lower is not None:
        link.q_lower, link.q_upper = lower, upper
    speed = file.raw(node, "maxJointVelocity")
    if speed is not None:
        top = _limit(file, node, speed, "maxJointVelocity", label, rotary)
        link.dq_lower, link.dq_upper = -top, top
    else:
        lower, upper = _range(file, node, "jointVelocityRange", label, rotary)
        if lower is not None:
            link.dq_lower, link.dq_upper = lower, upper
    effort = file.raw(node, ("maxJointEffort",))
    if effort is not None:
        top = _limit(file, node, effort, "maxJointEffort", label, False)
        link.torque_lower, link.torque_upper = -top, top
    inertia = file.number(node, "jointAxisInertia", label)
    if inertia is not None:
        link.rotor_inertia, link.gear_ratio = inertia, 1.0
    else:
        link.rotor_inertia = file.number(node, "rotorInertia", label, link.rotor_inertia)
        link.gear_ratio = file.number(node, "gearRatio", label, link.gear_ratio)


def _axis(file: BodyFile, node: YMap, value: object, label: str) -> np.ndarray:
    if isinstance(value, str):
        sign = -1.0 if value.startswith("-") else 1.0
        letter = value.lstrip("-").upper()
        if letter in AXES:
            return sign * np.array(AXES[letter], dtype=np.float64) + 0.0  # no -0
    elif isinstance(value, list):
        numbers = file.numbers(value, node, "jointAxis", label)
        if numbers is not None and numbers.size == 3 and np.linalg.norm(numbers) > 0:
            return numbers / np.linalg.norm(numbers)
    file.add(node, label, f"jointAxis {value!r} is not X, Y, Z, -X, -Y, -Z or a non-zero vector",
                  file.key(node, "jointAxis"))  # fmt: skip
    return np.array([0.0, 0.0, 1.0])


def _range(file: BodyFile, node: YMap, keys: str, label: str, rotary: bool) -> tuple[float | None, float]:
    key = file.key(node, keys)
    if key is None:
        return None, 0.0
    value = node[key]
    if isinstance(value, list) and len(value) == 2:
        return -_limit(file, node, value[0], key, label, rotary, lower=True), _limit(
            file, node, value[1], key, label, rotary
        )
    if not isinstance(value, list):
        top = _limit(file, node, value, key, label, rotary)
        return -top, top
    file.add(node, label, f"{key} must be [lower, upper] or one number", key)
    return None, 0.0


def _limit(
    file: BodyFile, node: YMap, value: object, key: str, label: str, rotary: bool, *, lower: bool = False
) -> float:
    """A bound as a positive magnitude for the upper side (negated back for ``lower``)."""
    if value == "unlimited":
        return np.inf
    if isinstance(value, bool) or not isinstance(value, int | float) or math.isnan(value):
        file.add(node, label, f"{key} holds {value!r}: a number or 'unlimited'", key)
        return np.inf
    number = float(np.radians(value)) if rotary else float(value)
    return -number if lower else number


def read_mass(file: BodyFile, node: YMap, link: Link, rigid: list[RigidPart], label: str) -> None:
    """The link's mass properties: its own keys and its RigidBody elements combined."""
    has = [file.key(node, k) is not None for k in ("centerOfMass", "mass", "inertia")]
    own = RigidPart(
        file.number(node, "mass", label, 0.0 if rigid else 1.0),
        file.vector(node, "centerOfMass", label, 3, (0.0, 0.0, 0.0)),
        read_inertia(file, node, label) if has[2] else (np.zeros((3, 3)) if rigid else np.eye(3)),
    )
    parts = ([own] if any(has) else []) + rigid
    if not parts:
        link.mass, link.com, link.inertia = 1.0, np.zeros(3), np.eye(3)
        return
    link.mass, link.com, link.inertia = combine(parts)
    if link.mass < 0:
        file.add(node, label, f"mass {link.mass} is negative", file.key(node, "mass"))
    elif link.mass > MAX_LINK_MASS_KG:
        file.add(node, label, f"mass {link.mass:g} is beyond {MAX_LINK_MASS_KG:g} kg", file.key(node, "mass"))


def initial_value(file: BodyFile, node: YMap, link: Link, label: str) -> float | None:
    """The joint's starting value (``jointAngle``, an angle; ``jointDisplacement``, an angle for a
    revolute joint, a length otherwise), or None."""
    angle = file.number(node, "jointAngle", label)
    if angle is not None:
        return file.radians(angle)
    value = file.number(node, "jointDisplacement", label)
    if value is None:
        return None
    return file.radians(value) if link.joint_type == "rotate" else value


def combine(parts: list[RigidPart]) -> tuple[float, np.ndarray, np.ndarray]:
    """Total mass, centre of mass and inertia about it of masses in one frame."""
    mass = sum(p.mass for p in parts)
    if mass <= 0:
        return mass, np.zeros(3), np.zeros((3, 3))
    com = sum(p.mass * p.com for p in parts) / mass
    inertia = np.zeros((3, 3))
    for part in parts:
        offset = com - part.com
        inertia += part.inertia + part.mass * (offset @ offset * np.eye(3) - np.outer(offset, offset))
    return mass, com, inertia
