"""Drive Choreonoid's Tank (Tank/Tank.body) straight ahead on its two tracks and hold its turret.

A track (a crawler joint) takes its surface speed as its torque command (OpenHRP's convention);
the turret joints hold their starting angles with a PD law.

    hrpsim controller examples/controllers/tank_drive.py --robot tank -o speed=0.3
"""

from __future__ import annotations

import sys

import numpy as np

from hrpsim.controllers import Controller, run_main


class TankDrive(Controller):
    def __init__(self, *, speed: float = 0.3, p_gain: float = 50.0, d_gain: float = 2.0) -> None:
        super().__init__()
        self.speed, self.p_gain, self.d_gain = float(speed), float(p_gain), float(d_gain)
        self.q_ref: np.ndarray | None = None

    def start(self, body) -> None:
        self.is_track = np.array([lk.joint_type == "crawler" for lk in body.joints])
        self.q_ref = None

    def control(self, state):
        if self.q_ref is None:
            self.q_ref = state.q.copy()
        hold = self.p_gain * (self.q_ref - state.q) - self.d_gain * state.dq
        return np.where(self.is_track, self.speed, hold)


if __name__ == "__main__":
    sys.exit(run_main(TankDrive))
