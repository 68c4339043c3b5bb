"""What a controller sees each tick: the robot's state, by array and by joint or sensor name."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from hrpsim.errors import NotFound

if TYPE_CHECKING:
    from hrpsim.engines.base import RobotState, StateSource


@dataclass(frozen=True)
class JointReading:
    q: float
    dq: float
    tau: float


class JointIndex:
    """Joint names in controller order and the index of each; built once per attachment."""

    def __init__(self, names: list[str]) -> None:
        self.names = list(names)
        self.index_of = {n: i for i, n in enumerate(self.names)}

    def __len__(self) -> int:
        return len(self.names)

    def index(self, name: str) -> int:
        try:
            return self.index_of[name]
        except KeyError:
            raise NotFound(f"no joint named {name!r}; joints: {', '.join(self.names)}") from None


class State:
    """One tick's state of the robot.

    Arrays (joints in controller order): ``q``, ``dq``, ``tau``; ``root_position`` (3,),
    ``root_rotation`` (3, 3), ``root_velocity`` (6,) = linear then angular, world frame.
    By name: ``state.joint("RLEG_KNEE").q``, ``state.sensor("rhsensor")`` (force sensors are
    [fx, fy, fz, tx, ty, tz] in the sensor frame; gyro rad/s; accel m/s^2). Range and vision
    sensors are there only in the states that bring a new reading, as maps: ``{"time", "distances"}``
    and ``{"time", "color" | "mono" | "depth" ...}`` (see docs/sensors.md).
    """

    __slots__ = (
        "_joints",
        "dq",
        "q",
        "root_position",
        "root_rotation",
        "root_velocity",
        "sensors",
        "tau",
        "tick",
        "time",
    )

    def __init__(self, msg: dict[str, Any], joints: JointIndex) -> None:
        self._joints = joints
        self.tick: int = msg["tick"]
        self.time: float = float(msg["time"])
        self.q: np.ndarray = msg["q"]
        self.dq: np.ndarray = msg["dq"]
        self.tau: np.ndarray = msg["tau"]
        self.root_position: np.ndarray = msg["root_position"]
        self.root_rotation: np.ndarray = msg["root_rotation"]
        self.root_velocity: np.ndarray = msg["root_velocity"]
        self.sensors: dict[str, Any] = msg.get("sensors") or {}

    @classmethod
    def of(cls, state: RobotState, joints: JointIndex) -> State:
        """The state a controller in the simulator's process receives: the engine's reading itself,
        its arrays shared (no message between, so nothing to decode)."""
        self = cls.__new__(cls)
        self._joints = joints
        self.tick, self.time = state.tick, state.time
        self.q, self.dq, self.tau = state.q, state.dq, state.tau
        self.root_position, self.root_rotation = state.root_position, state.root_rotation
        self.root_velocity, self.sensors = state.root_velocity, state.sensors
        return self

    @property
    def joint_names(self) -> list[str]:
        return self._joints.names

    def joint(self, name: str) -> JointReading:
        i = self._joints.index(name)
        return JointReading(float(self.q[i]), float(self.dq[i]), float(self.tau[i]))

    def sensor(self, name: str) -> Any:
        try:
            return self.sensors[name]
        except KeyError:
            raise NotFound(
                f"no sensor reading named {name!r} in this state; readings: {', '.join(sorted(self.sensors)) or 'none'}"
            ) from None

    def __repr__(self) -> str:
        return f"{type(self).__name__}(tick={self.tick}, time={self.time:.4f}, joints={len(self._joints)})"


class LiveState(State):
    """The state a controller in the simulator's process receives: each field is the engine's
    own array for this tick (read only, filled in place by the engine: ``hrpsim.engines.base.
    StateSource``) and is made when the controller first reads it, so a tick makes no copies and
    no maps of what the controller does not read. The arrays are this tick's until the world
    steps: a controller that keeps values for a later tick keeps copies (``state.q.copy()``), as
    over the wire the decoded arrays are its own. Reading a field of a past tick's state that was
    not read in its tick is an error that says so."""

    __slots__ = ("_source",)

    def __init__(self, source: StateSource, tick: int, time: float, joints: JointIndex) -> None:
        self._source, self._joints, self.tick, self.time = source, joints, tick, time

    def __getattr__(self, name: str) -> Any:
        # Only a field not read yet gets here (an unset slot); once read it is a plain slot.
        if name in _JOINT_FIELDS:
            self.q, self.dq = self._source.field("joints", self.tick)
            return self.q if name == "q" else self.dq
        if name not in _OTHER_FIELDS:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        value = self._source.field(name, self.tick)
        setattr(self, name, value)
        return value


_JOINT_FIELDS = frozenset(("q", "dq"))
_OTHER_FIELDS = frozenset(("tau", "root_position", "root_rotation", "root_velocity", "sensors"))
