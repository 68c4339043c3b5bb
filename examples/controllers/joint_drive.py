"""Turn some joints at a steady speed and hold others at an angle, with a PD law on each; every
other joint is left free (no torque): the passive joints of a linkage follow its loops.

    hrpsim controller examples/controllers/joint_drive.py --robot bar -o speeds=CRANK:6.0
    hrpsim controller examples/controllers/joint_drive.py --robot car -o speeds=RL:8,RR:8 -o angles=STEER_L:0.3

A joint turning at speed v follows q_start + v t; a held joint follows its angle (ramped from its
start over ``ramp`` seconds, so that a far target does not jerk the robot).
"""

from __future__ import annotations

import sys

import numpy as np

from hrpsim.controllers import Controller, run_main
from hrpsim.errors import ConfigError


def _joint_values(text: str, what: str) -> dict[str, float]:
    """``"A:1.5,B:-2"`` -> {"A": 1.5, "B": -2.0}."""
    values = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        name, sep, value = item.partition(":")
        try:
            values[name] = float(value)
        except ValueError:
            sep = ""
        if not sep:
            raise ConfigError(f"-o {what}={text}: write JOINT:VALUE pairs separated by commas")
    return values


class JointDrive(Controller):
    def __init__(
        self, *, speeds: str = "", angles: str = "", p_gain: float = 200.0, d_gain: float = 10.0, ramp: float = 0.5
    ) -> None:
        super().__init__()
        self.speeds, self.angles = _joint_values(speeds, "speeds"), _joint_values(angles, "angles")
        self.p_gain, self.d_gain, self.ramp = float(p_gain), float(d_gain), max(float(ramp), 1e-9)
        self.start_q: np.ndarray | None = None

    def start(self, body) -> None:
        names = body.joint_names
        unknown = sorted((set(self.speeds) | set(self.angles)) - set(names))
        if unknown:
            raise ConfigError(
                f"{type(self).__name__}: no joint named {', '.join(unknown)} (joints: {', '.join(names)})"
            )
        self.speed = np.array([self.speeds.get(name, 0.0) for name in names])
        self.driven = np.array([name in self.speeds or name in self.angles for name in names])
        self.angle = np.array([self.angles.get(name, np.nan) for name in names])
        self.start_q = None

    def control(self, state):
        if self.start_q is None:
            self.start_q, self.start_time = state.q.copy(), state.time
        elapsed = state.time - self.start_time
        held = self.start_q + (self.angle - self.start_q) * min(elapsed / self.ramp, 1.0)
        target = np.where(np.isnan(self.angle), self.start_q + self.speed * elapsed, held)
        torque = self.p_gain * (target - state.q) + self.d_gain * (self.speed - state.dq)
        return np.where(self.driven, torque, 0.0)


if __name__ == "__main__":
    sys.exit(run_main(JointDrive))
