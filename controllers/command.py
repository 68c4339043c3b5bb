"""Building a controller's answer: per-joint torques or targets, and drive modes."""

from __future__ import annotations

from typing import Any

import numpy as np

from hrpsim.controllers.state import JointIndex
from hrpsim.conventions import drive_mode_problem
from hrpsim.errors import RequestError


class Command:
    """A command for one tick. Set whole arrays (``torque``, ``q_ref``, ``dq_ref``: one value per
    joint in controller order) or single joints by name with :meth:`set`; switch a joint's drive
    mode with :meth:`mode`; switch a range or vision sensor off or on with :meth:`sensor`. Quantities
    left unset keep the value the simulator holds.
    """

    def __init__(self, joints: JointIndex) -> None:
        self._joints = joints
        self.torque: np.ndarray | None = None
        self.q_ref: np.ndarray | None = None
        self.dq_ref: np.ndarray | None = None
        self.modes: dict[str, str] = {}
        self.sensors: dict[str, bool] = {}

    def set(
        self, joint: str, *, torque: float | None = None, q_ref: float | None = None, dq_ref: float | None = None
    ) -> Command:
        i = self._joints.index(joint)
        for key, value in (("torque", torque), ("q_ref", q_ref), ("dq_ref", dq_ref)):
            if value is not None:
                arr = getattr(self, key)
                if arr is None:
                    raise RequestError(
                        f"set the whole {key} array before setting {joint}'s {key} "
                        "(the simulator needs one value per joint)"
                    )
                arr[i] = value
        return self

    def mode(self, joint: str, mode: str) -> Command:
        self._joints.index(joint)  # NotFound naming the joints
        if (problem := drive_mode_problem(joint, mode, self._joints.index_of)) is not None:
            raise RequestError(f"mode of {joint}: {problem}")
        self.modes[joint] = mode
        return self

    def sensor(self, name: str, on: bool) -> Command:
        """Switch a range or vision sensor of the robot on or off (off: no more readings, no rendering)."""
        self.sensors[name] = bool(on)
        return self

    def mode_all(self, mode: str) -> Command:
        for name in self._joints.names:
            self.mode(name, mode)
        return self

    def fields(self) -> dict[str, Any]:
        """Keyword arguments for :func:`hrpsim.tick_protocol.command`."""
        return {
            "torque": self.torque,
            "q_ref": self.q_ref,
            "dq_ref": self.dq_ref,
            "modes": self.modes or None,
            "sensors": self.sensors or None,
        }


def answer_fields(result: Command | Any) -> dict[str, Any]:
    """What a controller's ``control()`` returned, as a command's fields (keyword arguments for
    :func:`hrpsim.tick_protocol.command`): None sends no change, a :class:`Command` its fields, anything
    else is taken as one torque per joint. The runner and the in-process peer both answer this way."""
    if result is None:
        return {}
    if isinstance(result, Command):
        return result.fields()
    return {"torque": np.asarray(result, dtype=np.float64)}
