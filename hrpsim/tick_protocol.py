"""The tick protocol: how a controller and the simulator meet, in one module.

Both sides import this module: the simulator's controller hub (simserver/hub.py) and the
controller SDK (controllers/). docs/protocol.md describes the same messages for writers of
controllers in other languages.

Transport: one ZeroMQ DEALER per controller connected to the simulator's ROUTER (the endpoint the
simserver publishes as ``metadata["controllers"]`` in its nameserver registration). Every message
is one frame: a msgpack map encoded by :data:`hrpsim.codec.CODEC` (numpy arrays travel as the
codec's extension type), with ``v`` (the protocol version) and ``type``:

controller -> simulator
    ``hello``   {controller, robot, period (s or nil: the project's), pid, policy?, deadline?, default_name?,
                 shared_memory?}
    ``command`` {tick, torque?, q_ref?, dq_ref?, modes?, joints?}
    ``bye``     {reason}
simulator -> controller
    ``welcome`` {controller, robot, period, every, timestep, sync, policy, deadline, joints, sensors, body,
                 end_time, shared_memory?}
    ``state``   {tick, time, q, dq, tau, root_position, root_rotation, root_velocity, sensors}
    ``error``   {kind, field, message, tick, fatal}
    ``bye``     {reason}

A command's arrays are full length (every joint in controller order) unless ``joints`` names the
joints they are for. ``modes`` maps joint names to ``torque``, ``high_gain`` or ``velocity``.
"""

from __future__ import annotations

import functools
import math
import os
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from hrpsim.codec import CODEC, PROTOCOL_VERSION
from hrpsim.conventions import POLICIES, drive_mode_problem
from hrpsim.errors import HrpsimError, ProtocolError, RequestError, error_from_wire

HELLO, WELCOME, STATE, COMMAND, ERROR, BYE = "hello", "welcome", "state", "command", "error", "bye"
TO_SIMULATOR = (HELLO, COMMAND, BYE)
TO_CONTROLLER = (WELCOME, STATE, ERROR, BYE)
COMMAND_ARRAYS = ("torque", "q_ref", "dq_ref")
COMMAND_FIELDS = frozenset(("v", "type", "tick", "joints", "modes", "sensors", *COMMAND_ARRAYS))
# The state's joint and root values a controller acts on; ``tau`` (the torque measured at the
# joints) may be unknown (NaN) at a tick where nothing has been applied yet.
MUST_BE_FINITE = frozenset(("q", "dq", "root_position", "root_rotation", "root_velocity"))
STATE_ARRAYS = {
    "q": (-1,),
    "dq": (-1,),
    "tau": (-1,),
    "root_position": (3,),
    "root_rotation": (3, 3),
    "root_velocity": (6,),
}


# --- framing ---


def encode(msg_type: str, **fields: Any) -> bytes:
    """One message frame of ``msg_type`` with ``fields``."""
    fields["v"] = PROTOCOL_VERSION
    fields["type"] = msg_type
    return CODEC.encode(fields)


def decode(frame: bytes, *, expect: tuple[str, ...]) -> dict[str, Any]:
    """Decode one frame and check its version and type (one of ``expect``); ProtocolError if not."""
    msg = CODEC.decode(frame)
    if not isinstance(msg, dict):
        raise ProtocolError(f"a tick message must be a map, got {type(msg).__name__}")
    version = msg.get("v")
    if version != PROTOCOL_VERSION:
        raise ProtocolError(
            f"peer speaks hrpsim protocol version {version!r}, this side speaks {PROTOCOL_VERSION}: "
            "run the same hrpsim version on both sides"
        )
    if msg.get("type") not in expect:
        raise ProtocolError(f"field 'type': expected one of {', '.join(expect)}, got {msg.get('type')!r}")
    return msg


# --- hello / welcome ---


@dataclass(frozen=True)
class Hello:
    controller: str
    robot: str
    period: float | None
    pid: int = 0
    policy: str | None = None  # only for controllers the project does not list
    deadline: float | None = None
    default_name: bool = False  # the name was not chosen: the project's entry for the robot may take its place
    shared_memory: bool = False  # it can take states and give commands in shared memory (hrpsim/shared_state.py)


