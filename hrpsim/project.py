"""Project files: what a run contains (world, models, controllers, collision pairs).

A project is YAML; relative paths are relative to the project file. ``load_project`` checks
every field and collects all problems into one :class:`ConfigError` naming the file and key.
The dataclasses here are the parsed form every component reads; ``Project.to_wire`` sends it.
"""

from __future__ import annotations

import dataclasses
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from hrpsim.bodyinfo import EXTRA_JOINT_TYPES, ExtraJoint
from hrpsim.conventions import DRIVE_MODES, POLICIES, RESTART_POLICIES, RESTARTABLE_SERVICES, SYNC_MODES, period_ticks
from hrpsim.engine_options import check_section
from hrpsim.engine_registry import EngineDeclarationError, declaration, default_engine, engine_names
from hrpsim.errors import ConfigError
from hrpsim.files import current_policy, read_model, reading_under
from hrpsim.sensor_types import engine_sensor_types

COLLISION_MODES = ("builtin", "service")
# cameras are not rendered unless the project asks (as OpenHRP's ViewSimulator and Choreonoid's vision
# simulator are opt-in): in the simulator's process, or in one of their own
CAMERA_MODES = ("off", "inline", "process")


COLLISION_WAIT_S = 20.0  # how long a tick waits for a lost collision service to come back (collision: service)
MAX_PROJECT_FILE_BYTES = 1024 * 1024  # a project is a page of YAML; its reader takes ~100 times its size
# Pushes: far above any push a robot meets, far below what overflows an engine's integration (ODE aborts
# the process on a state that is no longer finite); the state guard stops a run they make explode.
MAX_PUSH_FORCE_N = 1e9
MAX_PUSH_TORQUE_NM = 1e9
MAX_PUSH_POINT_M = 1e3  # from the link's origin
MAX_PUSHES = 1000  # in a project's disturbances, and pending in a run at once
PUSH_BOUNDS = {
    "force": (MAX_PUSH_FORCE_N, "N"),
    "torque": (MAX_PUSH_TORQUE_NM, "N m"),
    "point": (MAX_PUSH_POINT_M, "m"),
}
# A number YAML 1.1 reads as a string, because it has an exponent but no dot (1e30): YAML 1.2 and JSON
# read it as a number, and so does a project file.
_EXPONENT_NUMBER = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)[eE][-+]?[0-9]+")


@dataclass
class WorldConfig:
    timestep: float = 0.001
    gravity: list[float] = field(default_factory=lambda: [0.0, 0.0, -9.8])
    end_time: float = 10.0
    sync: str = "lockstep"
    engine: str = field(default_factory=default_engine)  # ODE where installed, else MuJoCo
    collision: str = "builtin"
    collision_wait: float = COLLISION_WAIT_S
    publish_every: int = 10  # ticks between world-state frames on the PUB stream
    command_delay: int = 0  # lockstep: 1 applies the answer to tick k at tick k + 1 (pipelined)
    joint_limits: bool = False  # the models' joint limits as joint stops
    cameras: str = "off"  # whether and where vision sensors render: "off", "inline" or "process"
    # engine name -> the settings its world.<engine> section gives (checked against the options the
    # engine declares; the engine fills in its defaults)
    engine_settings: dict[str, dict[str, Any]] = field(default_factory=dict)


@dataclass
class NoiseConfig:
    """Gaussian noise on one kind of reading: ``std`` per value, plus a constant ``bias``."""

    std: float = 0.0
    bias: float = 0.0


@dataclass
class HardwareModelConfig:
    """What a robot's hardware does to its signals (``models[i].devices``), applied by the simulator
    and by the hardware stand-in alike (simserver/hardware_models.py)."""

    encoder_counts: float | None = None  # per motor revolution; "model": the model's encoderPulse
    encoder_gear_ratio: float | None = None  # motor turns per joint turn; None: the model's gearRatio
    noise_seed: int = 0
    noise: dict[str, NoiseConfig] = field(default_factory=dict)  # q, gyro, accel, force
    sensor_latency: int = 0  # ticks between a measurement and the state that carries it
    command_latency: int = 0  # ticks between a command's arrival and its effect
    saturate_torque: bool = False  # clip torques to the model's torque limits
    drop_commands: float = 0.0  # probability that a command is lost on the way
    watchdog: float | None = None  # s without a command before the drivers zero the torques


@dataclass
class ModelConfig:
    name: str
    file: str  # absolute path
    static: bool = False
    position: list[float] | None = None  # None: the root's position in its file (hrpsim/placement.py)
    rotation: list[float] | None = None  # axis-angle; None: the root's rotation in its file
    joints: dict[str, float] = field(default_factory=dict)  # initial joint values
    drive: str | dict[str, str] = "torque"
    options: dict[str, Any] = field(default_factory=dict)  # loader options
    devices: HardwareModelConfig | None = None
    mass_scale: float = 1.0  # every link's mass and inertia times this (a sweep's "10 % heavier")
    masses: dict[str, float] = field(default_factory=dict)  # link -> kg, its inertia scaled alike


