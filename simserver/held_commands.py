"""The full-length command arrays each robot holds, into which controllers' partial commands merge.

A command names some joints (or all); its values overwrite those joints' entries and the rest keep
what they held, so two controllers can drive disjoint joints of one robot."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from hrpsim import tick_protocol as proto
from hrpsim.engines.base import Engine, JointCommand


@dataclass
class _Held:
    torque: np.ndarray
    q_ref: np.ndarray
    dq_ref: np.ndarray
    every: np.ndarray = field(init=False)  # a command for every joint in order has these indices

    def __post_init__(self) -> None:
        self.every = proto.every_joint(self.torque.size)  # (one array serves every such command)


class HeldCommands:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self._held: dict[str, _Held] = {}

    def clear(self) -> None:
        self._held = {}

    def merge(self, robot: str, cmd: proto.Command) -> JointCommand:
        """The full-length command that results from merging ``cmd`` into what ``robot`` holds: its
        arrays are the held ones (the quantities the command sets; None for the others), this
        merge's values until the next merge into them."""
        held = self._held.get(robot) or self._of(robot)
        # a command for every joint in order (the usual one) overwrites whole arrays: no gathering
        indices = slice(None) if cmd.indices is held.every else cmd.indices
        merged = JointCommand(modes=cmd.modes or None)
        if cmd.torque is not None:
            held.torque[indices] = cmd.torque
            merged.torque = held.torque
        if cmd.q_ref is not None:
            held.q_ref[indices] = cmd.q_ref
            merged.q_ref = held.q_ref
        if cmd.dq_ref is not None:
            held.dq_ref[indices] = cmd.dq_ref
            merged.dq_ref = held.dq_ref
        return merged

    def memory(self) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """What each robot holds (copies), for a snapshot."""
        return {robot: (h.torque.copy(), h.q_ref.copy(), h.dq_ref.copy()) for robot, h in self._held.items()}

    def restore(self, memory: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]) -> None:
        self._held = {
            robot: _Held(*(np.array(a, dtype=np.float64) for a in arrays)) for robot, arrays in memory.items()
        }

    def zero_torque(self, robot: str, joints: list[str]) -> JointCommand:
        held = self._of(robot)
        held.torque[:] = 0.0
        return JointCommand(torque=held.torque.copy(), modes=dict.fromkeys(joints, "torque"))

    def _of(self, robot: str) -> _Held:
        held = self._held.get(robot)
        if held is None:
            q = np.array(self.engine.read(robot).q, dtype=np.float64)
            held = self._held[robot] = _Held(torque=np.zeros_like(q), q_ref=q, dq_ref=np.zeros_like(q))
        return held