def hello(
    controller: str,
    robot: str,
    *,
    period: float | None = None,
    policy: str | None = None,
    deadline: float | None = None,
    default_name: bool = False,
    shared_memory: bool = False,
) -> bytes:
    extra = {"shared_memory": True} if shared_memory else {}
    return encode(
        HELLO,
        controller=controller,
        robot=robot,
        period=period,
        pid=os.getpid(),
        policy=policy,
        deadline=deadline,
        default_name=default_name,
        **extra,
    )


def _name(msg: dict[str, Any], key: str) -> str:
    value = msg.get(key)
    if not isinstance(value, str) or not value:
        raise RequestError(f"hello field {key!r} must be a non-empty string, got {value!r}", field=key)
    return value


MAX_SECONDS = 3600.0


def _optional_positive(msg: dict[str, Any], key: str) -> float | None:
    """Seconds, positive and at most an hour: a larger value is a mistake or an attack, and would
    overflow the millisecond timeouts it becomes."""
    value = msg.get(key)
    if value is None:
        return None
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or value <= 0
        or value > MAX_SECONDS
    ):
        raise RequestError(
            f"hello field {key!r} must be a positive number of seconds up to {MAX_SECONDS:g}, or nil; got {value!r}",
            field=key,
        )
    return float(value)


def parse_hello(msg: dict[str, Any]) -> Hello:
    policy = msg.get("policy")
    if policy is not None and policy not in POLICIES:
        raise RequestError(
            f"hello field 'policy' must be one of {', '.join(POLICIES)} or nil, got {policy!r}", field="policy"
        )
    pid = msg.get("pid", 0)
    return Hello(
        controller=_name(msg, "controller"),
        robot=_name(msg, "robot"),
        period=_optional_positive(msg, "period"),
        pid=pid if isinstance(pid, int) else 0,
        policy=policy,
        deadline=_optional_positive(msg, "deadline"),
        default_name=msg.get("default_name") is True,
        shared_memory=msg.get("shared_memory") is True,
    )


@dataclass(frozen=True)
class Welcome:
    controller: str
    robot: str
    period: float
    every: int  # the controller's turn comes every ``every`` ticks
    timestep: float
    sync: str
    policy: str
    deadline: float
    joints: list[str]
    sensors: list[dict[str, Any]]
    body: dict[str, Any] = field(repr=False)
    end_time: float | None = None  # simulated time at which the run ends (a bye follows)
    gravity: list[float] | None = None  # the world's gravity (m/s^2); older simulators do not say
    root_position: list[float] | None = None  # where the project places the robot's root (m, world)
    root_rotation: list[list[float]] | None = None  # and how it turns it (3 x 3, rows); older ones do not say


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _is_vector(value: Any, length: int) -> bool:
    return isinstance(value, list) and len(value) == length and all(_is_number(x) for x in value)


# What each field of a welcome must be: (test, what the message says it must be)
_WELCOME_FIELDS: dict[str, tuple[Any, str]] = {
    "controller": (lambda v: isinstance(v, str), "a string"),
    "robot": (lambda v: isinstance(v, str), "a string"),
    "period": (lambda v: _is_number(v) and 0 < v <= MAX_SECONDS, f"a number of seconds > 0 and <= {MAX_SECONDS:g}"),
    "every": (lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 1, "an integer >= 1"),
    "timestep": (lambda v: _is_number(v) and v > 0, "a number of seconds > 0"),
    "sync": (lambda v: isinstance(v, str), "a string"),
    "policy": (lambda v: isinstance(v, str), "a string"),
    "deadline": (lambda v: _is_number(v) and v >= 0, "a number of seconds >= 0"),
    "joints": (lambda v: isinstance(v, list) and all(isinstance(n, str) for n in v), "a list of joint names"),
    "sensors": (lambda v: isinstance(v, list) and all(isinstance(s, dict) for s in v), "a list of maps"),
    "body": (lambda v: isinstance(v, dict), "a map (the robot's BodyInfo)"),
    "end_time": (lambda v: v is None or _is_number(v), "a number of seconds or nil"),
    "gravity": (
        lambda v: v is None or _is_vector(v, 3),
        "a list of three numbers (m/s^2) or nil",
    ),
    "root_position": (lambda v: v is None or _is_vector(v, 3), "a list of three numbers (m) or nil"),
    "root_rotation": (
        lambda v: v is None or (isinstance(v, list) and len(v) == 3 and all(_is_vector(row, 3) for row in v)),
        "three rows of three numbers (a rotation matrix) or nil",
    ),
}
OPTIONAL_WELCOME_FIELDS = ("end_time", "gravity", "root_position", "root_rotation")