@dataclass
class ControllerConfig:
    name: str
    robot: str
    command: str = ""  # the program the launcher starts (external controllers)
    in_process: bool = False  # run inside the simulator: ``file`` names the Controller subclass
    file: str = ""  # FILE.py or FILE.py:Class, absolute (in-process controllers)
    options: dict[str, Any] = field(default_factory=dict)  # keyword arguments of its constructor
    period: float = 0.001  # the parser makes it one world time step when the project gives none
    policy: str = "stop"  # what the simulator does when this controller is late, leaves or dies
    deadline: float = 5.0  # seconds the simulator waits for an answer in lockstep
    cwd: str = ""  # working directory for the command (default: the project's folder)
    env: dict[str, str] = field(default_factory=dict)
    restart: str = "never"  # hrpsim launch: start the process again when it fails (on-failure)?
    restarts: int = 3  # at most this many times


@dataclass
class RestartConfig:
    """How ``hrpsim launch`` treats a service process that dies (``services: {NAME: {restart, restarts}}``)."""

    restart: str = "on-failure"
    restarts: int = 5


@dataclass
class CollisionPair:
    a: str
    b: str
    friction: float = 0.5
    sliding_friction: float | None = None
    restitution: float = 0.0
    soft_erp: float | None = None
    soft_cfm: float | None = None
    self_collision: bool = False  # with a == b: collide the body's non-adjacent links
    # only these links of a / of b take part (GrxUI's jointName1/2); empty: the whole model
    links_a: list[str] = field(default_factory=list)
    links_b: list[str] = field(default_factory=list)


@dataclass
class ExtraJointConfig:
    """A closed loop between links of one model or of two (GrxUI's extra-joint item); points are
    in each link's frame, the axis in link1's frame, types as BodyInfo's extra joints."""

    name: str
    model1: str
    link1: str
    model2: str
    link2: str
    type: str = "ball"
    axis: list[float] = field(default_factory=lambda: [0.0, 0.0, 1.0])
    point1: list[float] = field(default_factory=lambda: [0.0, 0.0, 0.0])
    point2: list[float] = field(default_factory=lambda: [0.0, 0.0, 0.0])

    def as_extra_joint(self) -> ExtraJoint:
        return ExtraJoint(
            self.name,
            self.link1,
            self.link2,
            self.type,
            np.asarray(self.axis, float),
            np.asarray(self.point1, float),
            np.asarray(self.point2, float),
        )


@dataclass
class Push:
    """A disturbance: ``force`` (N, world frame) and ``torque`` (N m, world frame) on ``link`` of
    ``robot`` at ``point`` (m, in the link's frame; default its origin), from ``time`` (s) for
    ``duration`` (s). Its impulse is force x duration (simserver/disturbances.py applies it)."""

    time: float
    robot: str
    link: str
    force: list[float]
    duration: float
    point: list[float] = field(default_factory=lambda: [0.0, 0.0, 0.0])
    torque: list[float] = field(default_factory=lambda: [0.0, 0.0, 0.0])


@dataclass
class RecordConfig:
    """``record: FILE.mcap`` or ``record: {file: FILE.mcap, contacts: true}`` (docs/recording.md)."""

    file: str  # absolute path
    contacts: bool = False  # also record every tick's contact points
    profile: str = "hrpsim"  # "ros2": also a ROS 2 bag beside the file (RECORD_PROFILES)


# What a recording writes beside its MCAP file, per profile; each is implemented once, in
# recording/profiles.py (the kernel names them, as the project file and every main read them).
RECORD_PROFILES = {
    "hrpsim": "the MCAP file only",
    "ros2": "also a ROS 2 bag beside the recording, FILE_ros2/ (docs/recording.md)",
}


def record_profiles_help() -> str:
    """Each record profile and what it writes, for ``--record-profile``'s help."""
    return "; ".join(f"{name}: {what}" for name, what in RECORD_PROFILES.items())


