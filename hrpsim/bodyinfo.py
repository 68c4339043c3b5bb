"""BodyInfo: the format-independent description of a robot or an environment.

Every model loader produces it, the simulator and the collision service consume it, and it is
the only description of a body that crosses the wire. It is plain data: dataclasses holding
numpy arrays, kept apart from any parsing.

Conventions (OpenHRP / Choreonoid): SI units, right-handed, Z up. A link's frame sits at its
joint. ``translation``/``rotation`` of a link are its frame relative to its parent link's frame
with all joint values zero. Mass properties (``com``, ``inertia``) are in the link frame;
``inertia`` is about the centre of mass.

Shape axes follow VRML: a cylinder, cone or capsule has its axis along the shape's local Y,
centred on the shape origin. A plane's normal is its local +Z. Loaders of other formats rotate
the shape pose accordingly (URDF cylinders are along Z).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

import numpy as np

JOINT_TYPES = ("free", "rotate", "slide", "fixed", "crawler")
SHAPE_KINDS = ("box", "sphere", "cylinder", "cone", "capsule", "plane", "mesh")
EXTRA_JOINT_TYPES = ("ball", "piston", "xyz", "xy", "z", "hinge", "fixed")


def _vec(values: Any = (0.0, 0.0, 0.0)) -> np.ndarray:
    return np.array(values, dtype=np.float64).reshape(3)


def _eye() -> np.ndarray:
    return np.eye(3)


def _zeros33() -> np.ndarray:
    return np.zeros((3, 3))


@dataclass
class Appearance:
    """What a viewer needs; the physics ignores it."""

    diffuse: np.ndarray = field(default_factory=lambda: _vec((0.8, 0.8, 0.8)))
    transparency: float = 0.0
    texture: str = ""  # absolute path or url of an image, "" for none


@dataclass
class Shape:
    """One piece of geometry rigidly attached to a link, posed in the link frame.

    ``size`` is the box's full extents. ``radius``/``height`` serve sphere, cylinder, cone and
    capsule (a capsule's height is its cylindrical part). A mesh has ``vertices`` (N, 3) in the
    shape frame and ``triangles`` (M, 3) of vertex indices.
    """

    kind: str
    translation: np.ndarray = field(default_factory=_vec)
    rotation: np.ndarray = field(default_factory=_eye)
    size: np.ndarray = field(default_factory=_vec)
    radius: float = 0.0
    height: float = 0.0
    vertices: np.ndarray = field(default_factory=lambda: np.zeros((0, 3)))
    triangles: np.ndarray = field(default_factory=lambda: np.zeros((0, 3), dtype=np.int32))
    appearance: Appearance = field(default_factory=Appearance)


@dataclass
class Mimic:
    """q = multiplier * q[joint] + offset (URDF mimic, COLLADA formula)."""

    joint: str
    multiplier: float = 1.0
    offset: float = 0.0


@dataclass
class Link:
    """A rigid body and the joint that attaches it to its parent."""

    name: str
    parent: int = -1  # index into Body.links; -1 for the root
    joint_name: str = ""  # "" means the link's own name (VRML); URDF/COLLADA joints have their own
    joint_type: str = "fixed"
    joint_axis: np.ndarray = field(default_factory=lambda: _vec((0.0, 0.0, 1.0)))
    joint_id: int = -1
    translation: np.ndarray = field(default_factory=_vec)
    rotation: np.ndarray = field(default_factory=_eye)
    q_lower: float = -np.inf
    q_upper: float = np.inf
    dq_lower: float = -np.inf
    dq_upper: float = np.inf
    torque_lower: float = -np.inf
    torque_upper: float = np.inf
    mass: float = 0.0
    com: np.ndarray = field(default_factory=_vec)
    inertia: np.ndarray = field(default_factory=_zeros33)
    gear_ratio: float = 1.0
    rotor_inertia: float = 0.0
    rotor_resistor: float = 0.0
    torque_const: float = 1.0
    encoder_pulse: float = 1.0
    mimic: Mimic | None = None
    shapes: list[Shape] = field(default_factory=list)  # collision geometry
    visuals: list[Shape] = field(default_factory=list)  # empty: draw ``shapes``

    @property
    def joint_label(self) -> str:
        return self.joint_name or self.name

    @property
    def reflected_inertia(self) -> float:
        """Rotor inertia seen at the joint: rotorInertia * gearRatio^2."""
        return self.rotor_inertia * self.gear_ratio**2


@dataclass
class Sensor:
    """A sensor rigidly attached to a link; ``type`` is one of hrpsim.sensor_types.SENSOR_TYPES,
    ``params`` holds the type's parameters (maxForce, maxTorque, maxAngularVelocity,
    maxAcceleration, scanAngle, scanStep, scanRate, maxDistance, width, height, fieldOfView,
    frontClipDistance, backClipDistance, frameRate, imageType ...) with OpenHRP's names."""

    name: str
    type: str
    id: int
    link: int  # index into Body.links
    translation: np.ndarray = field(default_factory=_vec)
    rotation: np.ndarray = field(default_factory=_eye)
    params: dict[str, Any] = field(default_factory=dict)


@dataclass
class ExtraJoint:
    """A constraint closing a kinematic loop (OpenHRP ExtraJoint, Choreonoid extraJoints).

    ``ball``/``xyz`` hold point2 on point1; ``xy`` across the axis only, ``z`` along it only;
    ``piston`` leaves motion along and rotation about the axis free; ``hinge`` leaves only the
    rotation about the axis (through the point); ``fixed`` holds the two links in the relative
    pose they start in."""

    name: str
    link1: str
    link2: str
    type: str
    axis: np.ndarray = field(default_factory=lambda: _vec((0.0, 0.0, 1.0)))
    point1: np.ndarray = field(default_factory=_vec)  # in link1's frame
    point2: np.ndarray = field(default_factory=_vec)  # in link2's frame