def parse_welcome(msg: dict[str, Any]) -> Welcome:
    """A checked welcome; ProtocolError naming the first field that is missing or of the wrong kind."""
    for key, (valid, what) in _WELCOME_FIELDS.items():
        if key not in msg and key not in OPTIONAL_WELCOME_FIELDS:
            raise ProtocolError(f"welcome message lacks field {key!r}", field=key)
        if not valid(msg.get(key)):
            raise ProtocolError(f"welcome field {key!r} must be {what}, got {msg.get(key)!r:.80}", field=key)
    return Welcome(**{k: msg.get(k) for k in Welcome.__dataclass_fields__})


# --- state ---


def state(state_fields: dict[str, Any]) -> bytes:
    """The state frame of one robot: ``state_fields`` is ``World.state(robot)``."""
    return encode(STATE, **state_fields)


@functools.lru_cache(maxsize=64)
def _state_shapes(n_joints: int) -> tuple[tuple[str, tuple[int, ...]], ...]:
    return tuple((key, tuple(n_joints if s < 0 else s for s in shape)) for key, shape in STATE_ARRAYS.items())


def check_state(msg: dict[str, Any], n_joints: int) -> dict[str, Any]:
    """Check a received state's arrays (kind, shape, finite values); ProtocolError naming the field."""
    for key, want in _state_shapes(n_joints):
        value = msg.get(key)
        if not isinstance(value, np.ndarray) or value.shape != want:
            got = value.shape if isinstance(value, np.ndarray) else type(value).__name__
            raise ProtocolError(f"state field {key!r} must be an array of shape {want}, got {got}", field=key)
        if value.dtype.kind not in "fiu":
            raise ProtocolError(f"state field {key!r} must hold real numbers, got {value.dtype}", field=key)
        if key in MUST_BE_FINITE and not np.isfinite(value).all():
            raise ProtocolError(f"state field {key!r} holds non-finite values (NaN or infinity)", field=key)
    if not isinstance(msg.get("tick"), int) or not isinstance(msg.get("sensors", {}), dict):
        raise ProtocolError("state needs an integer 'tick' and a map 'sensors'", field="tick")
    return msg


# --- command ---


@dataclass(slots=True)
class Command:
    """A validated command, expanded to full-length arrays (None: leave that quantity unchanged).

    ``indices`` lists the joints the arrays' values are for (all joints for a full command).
    """

    tick: int
    indices: np.ndarray
    torque: np.ndarray | None = None
    q_ref: np.ndarray | None = None
    dq_ref: np.ndarray | None = None
    modes: dict[str, str] = field(default_factory=dict)
    sensors: dict[str, bool] = field(default_factory=dict)  # range/vision sensor -> switched on
    received: dict[str, Any] = field(default_factory=dict, repr=False)  # the message's fields as sent


def command(
    tick: int,
    *,
    torque: Any = None,
    q_ref: Any = None,
    dq_ref: Any = None,
    modes: dict[str, str] | None = None,
    joints: list[str] | None = None,
    sensors: dict[str, bool] | None = None,
) -> bytes:
    return encode(
        COMMAND,
        **command_fields(tick, torque=torque, q_ref=q_ref, dq_ref=dq_ref, modes=modes, joints=joints, sensors=sensors),
    )


