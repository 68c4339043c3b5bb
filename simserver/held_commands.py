"""The full-length command arrays each robot holds, into which controllers' partial commands merge.

A command names some joints (or all); its values overwrite those joints' entries and the rest keep
what they held, so two controllers can drive disjoint joints of one robot."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hrpsim import tick as proto
from hrpsim.engines.base import Engine, JointCommand


@dataclass
class _Held:
    torque: np.ndarray
    q_ref: np.ndarray
    dq_ref: np.ndarray


class HeldCommands:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self._held: dict[str, _Held] = {}

    def clear(self) -> None:
        self._held = {}

    def merge(self, robot: str, cmd: proto.Command) -> JointCommand:
        """The full-length command that results from merging ``cmd`` into what ``robot`` holds."""
        held = self._of(robot)
        # a command for every joint in order (the usual one) overwrites whole arrays: no gathering
        every = cmd.indices is proto.every_joint(held.torque.size)
        merged = JointCommand(modes=cmd.modes or None)
        for key in proto.COMMAND_ARRAYS:
            values = getattr(cmd, key)
            if values is not None:
                target = getattr(held, key)
                if every:
                    target[:] = values
                else:
                    target[cmd.indices] = values
                setattr(merged, key, target.copy())
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