@dataclass
class Manipulator:
    name: str
    base: str
    effector: str
    tip_translation: np.ndarray = field(default_factory=_vec)
    tip_rotation: np.ndarray = field(default_factory=_eye)
    gripper_joints: list[str] = field(default_factory=list)
    closing_directions: list[float] = field(default_factory=list)
    ik_solvers: list[str] = field(default_factory=list)


@dataclass
class Actuator:
    """An electric motor driving one joint (COLLADA library_actuators)."""

    joint: str
    name: str = ""
    params: dict[str, Any] = field(default_factory=dict)


@dataclass
class Body:
    """A robot or an environment. ``links`` is in link-index order (pre-order, root first)."""

    name: str
    links: list[Link] = field(default_factory=list)
    sensors: list[Sensor] = field(default_factory=list)
    extra_joints: list[ExtraJoint] = field(default_factory=list)
    manipulators: list[Manipulator] = field(default_factory=list)
    actuators: list[Actuator] = field(default_factory=list)
    collision_exclusions: list[tuple[str, str]] = field(default_factory=list)  # link name pairs
    static: bool = False
    source: str = ""  # the file it was loaded from
    format: str = ""  # "vrml", "urdf", "collada", ...
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def root(self) -> Link:
        return self.links[0]

    @property
    def joints(self) -> list[Link]:
        """Links with a jointId, in controller (jointId) order."""
        return sorted((lk for lk in self.links if lk.joint_id >= 0), key=lambda lk: lk.joint_id)

    @property
    def joint_names(self) -> list[str]:
        return [lk.joint_label for lk in self.joints]

    @property
    def dof(self) -> int:
        """Independent 1-DOF joints: rotate and slide joints that do not mimic another."""
        return sum(1 for lk in self.links[1:] if lk.joint_type in ("rotate", "slide") and lk.mimic is None)

    @property
    def total_mass(self) -> float:
        return float(sum(lk.mass for lk in self.links))

    def link_index(self, name: str) -> int:
        for i, lk in enumerate(self.links):
            if lk.name == name:
                return i
        raise KeyError(f"body {self.name!r} has no link {name!r}")

    def children(self, index: int) -> list[int]:
        return [i for i, lk in enumerate(self.links) if lk.parent == index]

    def to_wire(self) -> dict[str, Any]:
        return _to_wire(self)

    @classmethod
    def from_wire(cls, data: dict[str, Any]) -> Body:
        return _from_wire(cls, data)


# --- wire form: nested dicts of plain values and numpy arrays (the codec carries arrays) ---


def _to_wire(obj: Any) -> Any:
    if dataclasses.is_dataclass(obj):
        return {f.name: _to_wire(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, list | tuple):
        return [_to_wire(v) for v in obj]
    if isinstance(obj, dict):
        return {k: _to_wire(v) for k, v in obj.items()}
    if isinstance(obj, np.floating):
        return float(obj)
    if isinstance(obj, np.integer):
        return int(obj)
    return obj


_ITEM_TYPES: dict[tuple[str, str], type] = {}


def _from_wire(cls: type, data: dict[str, Any]) -> Any:
    kwargs = {}
    for f in dataclasses.fields(cls):
        if f.name not in data:
            continue
        kwargs[f.name] = _field_from_wire(cls, f.name, data[f.name])
    return cls(**kwargs)


def _field_from_wire(cls: type, name: str, value: Any) -> Any:
    nested = _ITEM_TYPES.get((cls.__name__, name))
    if nested is None or value is None:
        if isinstance(value, list) and name == "collision_exclusions":
            return [tuple(p) for p in value]
        return value
    if isinstance(value, list):
        return [_from_wire(nested, v) for v in value]
    return _from_wire(nested, value)


_ITEM_TYPES.update(
    {
        ("Body", "links"): Link,
        ("Body", "sensors"): Sensor,
        ("Body", "extra_joints"): ExtraJoint,
        ("Body", "manipulators"): Manipulator,
        ("Body", "actuators"): Actuator,
        ("Link", "shapes"): Shape,
        ("Link", "visuals"): Shape,
        ("Link", "mimic"): Mimic,
        ("Shape", "appearance"): Appearance,
    }
)


def bodies_equal(a: Body, b: Body, *, rtol: float = 0.0, atol: float = 0.0) -> bool:
    """Deep equality of two bodies (arrays compared with the given tolerances)."""
    return _equal(_to_wire(a), _to_wire(b), rtol, atol)


def _equal(x: Any, y: Any, rtol: float, atol: float) -> bool:
    if isinstance(x, np.ndarray) or isinstance(y, np.ndarray):
        xa, ya = np.asarray(x), np.asarray(y)
        if xa.shape != ya.shape:
            return False
        if xa.dtype.kind in "fc" or ya.dtype.kind in "fc":
            return bool(np.allclose(xa, ya, rtol=rtol, atol=atol, equal_nan=True))
        return bool(np.array_equal(xa, ya))
    if isinstance(x, dict) and isinstance(y, dict):
        return x.keys() == y.keys() and all(_equal(x[k], y[k], rtol, atol) for k in x)
    if isinstance(x, list | tuple) and isinstance(y, list | tuple):
        return len(x) == len(y) and all(_equal(p, q, rtol, atol) for p, q in zip(x, y, strict=True))
    if isinstance(x, float) and isinstance(y, float):
        if np.isnan(x) and np.isnan(y):
            return True
        if np.isinf(x) or np.isinf(y):
            return x == y  # no tolerance makes an unbounded limit equal to a bound
        return x == y or abs(x - y) <= atol + rtol * abs(y)
    return x == y