@dataclass
class Project:
    path: str
    world: WorldConfig = field(default_factory=WorldConfig)
    models: list[ModelConfig] = field(default_factory=list)
    controllers: list[ControllerConfig] = field(default_factory=list)
    collisions: list[CollisionPair] = field(default_factory=list)
    # True: exactly the listed pairs collide (the file has a collisions section, or is GrxUI's);
    # False: a project without one lets every two models collide with the defaults
    only_listed_pairs: bool = False
    extra_joints: list[ExtraJointConfig] = field(default_factory=list)
    services: dict[str, Any] = field(default_factory=dict)  # e.g. {collision: true}
    keys: str | None = None  # security.keys: the CurveZMQ key folder (hrpsim.security)
    notes: list[str] = field(default_factory=list)  # what has no effect, or what a foreign format cannot express
    notes: list[str] = field(default_factory=list)  # what a foreign project format could not express
    record: RecordConfig | None = None  # record every run of this project to an MCAP file
    disturbances: list[Push] = field(default_factory=list)  # pushes every run of this project gets

    @property
    def folder(self) -> Path:
        return Path(self.path).parent

    def service_restart(self, name: str) -> RestartConfig:
        """The restart settings of a service (nameserver, modelloader, collision): the project's or the default."""
        entry = self.services.get(name)
        return (
            RestartConfig(**{k: v for k, v in entry.items() if k in ("restart", "restarts")})
            if isinstance(entry, dict)
            else RestartConfig()
        )

    def model(self, name: str) -> ModelConfig:
        for m in self.models:
            if m.name == name:
                return m
        raise KeyError(name)

    def collision_pairs(self) -> list[CollisionPair]:
        """The pairs that collide, whatever the engine (see ``only_listed_pairs``)."""
        if self.collisions or self.only_listed_pairs:
            return list(self.collisions)
        return [CollisionPair(a.name, b.name) for i, a in enumerate(self.models) for b in self.models[i + 1 :]]

    def to_wire(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_wire(cls, data: dict[str, Any]) -> Project:
        return cls(
            path=data["path"],
            world=_world_from_wire(data.get("world", {})),
            models=[_model_from_wire(m) for m in data.get("models", [])],
            controllers=[ControllerConfig(**c) for c in data.get("controllers", [])],
            collisions=[CollisionPair(**c) for c in data.get("collisions", [])],
            only_listed_pairs=bool(data.get("only_listed_pairs", False)),
            extra_joints=[ExtraJointConfig(**j) for j in data.get("extra_joints", [])],
            services=dict(data.get("services", {})),
            notes=list(data.get("notes", [])),
            record=RecordConfig(**data["record"]) if data.get("record") else None,
            disturbances=[Push(**d) for d in data.get("disturbances", [])],
        )


def _model_from_wire(data: dict[str, Any]) -> ModelConfig:
    fields = dict(data)
    devices = fields.get("devices")
    if devices is not None:
        devices = dict(devices)
        devices["noise"] = {k: NoiseConfig(**v) for k, v in devices.get("noise", {}).items()}
        fields["devices"] = HardwareModelConfig(**devices)
    return ModelConfig(**fields)


def _world_from_wire(data: dict[str, Any]) -> WorldConfig:
    fields = dict(data)
    # the wire form of recordings made when settings sat under world.ode / world.mujoco
    moved = {name: fields.pop(name) for name in engine_names() if isinstance(fields.get(name), dict)}
    fields["engine_settings"] = {**moved, **fields.get("engine_settings", {})}
    return WorldConfig(**fields)


def world_file_section(world: dict[str, Any]) -> dict[str, Any]:
    """A world's wire form (``to_wire()["world"]``) as a project file writes it: each engine's
    settings under the engine's own key (``world.ode``)."""
    section = {k: v for k, v in world.items() if k != "engine_settings"}
    section.update({name: dict(settings) for name, settings in world.get("engine_settings", {}).items()})
    return section


class _Checker:
    """Collects problems as 'file: key: message'."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.problems: list[str] = []

    def bad(self, key: str, message: str) -> None:
        self.problems.append(f"{self.path}: {key}: {message}")

    def number(self, key: str, value: Any, *, positive: bool = False) -> float | None:
        if isinstance(value, str) and _EXPONENT_NUMBER.fullmatch(value):
            value = float(value)
        if isinstance(value, bool) or not isinstance(value, int | float) or not finite_number(value):
            self.bad(key, f"must be a finite number, got {value!r}")
            return None
        if positive and value <= 0:
            self.bad(key, f"must be positive, got {value!r}")
            return None
        return float(value)

    def vector(self, key: str, value: Any, length: int) -> list[float] | None:
        if not isinstance(value, list | tuple) or len(value) != length:
            self.bad(key, f"must be a list of {length} numbers, got {value!r}")
            return None
        out = [self.number(f"{key}[{i}]", v) for i, v in enumerate(value)]
        return None if any(v is None for v in out) else out  # type: ignore[return-value]

    def boolean(self, key: str, value: Any) -> bool | None:
        # YAML reads yes/no as booleans only in YAML 1.1 and not when quoted: anything else is refused
        # rather than read by Python's truthiness, where "no" would be true.
        if not isinstance(value, bool):
            self.bad(key, f"must be true or false, got {value!r}")
            return None
        return value

    def choice(self, key: str, value: Any, choices: tuple[str, ...]) -> str | None:
        if value not in choices:
            self.bad(key, f"must be one of {', '.join(choices)}, got {value!r}")
            return None
        return value

    def positive_int(self, key: str, value: Any, target: Any, attribute: str) -> None:
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            setattr(target, attribute, value)
        else:
            self.bad(key, f"must be a positive integer, got {value!r}")

    def mapping(self, key: str, value: Any) -> dict[str, Any]:
        if value is None:
            return {}
        if not isinstance(value, dict):
            self.bad(key, f"must be a mapping, got {type(value).__name__}")
            return {}
        return value

    def unknown(self, key: str, data: dict[str, Any], known: set[str]) -> None:
        for k in data:
            if k not in known:
                self.bad(f"{key}.{k}" if key else str(k), f"unknown key (known: {', '.join(sorted(known))})")


def _fields(cls: type) -> set[str]:
    return {f.name for f in dataclasses.fields(cls)}


def _world(c: _Checker, data: dict[str, Any]) -> WorldConfig:
    engines = engine_names()
    moved = _moved_keys(c, data, engines)
    known = (_fields(WorldConfig) - {"engine_settings"}) | set(engines)
    c.unknown("world", {k: v for k, v in data.items() if k not in moved}, known)
    w = WorldConfig()
    for key in ("timestep", "end_time", "collision_wait"):
        if key in data and (v := c.number(f"world.{key}", data[key], positive=True)) is not None:
            setattr(w, key, v)
    if "gravity" in data and (g := c.vector("world.gravity", data["gravity"], 3)) is not None:
        w.gravity = g
    for key, choices in (
        ("sync", SYNC_MODES),
        ("collision", COLLISION_MODES),
        ("engine", engines),
        ("cameras", CAMERA_MODES),
    ):
        if key in data and (v := c.choice(f"world.{key}", data[key], choices)) is not None:
            setattr(w, key, v)
    if "publish_every" in data:
        c.positive_int("world.publish_every", data["publish_every"], w, "publish_every")
    if "command_delay" in data:
        delay = data["command_delay"]
        if delay not in (0, 1) or isinstance(delay, bool):
            c.bad("world.command_delay", f"must be 0 (strict lockstep) or 1 (pipelined), got {delay!r}")
        elif delay and w.sync != "lockstep":
            c.bad("world.command_delay", "pipelining is a lockstep mode: realtime applies the latest answer anyway")
        else:
            w.command_delay = delay
    for name in engines:
        if data.get(name) is not None:
            w.engine_settings[name] = _engine_section(c, name, data[name])
    if "joint_limits" in data and (flag := c.boolean("world.joint_limits", data["joint_limits"])) is not None:
        w.joint_limits = flag
    return w


def _moved_keys(c: _Checker, data: dict[str, Any], engines: tuple[str, ...]) -> set[str]:
    """World keys that are an engine's setting (``world.erp``): refused, saying where they live now."""
    world_keys = _fields(WorldConfig) | set(engines)
    owners: dict[str, list[str]] = {}
    for name in engines:
        for option in _options_of(name):
            if option.name not in world_keys:
                owners.setdefault(option.name, []).append(name)
    chosen = data.get("engine", default_engine())
    for key in [k for k in data if k in owners]:
        names = [chosen] if chosen in owners[key] else owners[key]
        c.bad(
            f"world.{key}",
            f"moved to {' or '.join(f'world.{n}.{key}' for n in names)} (engine-specific settings live under "
            f"their engine's key: world: {{engine: {names[0]}, {names[0]}: {{{key}: ...}}}})",
        )
    return set(owners)


def _options_of(name: str) -> tuple:
    try:
        return tuple(declaration(name).OPTIONS)
    except EngineDeclarationError:
        return ()


def _engine_section(c: _Checker, name: str, data: Any) -> dict[str, Any]:
    try:
        options = tuple(declaration(name).OPTIONS)
    except EngineDeclarationError as exc:
        c.bad(f"world.{name}", str(exc))
        return {}
    given, problems = check_section(f"world.{name}", data, options)
    for key, message in problems:
        c.bad(key, message)
    return given


def _model(c: _Checker, i: int, data: Any, folder: Path) -> ModelConfig | None:
    key = f"models[{i}]"
    data = c.mapping(key, data)
    c.unknown(key, data, _fields(ModelConfig))
    name, file = data.get("name"), data.get("file")
    if not isinstance(name, str) or not name:
        c.bad(f"{key}.name", "required: a non-empty string")
        return None
    if not isinstance(file, str) or not file:
        c.bad(f"{key}.file", "required: the model file's path")
        return None
    path = (folder / file).resolve()
    if not path.is_file():
        c.bad(f"{key}.file", f"no such file: {path}")
    m = ModelConfig(name=name, file=str(path))
    if "static" in data and (flag := c.boolean(f"{key}.static", data["static"])) is not None:
        m.static = flag
    if "position" in data and (p := c.vector(f"{key}.position", data["position"], 3)) is not None:
        m.position = p
    if "rotation" in data and (r := c.vector(f"{key}.rotation", data["rotation"], 4)) is not None:
        m.rotation = r
    for jname, value in c.mapping(f"{key}.joints", data.get("joints")).items():
        if (v := c.number(f"{key}.joints.{jname}", value)) is not None:
            m.joints[str(jname)] = v
    drive = data.get("drive", "torque")
    if isinstance(drive, dict):
        m.drive = {str(j): mode for j, mode in drive.items() if c.choice(f"{key}.drive.{j}", mode, DRIVE_MODES)}
    elif c.choice(f"{key}.drive", drive, DRIVE_MODES):
        m.drive = drive
    m.options = c.mapping(f"{key}.options", data.get("options"))
    for option in ("lenient", "world"):
        if option in m.options:
            c.boolean(f"{key}.options.{option}", m.options[option])
    if data.get("devices") is not None:
        m.devices = _devices(c, f"{key}.devices", c.mapping(f"{key}.devices", data["devices"]))
    if "mass_scale" in data and (scale := c.number(f"{key}.mass_scale", data["mass_scale"], positive=True)):
        m.mass_scale = scale
    for link, mass in c.mapping(f"{key}.masses", data.get("masses")).items():
        if (kg := c.number(f"{key}.masses.{link}", mass, positive=True)) is not None:
            m.masses[str(link)] = kg
    return m


def noise_kinds() -> tuple[str, ...]:
    """What device noise may be put on: joint angles, and the readings of every type engines measure."""
    return ("q", *engine_sensor_types())


DEVICE_KEYS = {"encoder", "noise", "latency", "saturate_torque", "drop_commands", "watchdog_ms"}


def _devices(c: _Checker, key: str, data: dict[str, Any]) -> HardwareModelConfig:
    """``devices: {encoder: {counts_per_rev, gear_ratio}, noise: {seed, q|gyro|accel|force: {std, bias}},
    latency: {sensor, command} (ticks), saturate_torque, drop_commands (probability), watchdog_ms}``."""
    c.unknown(key, data, DEVICE_KEYS)
    d = HardwareModelConfig()
    encoder = c.mapping(f"{key}.encoder", data.get("encoder"))
    c.unknown(f"{key}.encoder", encoder, {"counts_per_rev", "gear_ratio"})
    for name, attr in (("counts_per_rev", "encoder_counts"), ("gear_ratio", "encoder_gear_ratio")):
        if name in encoder and (v := c.number(f"{key}.encoder.{name}", encoder[name], positive=True)) is not None:
            setattr(d, attr, v)
    noise = c.mapping(f"{key}.noise", data.get("noise"))
    kinds = noise_kinds()
    c.unknown(f"{key}.noise", noise, {"seed", *kinds})
    seed = noise.get("seed", 0)
    if isinstance(seed, int) and not isinstance(seed, bool) and seed >= 0:
        d.noise_seed = seed
    else:
        c.bad(f"{key}.noise.seed", f"must be a whole number >= 0, got {seed!r}")
    for kind in kinds:
        spec = c.mapping(f"{key}.noise.{kind}", noise.get(kind))
        c.unknown(f"{key}.noise.{kind}", spec, {"std", "bias"})
        if spec:
            std = c.number(f"{key}.noise.{kind}.std", spec.get("std", 0.0))
            bias = c.number(f"{key}.noise.{kind}.bias", spec.get("bias", 0.0))
            if std is not None and std < 0:
                c.bad(f"{key}.noise.{kind}.std", f"must be >= 0, got {std}")
            d.noise[kind] = NoiseConfig(std=abs(std or 0.0), bias=bias or 0.0)
    latency = c.mapping(f"{key}.latency", data.get("latency"))
    c.unknown(f"{key}.latency", latency, {"sensor", "command"})
    for name in ("sensor", "command"):
        value = latency.get(name, 0)
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            c.bad(f"{key}.latency.{name}", f"must be a whole number of ticks >= 0, got {value!r}")
        else:
            setattr(d, f"{name}_latency", value)
    d.saturate_torque = (
        "saturate_torque" in data and c.boolean(f"{key}.saturate_torque", data["saturate_torque"]) is True
    )
    drop = c.number(f"{key}.drop_commands", data.get("drop_commands", 0.0))
    if drop is not None and not 0.0 <= drop < 1.0:
        c.bad(f"{key}.drop_commands", f"must be a probability in [0, 1), got {drop}")
    d.drop_commands = drop if drop is not None and 0.0 <= drop < 1.0 else 0.0
    if "watchdog_ms" in data and (w := c.number(f"{key}.watchdog_ms", data["watchdog_ms"], positive=True)):
        d.watchdog = w / 1000.0
    return d


def _controller(c: _Checker, i: int, data: Any, folder: Path, timestep: float) -> ControllerConfig | None:
    key = f"controllers[{i}]"
    data = c.mapping(key, data)
    c.unknown(key, data, _fields(ControllerConfig))
    in_process = "in_process" in data and c.boolean(f"{key}.in_process", data["in_process"]) is True
    program = "file" if in_process else "command"
    missing = [k for k in ("name", "robot", program) if not isinstance(data.get(k), str) or not data.get(k)]
    for k in missing:
        c.bad(f"{key}.{k}", "required: a non-empty string" + (" (FILE.py or FILE.py:Class)" if k == "file" else ""))
    if missing:
        return None
    ctl = ControllerConfig(
        name=data["name"],
        robot=data["robot"],
        command=str(data.get("command", "")),
        in_process=in_process,
        options=dict(c.mapping(f"{key}.options", data.get("options"))),
        period=timestep,
    )
    if in_process:
        path, _, cls = data["file"].partition(":")
        ctl.file = str((folder / path).resolve()) + (f":{cls}" if cls else "")
    for k in ("period", "deadline"):
        if k in data and (v := c.number(f"{key}.{k}", data[k], positive=True)) is not None:
            setattr(ctl, k, v)
    if "policy" in data and c.choice(f"{key}.policy", data["policy"], POLICIES):
        ctl.policy = data["policy"]
    _restart(c, key, data, ctl)
    ctl.cwd = str(data.get("cwd", ""))
    ctl.env = {str(k): str(v) for k, v in c.mapping(f"{key}.env", data.get("env")).items()}
    return ctl


def _restart(c: _Checker, key: str, data: dict[str, Any], target: Any) -> None:
    if "restart" in data and c.choice(f"{key}.restart", data["restart"], RESTART_POLICIES):
        target.restart = data["restart"]
    if "restarts" in data:
        value = data["restarts"]
        if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
            target.restarts = value
        else:
            c.bad(f"{key}.restarts", f"must be a whole number >= 0, got {value!r}")


def _services(c: _Checker, data: Any) -> dict[str, Any]:
    """``services``: per restartable service, true/false or {restart, restarts}; ``loader: local``."""
    services = c.mapping("services", data)
    for name in RESTARTABLE_SERVICES:
        entry = services.get(name)
        if isinstance(entry, dict):
            c.unknown(f"services.{name}", entry, {"restart", "restarts"})
            _restart(c, f"services.{name}", entry, RestartConfig())
        elif name in services and name == "collision":
            c.boolean("services.collision", services["collision"])
    return services


def _collision(c: _Checker, i: int, data: Any) -> CollisionPair | None:
    key = f"collisions[{i}]"
    data = c.mapping(key, data)
    c.unknown(key, data, _fields(CollisionPair))
    if not isinstance(data.get("a"), str) or not isinstance(data.get("b"), str):
        c.bad(key, "needs 'a' and 'b': the names of two models (the same name twice for self-collision)")
        return None
    pair = CollisionPair(a=data["a"], b=data["b"], self_collision=data["a"] == data["b"])
    if "self_collision" in data:
        c.boolean(f"{key}.self_collision", data["self_collision"])
    for k in ("friction", "sliding_friction", "restitution", "soft_erp", "soft_cfm"):
        if data.get(k) is not None and (v := c.number(f"{key}.{k}", data[k])) is not None:
            if v < 0:  # a negative friction or restitution pushes bodies along or into each other
                c.bad(f"{key}.{k}", f"must not be negative, got {v:g}")
            else:
                setattr(pair, k, v)
    for k in ("links_a", "links_b"):
        links = data.get(k) or []
        if isinstance(links, list) and all(isinstance(name, str) and name for name in links):
            setattr(pair, k, list(links))
        else:
            c.bad(f"{key}.{k}", f"must be a list of link names, got {links!r}")
    return pair


def _extra_joint(c: _Checker, i: int, data: Any) -> ExtraJointConfig | None:
    key = f"extra_joints[{i}]"
    data = c.mapping(key, data)
    c.unknown(key, data, _fields(ExtraJointConfig))
    names = ("name", "model1", "link1", "model2", "link2")
    missing = [k for k in names if not isinstance(data.get(k), str) or not data.get(k)]
    for k in missing:
        c.bad(f"{key}.{k}", "required: a non-empty string")
    if missing:
        return None
    joint = ExtraJointConfig(**{k: data[k] for k in names})
    if "type" in data and c.choice(f"{key}.type", data["type"], EXTRA_JOINT_TYPES):
        joint.type = data["type"]
    for k in ("axis", "point1", "point2"):
        if k in data and (v := c.vector(f"{key}.{k}", data[k], 3)) is not None:
            setattr(joint, k, v)
    return joint


def _push(c: _Checker, i: int, data: Any) -> Push | None:
    key = f"disturbances[{i}]"
    data = c.mapping(key, data)
    c.unknown(key, data, _fields(Push))
    missing = [k for k in ("time", "robot", "link", "force", "duration") if k not in data]
    for k in missing:
        c.bad(f"{key}.{k}", "required (a push needs time, robot, link, force and duration)")
    for k in ("robot", "link"):
        if k in data and (not isinstance(data[k], str) or not data[k]):
            c.bad(f"{key}.{k}", f"must be a name, got {data[k]!r}")
            missing.append(k)
    if missing:
        return None
    time, duration = c.number(f"{key}.time", data["time"]), c.number(f"{key}.duration", data["duration"], positive=True)
    vectors = {k: c.vector(f"{key}.{k}", data[k], 3) for k in ("force", "point", "torque") if k in data}
    for name, values in vectors.items():
        if values is not None and (problem := push_vector_problem(name, values)):
            c.bad(f"{key}.{name}", problem)
            vectors[name] = None
    if time is not None and time < 0:
        c.bad(f"{key}.time", f"must be zero or later, got {time!r}")
        return None
    if time is None or duration is None or any(v is None for v in vectors.values()):
        return None
    return Push(time=time, robot=data["robot"], link=data["link"], duration=duration, **vectors)  # type: ignore[arg-type]


def push_vector_problem(name: str, values: list[float]) -> str | None:
    """Why a push's ``force``, ``torque`` or ``point`` (3 finite numbers) is past its bound, or None."""
    limit, unit = PUSH_BOUNDS[name]
    size = math.hypot(*values)
    if size <= limit:
        return None
    return f"at most {limit:g} {unit} in size (what the engines can integrate), got {size:.3g} {unit}"


def finite_number(value: int | float) -> bool:
    """Finite, and within a float's range (YAML reads 1e400 written out in digits as a whole number)."""
    return math.isfinite(value) if isinstance(value, float) else abs(value) < 2**1023


def _record(c: _Checker, data: Any, folder: Path) -> RecordConfig | None:
    if isinstance(data, str) and data:
        data = {"file": data}
    data = c.mapping("record", data)
    c.unknown("record", data, _fields(RecordConfig))
    file = data.get("file")
    if not isinstance(file, str) or not file.endswith(".mcap"):
        c.bad("record.file" if "file" in data else "record", f"must be the path of an .mcap file, got {file!r}")
        return None
    contacts = data.get("contacts", False)
    if not isinstance(contacts, bool):
        c.bad("record.contacts", f"must be true or false, got {contacts!r}")
        return None
    profile = data.get("profile", "hrpsim")
    if profile not in RECORD_PROFILES:
        c.bad("record.profile", f"must be one of {', '.join(RECORD_PROFILES)}, got {profile!r}")
        return None
    return RecordConfig(file=str((folder / file).resolve()), contacts=contacts, profile=profile)


def _cross_check(c: _Checker, p: Project) -> None:
    names = [m.name for m in p.models]
    for dup in sorted({n for n in names if names.count(n) > 1}):
        c.bad("models", f"two models are named {dup!r}")
    for i, ctl in enumerate(p.controllers):
        if ctl.robot not in names:
            c.bad(f"controllers[{i}].robot", f"no model named {ctl.robot!r} (models: {', '.join(names)})")
        if period_ticks(ctl.period, p.world.timestep) is None:
            c.bad(
                f"controllers[{i}].period", f"{ctl.period} is not a whole multiple of world.timestep {p.world.timestep}"
            )
    for i, pair in enumerate(p.collisions):
        for side in ("a", "b"):
            if getattr(pair, side) not in names:
                c.bad(f"collisions[{i}].{side}", f"no model named {getattr(pair, side)!r}")
    for i, joint in enumerate(p.extra_joints):
        for side in ("model1", "model2"):
            if getattr(joint, side) not in names:
                c.bad(f"extra_joints[{i}].{side}", f"no model named {getattr(joint, side)!r}")
    for i, push in enumerate(p.disturbances):
        if push.robot not in names:
            c.bad(f"disturbances[{i}].robot", f"no model named {push.robot!r} (models: {', '.join(names)})")


SECTIONS = {
    "world",
    "models",
    "controllers",
    "collisions",
    "extra_joints",
    "services",
    "security",
    "record",
    "disturbances",
}


def _empty_sections(c: _Checker, data: dict[str, Any]) -> None:
    """A section written with nothing after it: most often a file cut short, so refused rather
    than read as 'no models' or 'default world'."""
    for section in SECTIONS:
        if section in data and data[section] is None:
            c.bad(
                section,
                "is empty (nothing follows the key; is the file cut short?): give its entries or remove the key",
            )
    for section in ("models", "controllers", "collisions", "extra_joints", "disturbances"):
        items = data.get(section)
        for i, item in enumerate(items if isinstance(items, list) else []):
            if item is None:
                c.bad(f"{section}[{i}]", "is an empty entry (a '-' with nothing after it)")


def _keys(c: _Checker, data: Any, folder: Path) -> str | None:
    """``security: {keys: DIR}``: the CurveZMQ key folder (relative to the project), or None."""
    security = c.mapping("security", data)
    c.unknown("security", security, {"keys"})
    if "keys" not in security:
        return None
    if not isinstance(security["keys"], str) or not security["keys"]:
        c.bad("security.keys", "must be the path of a key folder (made by 'hrpsim keys new DIR')")
        return None
    return str((folder / security["keys"]).resolve())


def _notes(data: dict[str, Any], project: Project) -> list[str]:
    """What the project says that will have no effect, for the launcher to tell the user."""
    world = data.get("world") if isinstance(data.get("world"), dict) else {}
    if not project.models and "end_time" in world:
        return [
            "world.end_time has no effect in a project without models: nothing is simulated, so the "
            "stack runs until Ctrl-C or `hrpsim launch --until SECONDS`"
        ]
    return []


def parse_project(data: Any, path: str) -> Project:
    """Check and convert already-parsed YAML. Paths resolve against ``path``'s folder."""
    c = _Checker(path)
    folder = Path(path).resolve().parent
    if data is None:
        raise ConfigError(
            f"{path}: the project file is empty; it needs at least a 'world' or a 'models' "
            "section (see examples/box_drop.yaml)"
        )
    data = c.mapping("(top level)", data)
    c.unknown("", data, SECTIONS)
    _empty_sections(c, data)
    project = Project(path=str(Path(path).resolve()))
    project.world = _world(c, c.mapping("world", data.get("world")))
    for section, parse in (
        ("models", lambda i, d: _model(c, i, d, folder)),
        ("controllers", lambda i, d: _controller(c, i, d, folder, project.world.timestep)),
        ("collisions", lambda i, d: _collision(c, i, d)),
        ("extra_joints", lambda i, d: _extra_joint(c, i, d)),
        ("disturbances", lambda i, d: _push(c, i, d)),
    ):
        items = data.get(section) or []
        if not isinstance(items, list):
            c.bad(section, "must be a list")
            continue
        if section == "disturbances" and len(items) > MAX_PUSHES:
            c.bad(section, f"{len(items)} pushes, more than {MAX_PUSHES}: a run holds at most {MAX_PUSHES} at once")
            continue
        parsed = [parse(i, d) for i, d in enumerate(items)]
        setattr(project, section, [x for x in parsed if x is not None])
    project.only_listed_pairs = data.get("collisions") is not None  # a section, even empty, is the list
    project.services = _services(c, data.get("services"))
    project.keys = _keys(c, data.get("security"), folder)
    project.notes = _notes(data, project)
    if data.get("record") is not None:
        project.record = _record(c, data["record"], folder)
    for ctl in project.controllers:
        ctl.cwd = str((folder / ctl.cwd).resolve()) if ctl.cwd else str(folder)
    _cross_check(c, project)
    if c.problems:
        raise ConfigError("\n  ".join([f"{path}: {len(c.problems)} problem(s) in the project file:", *c.problems]))
    return project


def load_project(path: str | Path) -> Project:
    """Read a project file: YAML, or an OpenHRP3 GrxUI ``.xml``. Raises ConfigError naming the
    file, line and key."""
    path = Path(path)
    if path.suffix.lower() == ".xml":
        from hrpsim.grxui import read_grxui

        data, notes = read_grxui(path)
        project = parse_project(data, str(path))
        project.notes = [*notes, *project.notes]
        return project
    bounded = dataclasses.replace(current_policy(), max_file_bytes=MAX_PROJECT_FILE_BYTES)
    try:
        with reading_under(bounded):
            text = read_model(path, "project file", ConfigError).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text (byte {exc.start}); a project file is YAML") from None
    return parse_project(parse_yaml(text, path, "a project file"), str(path))


def parse_yaml(text: str, path: str | Path, what: str) -> Any:
    """YAML ``text`` of the file ``path``; ConfigError naming the file and line when it is not YAML,
    or nested deeper than the YAML reader follows (``what``: "a project file", for the message)."""
    try:
        return yaml.safe_load(text)
    except RecursionError:  # the YAML reader recurses once per level of nesting
        raise ConfigError(f"{path}: nested too deeply to be {what} (hundreds of levels)") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark else str(path)
        raise ConfigError(f"{where}: not valid YAML: {getattr(exc, 'problem', None) or exc}") from None


def apply_record_profile(project: Project, path: str | None, profile: str | None) -> None:
    """``--record-profile`` over the project's ``record: {profile: ...}`` (a ``--record`` path with
    no ``record:`` in the project gets one)."""
    if profile is None:
        return
    if project.record is None:
        if not path:
            raise ConfigError("--record-profile needs a recording: --record FILE.mcap or the project's record:")
        project.record = RecordConfig(file=str(Path(path).resolve()))
    project.record.profile = profile