def command_fields(
    tick: int,
    *,
    torque: Any = None,
    q_ref: Any = None,
    dq_ref: Any = None,
    modes: dict[str, str] | None = None,
    joints: list[str] | None = None,
    sensors: dict[str, bool] | None = None,
) -> dict[str, Any]:
    """A command message's fields (what :func:`parse_command` reads), before framing."""
    fields: dict[str, Any] = {"tick": tick}
    for key, value in (("torque", torque), ("q_ref", q_ref), ("dq_ref", dq_ref)):
        if value is not None:
            fields[key] = np.asarray(value, dtype=np.float64)
    if modes:
        fields["modes"] = modes
    if joints is not None:
        fields["joints"] = list(joints)
    if sensors:
        fields["sensors"] = dict(sensors)
    return fields


_FLOAT64 = np.dtype(np.float64)
_INFINITY = math.inf


@functools.cache
def every_joint(n: int) -> np.ndarray:
    """The indices of a full command (read only: one array serves every command of that length)."""
    indices = np.arange(n)
    indices.flags.writeable = False
    return indices


def _joint_indices(msg: dict[str, Any], joint_names: list[str], index_of: dict[str, int]) -> np.ndarray:
    names = msg.get("joints")
    if names is None:
        return every_joint(len(joint_names))
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise RequestError("command field 'joints' must be a list of joint names", field="joints")
    unknown = [n for n in names if n not in index_of]
    if unknown:
        raise RequestError(
            f"command field 'joints': unknown joint {unknown[0]!r} (joints: {', '.join(joint_names)})", field="joints"
        )
    if len(set(names)) != len(names):
        raise RequestError("command field 'joints' names a joint twice", field="joints")
    return np.array([index_of[n] for n in names], dtype=np.intp)


def _values(key: str, value: Any, indices: np.ndarray, joint_names: list[str]) -> np.ndarray:
    if type(value) is np.ndarray and value.dtype is _FLOAT64 and value.ndim == 1:  # the usual answer
        arr = value
    elif isinstance(value, np.ndarray):
        if value.dtype.kind not in "iuf" or value.ndim != 1:
            raise RequestError(
                f"command field {key!r} must be a 1-D numeric array, got {value.dtype} {value.shape}", field=key
            )
        arr = value.astype(np.float64)
    elif isinstance(value, list) and all(isinstance(x, int | float) and not isinstance(x, bool) for x in value):
        arr = np.array(value, dtype=np.float64)
    else:
        raise RequestError(f"command field {key!r} must be an array of numbers, got {type(value).__name__}", field=key)
    if arr.shape[0] != len(indices):
        raise RequestError(
            f"command field {key!r} has {arr.shape[0]} values, expected {len(indices)} "
            f"({'the joints named in joints' if len(indices) != len(joint_names) else 'one per joint'})",
            field=key,
        )
    # A finite sum of squares means every value is finite (one call; NaN fails the comparison); only
    # when it is not (a non-finite value, or finite ones whose squares overflow) is each looked at.
    if not arr.dot(arr) < _INFINITY and np.count_nonzero(np.isfinite(arr)) != arr.size:
        i = int(np.flatnonzero(~np.isfinite(arr))[0])
        raise RequestError(
            f"command field {key}[{i}] (joint {joint_names[indices[i]]}) is {arr[i]}: values must be finite",
            field=f"{key}[{i}]",
        )
    return arr


def parse_command(
    msg: dict[str, Any], *, joint_names: list[str], index_of: dict[str, int], expected_tick: int | None
) -> Command:
    """Check a command against the robot's joints and the tick it answers; RequestError naming the field."""
    if not COMMAND_FIELDS.issuperset(msg):
        extra = set(msg) - COMMAND_FIELDS
        raise RequestError(
            f"command has unknown field {sorted(extra)[0]!r} "
            f"(known: {', '.join(sorted(COMMAND_FIELDS - {'v', 'type'}))})",
            field=sorted(extra)[0],
        )
    tick = _checked_tick(msg.get("tick"), expected_tick)
    indices = _joint_indices(msg, joint_names, index_of)
    torque, q_ref, dq_ref = (
        None if msg.get(key) is None else _values(key, msg[key], indices, joint_names) for key in COMMAND_ARRAYS
    )
    modes = msg.get("modes") or {}
    if not isinstance(modes, dict):
        raise RequestError(
            f"command field 'modes' must be a map joint -> mode, got {type(modes).__name__}", field="modes"
        )
    for joint, mode in modes.items():
        if (problem := drive_mode_problem(joint, mode, index_of)) is not None:
            field = f"modes.{joint}" if joint in index_of else "modes"
            raise RequestError(f"command field '{field}': {problem}", field=field)
    received = {k: v for k, v in msg.items() if k not in ("v", "type")}
    sensors = _sensor_switches(msg.get("sensors"))
    return Command(tick, indices, torque, q_ref, dq_ref, modes=dict(modes), sensors=sensors, received=received)


