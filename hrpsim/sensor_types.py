"""Sensor types, each described once, as Choreonoid's Device describes its own state: what its
reading holds, who measures it, the parameters it carries, what each model format calls it, what
it reads at rest, and how a ROS 2 bag carries its readings.

Whatever handles sensors by their type reads this table instead of naming types: the model readers
(each format's names for a type, its parameters), the project file and the hardware models (noise
for every type engines measure), the hardware stand-in (a reading at rest of the right size), the
recording (the state schema's text, ``hrpsim plot``'s axes, the ROS 2 bag's messages) and the
Gymnasium observation. Adding a type that engines measure is one :class:`SensorType` given to
:func:`register` plus one measuring class per engine (docs/architecture.md, *Adding a sensor type
measured by engines*); ``tests/kernel/test_sensor_type_registry.py`` adds one that way.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

PARAM_KINDS = ("vec3", "float", "int", "string")


@dataclass(frozen=True)
class Param:
    """A parameter of a type's sensors, by OpenHRP's name (its VRML PROTO's field, which a
    Choreonoid body device's key shares) and OpenHRP's default."""

    name: str
    kind: str  # one of PARAM_KINDS
    default: Any


@dataclass(frozen=True)
class Aliases:
    """What each model format calls the type. A name names one type, but in COLLADA, where
    OpenRAVE's IMU is a gyro and an accelerometer at once."""

    vrml: tuple[str, ...] = ()  # OpenHRP sensor PROTOs
    body: tuple[str, ...] = ()  # Choreonoid body file device types
    collada: tuple[
        str, ...
    ] = ()  # OpenRAVE library_sensors types, as the spec writes them (matched ignoring case and _)
    mjcf: tuple[str, ...] = ()  # MJCF sensor elements, on a site


ALIAS_FORMATS = tuple(f.name for f in dataclasses.fields(Aliases))
SHARED_NAMES = ("collada",)  # the formats in which one name may name several types


@dataclass(frozen=True)
class Ros2Slot:
    """A part of a ROS 2 message that one sensor's reading fills: ``size`` float64 values, then,
    when ``covariance``, their 3x3 covariance (zeros: unknown; -1 first: no such data).
    ``absent``: its values when no sensor fills it (zeros if empty)."""

    name: str
    size: int
    covariance: bool = False
    absent: tuple[float, ...] = ()


@dataclass(frozen=True)
class Ros2Message:
    """A ROS 2 message that holds a std_msgs/Header and then float64 values only, in ``slots``.
    Without ``per_link`` a bag has one per sensor (topic ``/ROBOT/SENSOR``, in the sensor's frame);
    with it, one per link for the sensors of every type that fills one of its slots (topic
    ``/ROBOT/PER_LINK/LINK``, in the frame of the sensor of its first filled slot, the others'
    readings turned into it: their slots hold 3-vectors)."""

    type: str
    slots: tuple[Ros2Slot, ...]
    per_link: str = ""

    @property
    def values(self) -> int:
        """How many float64 values follow the header."""
        return sum(slot.size + (9 if slot.covariance else 0) for slot in self.slots)


@dataclass(frozen=True)
class Ros2Encoding:
    """A type's readings in a ROS 2 bag: the slot they fill of a message."""

    message: Ros2Message
    slot: str


WRENCH_STAMPED = Ros2Message("geometry_msgs/msg/WrenchStamped", (Ros2Slot("wrench", 6),))
IMU = Ros2Message(
    "sensor_msgs/msg/Imu",
    (
        Ros2Slot("orientation", 4, covariance=True, absent=(0.0, 0.0, 0.0, 1.0)),  # x y z w: none measured
        Ros2Slot("angular_velocity", 3, covariance=True),
        Ros2Slot("linear_acceleration", 3, covariance=True),
    ),
    per_link="imu",
)


@dataclass(frozen=True)
class SensorType:
    """One sensor type. ``axes`` name the values of its reading, in order (none for a reading that
    is not one vector: a scan, an image); ``by_engine``: the physics engine measures it (each
    engine has one class for it), else the simulator does, from link poses and shapes.
    ``rest_per_g``: its reading at rest, upright, per m/s^2 of gravity (an accelerometer reads
    gravity's reaction); zeros if empty. ``ros2``: how a ROS 2 bag carries its readings (range and
    vision readings have messages of their own, recording/ros2_bag.py)."""

    name: str
    axes: tuple[str, ...]
    by_engine: bool
    params: tuple[Param, ...] = ()
    aliases: Aliases = Aliases()
    rest_per_g: tuple[float, ...] = ()
    ros2: Ros2Encoding | None = None


SENSOR_TYPES: dict[str, SensorType] = {}
_CALLED: dict[str, dict[str, tuple[str, ...]]] = {fmt: {} for fmt in ALIAS_FORMATS}


def register(kind: SensorType) -> SensorType:
    """Add ``kind`` to the table; ValueError naming what clashes: a type of that name, values named
    twice, a parameter of unknown kind, a reading at rest or a ROS 2 slot of another size than the
    reading, a model format's name for it that names another type already."""
    problems = _problems(kind)
    if problems:
        raise ValueError(f"sensor type {kind.name!r}: " + "; ".join(problems))
    SENSOR_TYPES[kind.name] = kind
    for fmt in ALIAS_FORMATS:
        for name in getattr(kind.aliases, fmt):
            _CALLED[fmt][name] = (*_CALLED[fmt].get(name, ()), kind.name)
    return kind


def unregister(name: str) -> None:
    """Take the type ``name`` out of the table (a test's own type, when the test ends)."""
    SENSOR_TYPES.pop(name)
    for called in _CALLED.values():
        for alias, kinds in list(called.items()):
            if name in kinds:
                rest = tuple(k for k in kinds if k != name)
                if rest:
                    called[alias] = rest
                else:
                    del called[alias]


def _problems(kind: SensorType) -> list[str]:
    problems = []
    if kind.name in SENSOR_TYPES:
        problems.append("a type of that name exists already")
    if len(set(kind.axes)) != len(kind.axes):
        problems.append(f"its values are named twice: {', '.join(kind.axes)}")
    problems += [
        f"parameter {p.name!r} has kind {p.kind!r} (kinds: {', '.join(PARAM_KINDS)})"
        for p in kind.params
        if p.kind not in PARAM_KINDS
    ]
    if kind.rest_per_g and len(kind.rest_per_g) != len(kind.axes):
        problems.append(f"its reading at rest has {len(kind.rest_per_g)} values, its reading {len(kind.axes)}")
    if kind.ros2 is not None:
        sizes = {slot.name: slot.size for slot in kind.ros2.message.slots}
        if sizes.get(kind.ros2.slot) != len(kind.axes):
            problems.append(
                f"ROS 2 slot {kind.ros2.slot!r} of {kind.ros2.message.type} does not hold its {len(kind.axes)} values"
            )
    for fmt in ALIAS_FORMATS:
        if fmt in SHARED_NAMES:
            continue
        problems += [
            f"{fmt} name {name!r} is the {_CALLED[fmt][name][0]!r} type's already"
            for name in getattr(kind.aliases, fmt)
            if name in _CALLED[fmt]
        ]
    return problems


def engine_sensor_types() -> tuple[str, ...]:
    """The types engines measure, in table order."""
    return tuple(name for name, kind in SENSOR_TYPES.items() if kind.by_engine)


def called(fmt: str) -> dict[str, tuple[str, ...]]:
    """What model format ``fmt`` (one of ALIAS_FORMATS) calls sensor types: its name -> the types it
    names (one, but in SHARED_NAMES formats), in table order. Not to be changed by the caller."""
    return _CALLED[fmt]


def reading_layouts() -> str:
    """The values of each vector reading, types of the same layout together:
    ``force: fx fy fz tx ty tz; gyro, accel: x y z``."""
    by_layout: dict[tuple[str, ...], list[str]] = {}
    for name, kind in SENSOR_TYPES.items():
        if kind.axes:
            by_layout.setdefault(kind.axes, []).append(name)
    return "; ".join(f"{', '.join(names)}: {' '.join(axes)}" for axes, names in by_layout.items())


_LIMIT = (-1.0, -1.0, -1.0)  # OpenHRP's default of a sensor's limits: none given

register(
    SensorType(
        "force",
        ("fx", "fy", "fz", "tx", "ty", "tz"),
        by_engine=True,
        params=(Param("maxForce", "vec3", _LIMIT), Param("maxTorque", "vec3", _LIMIT)),
        aliases=Aliases(
            vrml=("ForceSensor",), body=("ForceSensor",), collada=("base_force6d",), mjcf=("force", "torque")
        ),
        ros2=Ros2Encoding(WRENCH_STAMPED, "wrench"),
    )
)
register(
    SensorType(
        "gyro",
        ("x", "y", "z"),
        by_engine=True,
        params=(Param("maxAngularVelocity", "vec3", _LIMIT),),
        aliases=Aliases(
            vrml=("Gyro", "GyroSensor", "RateGyroSensor"),
            body=("RateGyroSensor",),
            collada=("base_imu",),
            mjcf=("gyro",),
        ),
        ros2=Ros2Encoding(IMU, "angular_velocity"),
    )
)
register(
    SensorType(
        "accel",
        ("x", "y", "z"),
        by_engine=True,
        params=(Param("maxAcceleration", "vec3", _LIMIT),),
        aliases=Aliases(
            vrml=("AccelerationSensor",), body=("AccelerationSensor",), collada=("base_imu",), mjcf=("accelerometer",)
        ),
        rest_per_g=(0.0, 0.0, 1.0),
        ros2=Ros2Encoding(IMU, "linear_acceleration"),
    )
)
register(
    SensorType(
        "range",
        (),
        by_engine=False,
        params=(
            Param("scanAngle", "float", 3.14159),
            Param("scanStep", "float", 0.1),
            Param("scanRate", "float", 10.0),
            Param("maxDistance", "float", 10.0),
        ),
        aliases=Aliases(
            vrml=("RangeSensor",),
            body=("RangeSensor",),
            collada=("base_laser2d", "base_laser3d", "base_flash_laser"),
        ),
    )
)
register(
    SensorType(
        "vision",
        (),
        by_engine=False,
        params=(
            Param("name", "string", ""),
            Param("type", "string", "NONE"),
            Param("width", "int", 320),
            Param("height", "int", 240),
            Param("fieldOfView", "float", 0.785398),
            Param("frontClipDistance", "float", 0.01),
            Param("backClipDistance", "float", 10.0),
            Param("frameRate", "float", 30.0),
        ),
        aliases=Aliases(
            vrml=("VisionSensor",),
            body=("Camera", "CameraDevice"),
            collada=("base_pinhole_camera", "base_camera", "base_stereo_camera"),
        ),
    )
)
