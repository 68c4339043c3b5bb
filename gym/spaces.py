"""What an agent sees and does: a robot's state as one flat observation vector, and an action vector
as the joint command of each joint's drive mode.

The observation is the state parts asked for (``q``, ``dq``, ``tau``, ``root_position``,
``root_rotation`` as its 9 matrix entries row by row, ``root_velocity`` linear then angular) and then
the sensors named, each in its reading's layout (docs/sensors.md), in the order given.

The action has one value per commanded joint, in the unit of the joint's drive mode: a torque (N m,
or N on a slide joint) for ``torque``, a target angle (rad, or m) for ``high_gain`` and a target
speed for ``velocity``. Its bounds are the model's limits of that quantity, or the ones given.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import gymnasium
import numpy as np

from hrpsim.bodyinfo import Body, Link
from hrpsim.controllers.state import State
from hrpsim.conventions import initial_drive_modes
from hrpsim.errors import ConfigError
from hrpsim.sensor_types import engine_sensor_types

STATE_PARTS = ("q", "dq", "tau", "root_position", "root_rotation", "root_velocity")
ROOT_PARTS = ("root_position", "root_rotation", "root_velocity")

# drive mode -> the command array it reads, and the model's limits of that quantity
COMMAND_OF_MODE = {"torque": "torque", "high_gain": "q_ref", "velocity": "dq_ref"}
_LIMITS_OF_MODE = {
    "torque": ("torque_lower", "torque_upper"),
    "high_gain": ("q_lower", "q_upper"),
    "velocity": ("dq_lower", "dq_upper"),
}


def default_parts(body: Body) -> tuple[str, ...]:
    """The joints' angles and speeds, and the root's pose and velocity when the root moves freely."""
    return ("q", "dq", *(ROOT_PARTS if body.root.joint_type == "free" else ()))


def joint_modes(body: Body, drive: str | dict[str, str]) -> list[str]:
    """Each joint's drive mode (controller order) from a project model's ``drive``: one mode, or
    joint -> mode with torque for the joints it leaves out."""
    modes = {**dict.fromkeys(body.joint_names, "torque"), **initial_drive_modes(body.name, drive, body.joint_names)}
    return [modes[name] for name in body.joint_names]


class ObservationLayout:
    """Where each state part and sensor sits in the observation vector (``slices``), and the space."""

    def __init__(self, body: Body, state: State, parts: Sequence[str], sensors: Sequence[str]) -> None:
        unknown = [p for p in parts if p not in STATE_PARTS]
        if unknown:
            raise ConfigError(
                f"observe: no state part {', '.join(map(repr, unknown))}; parts: {', '.join(STATE_PARTS)}"
            )
        _check_sensors(body, state, sensors)
        sizes = [(p, np.size(getattr(state, p))) for p in parts] + [(s, np.size(state.sensors[s])) for s in sensors]
        if not sizes:
            raise ConfigError("observe: nothing to observe; name state parts or sensors")
        self.parts, self.sensors = tuple(parts), tuple(sensors)
        self.slices: dict[str, slice] = {}
        start = 0
        for name, size in sizes:
            self.slices[name] = slice(start, start + size)
            start += size
        # unbounded, as Gymnasium's own MuJoCo environments are: a soft joint stop lets an angle
        # past its limit, and an observation outside its space would be an error
        self.space = gymnasium.spaces.Box(-np.inf, np.inf, (start,), np.float64)

    def __call__(self, state: State) -> np.ndarray:
        out = np.empty(self.space.shape, np.float64)
        for part in self.parts:
            out[self.slices[part]] = np.ravel(getattr(state, part))
        for sensor in self.sensors:
            out[self.slices[sensor]] = np.ravel(state.sensors[sensor])
        return out


def _check_sensors(body: Body, state: State, sensors: Sequence[str]) -> None:
    kinds = {s.name: s.type for s in body.sensors}
    # the types engines measure give one fixed-size reading in every state (range and vision
    # readings come at their own rate, only in the states that bring one)
    observable = engine_sensor_types()
    problems = []
    for name in sensors:
        if name not in kinds:
            problems.append(f"{body.name} has no sensor {name!r} (sensors: {', '.join(kinds) or 'none'})")
        elif kinds[name] not in observable:
            problems.append(
                f"sensor {name!r} is a {kinds[name]} sensor, whose readings come at its own rate; an "
                f"observation takes {', '.join(observable)} sensors (read others in the reward "
                "or termination function, from transition.after.sensors)"
            )
        elif name not in state.sensors:
            problems.append(f"sensor {name!r} gives no reading on this engine (readings: {', '.join(state.sensors)})")
    if problems:
        raise ConfigError("sensors: " + "; ".join(problems))


class ActionMap:
    """The action space of the chosen joints, and the command an action becomes.

    ``held_q`` are the joints' target angles while no action names them (the project's initial
    angles); joints left out of the action keep their initial commands."""

    def __init__(
        self,
        body: Body,
        modes: Sequence[str],
        held_q: np.ndarray,
        joints: Sequence[str] | None = None,
        limits: Mapping[str, tuple[float, float]] | None = None,
    ) -> None:
        names = body.joint_names
        chosen = list(names if joints is None else joints)
        unknown = [j for j in chosen if j not in names]
        if unknown or not chosen or len(set(chosen)) != len(chosen):
            raise ConfigError(
                f"joints: {', '.join(map(repr, unknown)) or 'a list with each joint once'} "
                f"({body.name}'s joints: {', '.join(names)})"
            )
        index = [names.index(j) for j in chosen]
        self.joint_names, self.modes = chosen, [modes[i] for i in index]
        self.modes_by_joint = dict(zip(chosen, self.modes, strict=True))
        low, high = _bounds(body, chosen, self.modes, dict(limits or {}))
        self.low, self.high = low, high
        self.space = gymnasium.spaces.Box(low.astype(np.float32), high.astype(np.float32), dtype=np.float32)
        self._held = {"torque": np.zeros(len(names)), "q_ref": np.array(held_q, float), "dq_ref": np.zeros(len(names))}
        # command array -> (the action's positions, the joints' positions in controller order)
        self._groups = {
            COMMAND_OF_MODE[mode]: (
                np.array([a for a, m in enumerate(self.modes) if m == mode]),
                np.array([index[a] for a, m in enumerate(self.modes) if m == mode]),
            )
            for mode in dict.fromkeys(self.modes)
        }

    def command(self, action: object) -> dict[str, np.ndarray]:
        """The full-length command arrays (controller order) for ``action``, clipped to its bounds;
        ValueError naming the joint for a wrong shape or a value that is not a number."""
        values = np.asarray(action, dtype=np.float64)
        if values.shape != (len(self.joint_names),):
            raise ValueError(
                f"action: expected {len(self.joint_names)} values (one per joint: {', '.join(self.joint_names)}), "
                f"got shape {values.shape}"
            )
        if not np.isfinite(values).all():
            i = int(np.flatnonzero(~np.isfinite(values))[0])
            raise ValueError(f"action[{i}] ({self.joint_names[i]}, {self.modes[i]}) is {values[i]}: not a number")
        values = np.minimum(np.maximum(values, self.low), self.high)
        out = {}
        for key, (in_action, in_joints) in self._groups.items():
            array = self._held[key].copy()
            array[in_joints] = values[in_action]
            out[key] = array
        return out


def _bounds(
    body: Body, chosen: list[str], modes: list[str], limits: dict[str, tuple[float, float]]
) -> tuple[np.ndarray, np.ndarray]:
    """Each chosen joint's bounds: ``limits`` by joint name, else by drive mode, else the model's
    (a hinge without angle limits turns through one turn, [-pi, pi])."""
    known = set(chosen) | set(COMMAND_OF_MODE)
    stray = sorted(set(limits) - known)
    if stray:
        raise ConfigError(
            f"action_limits: {', '.join(map(repr, stray))} is neither a chosen joint nor a drive mode "
            f"({', '.join(COMMAND_OF_MODE)})"
        )
    links = {lk.joint_label: lk for lk in body.joints}
    pairs = [limits.get(j) or limits.get(m) or _model_bounds(links[j], m) for j, m in zip(chosen, modes, strict=True)]
    low, high = (np.array(side, dtype=np.float64) for side in zip(*pairs, strict=True))
    unbounded = [
        f"{j} ({m})" for j, m, lo, hi in zip(chosen, modes, low, high, strict=True) if not math.isfinite(hi - lo)
    ]
    if unbounded:
        joint, mode = unbounded[0].split(" (")
        raise ConfigError(
            f"{body.name}: the model gives no limits for the action of {', '.join(unbounded)}; give them by "
            f"drive mode or by joint, e.g. action_limits={{'{mode[:-1]}': (-1.0, 1.0), '{joint}': (-2.0, 2.0)}}"
        )
    inverted = [j for j, lo, hi in zip(chosen, low, high, strict=True) if not lo < hi]
    if inverted:
        raise ConfigError(f"action_limits: low must be below high for {', '.join(inverted)}")
    return low, high


def _model_bounds(link: Link, mode: str) -> tuple[float, float]:
    lower, upper = (float(getattr(link, name)) for name in _LIMITS_OF_MODE[mode])
    if mode == "high_gain" and link.joint_type == "rotate" and not math.isfinite(upper - lower):
        return -math.pi, math.pi
    return lower, upper