def _checked_tick(tick: Any, expected_tick: int | None) -> int:
    if not isinstance(tick, int) or isinstance(tick, bool):
        raise RequestError(f"command field 'tick' must be an integer, got {tick!r}", field="tick")
    if expected_tick is not None and tick != expected_tick:
        raise RequestError(
            f"command field 'tick' is {tick}, expected {expected_tick} (answer the latest state)", field="tick"
        )
    return tick


def parse_full_command(
    msg: dict[str, Any], *, joint_names: list[str], index_of: dict[str, int], expected_tick: int | None
) -> Command:
    """:func:`parse_command` of a command whose fields are its tick and full-length arrays of the
    command's numbers, nothing else (one read from a shared memory segment, whose layout fixes their
    kinds and lengths): the same checks of the tick and of the values, with the same errors."""
    return _full_command(_checked_tick(msg["tick"], expected_tick), msg, joint_names)


def torque_answer(tick: int, torque: np.ndarray, *, joint_names: list[str]) -> Command:
    """What :func:`parse_command` makes of ``{"tick": tick, "torque": torque}`` for the tick it
    answers: an in-process controller's answer of one torque per joint, with the same checks of
    its values (and the same errors), without the message's own (this process made its fields)."""
    every = every_joint(len(joint_names))
    values = _values("torque", torque, every, joint_names)
    return Command(tick, every, values, received={"tick": tick, "torque": values})


def _full_command(tick: int, arrays: dict[str, Any], joint_names: list[str]) -> Command:
    """A command of full-length arrays (``COMMAND_ARRAYS`` keys; None or missing: unchanged), its
    values checked; ``received`` holds the checked arrays (float64)."""
    every = every_joint(len(joint_names))
    received: dict[str, Any] = {"tick": tick}
    for key in COMMAND_ARRAYS:  # (a loop: a comprehension and keyword expansion cost more than the checks)
        value = arrays.get(key)
        if value is not None:
            received[key] = _values(key, value, every, joint_names)
    get = received.get
    return Command(tick, every, get("torque"), get("q_ref"), get("dq_ref"), received=received)


def _sensor_switches(value: Any) -> dict[str, bool]:
    """The command's ``sensors`` field: range or vision sensor name -> true (on) / false (off).
    Whether the robot has such a sensor is the simulator's check."""
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(isinstance(k, str) and isinstance(v, bool) for k, v in value.items()):
        raise RequestError(
            f"command field 'sensors' must be a map sensor name -> true/false, got {value!r}", field="sensors"
        )
    return dict(value)


# --- error / bye ---


def error(
    message: str, *, field_name: str = "", tick: int | None = None, fatal: bool = False, kind: str = "RequestError"
) -> bytes:
    """An error for a controller. ``fatal``: the simulator has detached it (send hello to attach again).
    ``kind`` is the error's type name, as in an error reply: the SDK rebuilds that exception."""
    return encode(ERROR, kind=kind, field=field_name, message=message, tick=tick, fatal=fatal)


def error_for(exc: HrpsimError, *, default_field: str = "", tick: int | None = None, fatal: bool = False) -> bytes:
    """The error message for a refused hello or command: the exception's kind, message and field."""
    return error(str(exc), field_name=exc.field or default_field, tick=tick, fatal=fatal, kind=type(exc).__name__)


def error_of(msg: dict[str, Any], prefix: str = "") -> HrpsimError:
    """A received error message as the exception the simulator raised (RequestError, ...), its
    message after ``prefix``."""
    return error_from_wire(
        {"type": msg.get("kind") or "RequestError", "message": msg.get("message", ""), "field": msg.get("field") or ""},
        prefix,
    )


def bye(reason: str) -> bytes:
    return encode(BYE, reason=reason)
