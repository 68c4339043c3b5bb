"""The PA10 arm (PA10/pa10.main.wrl) following OpenHRP3's PA10Controller data.

angle.dat / vel.dat hold a joint trajectory (a row every 1 ms from t = 0.001 s, 9 columns in
jointId order: J1..J7, HAND_L, HAND_R); PDgain.dat holds a P and D gain per joint. In ``torque``
mode (the default, as OpenHRP3's PA10Controller) the controller sends P (q_ref - q) + D (dq_ref - dq);
in ``high_gain`` mode it sends the targets and the simulator tracks them stiffly.

    hrpsim controller examples/controllers/pa10_follow.py --robot pa10 [-o mode=high_gain]
"""

from __future__ import annotations

import sys
from pathlib import Path

from hrpsim.controllers import Controller, run_main
from hrpsim.motion_data import read_gains, read_motion

DATA = Path(__file__).resolve().parents[2] / "models" / "openhrp3" / "controller" / "PA10Controller" / "etc"


class PA10Follow(Controller):
    def __init__(self, *, mode: str = "torque", data: str = str(DATA)) -> None:
        super().__init__()
        if mode not in ("high_gain", "torque"):
            raise ValueError(f"mode must be high_gain or torque, got {mode!r}")
        self.mode, self.data = mode, Path(data)
        self.moded = False

    def start(self, body) -> None:
        n = len(body.joint_names)
        self.angle = read_motion(self.data / "angle.dat", joints=n)
        self.vel = read_motion(self.data / "vel.dat", joints=n)
        self.p_gain, self.d_gain = read_gains(self.data / "PDgain.dat", joints=n)
        self.moded = False

    def control(self, state):
        # the row for the end of this period: the state is at t, the command acts until t + period
        q_ref = self.angle.at(state.time + self.period)
        dq_ref = self.vel.at(state.time + self.period)
        if self.mode == "torque":
            cmd = self.torque(self.p_gain * (q_ref - state.q) + self.d_gain * (dq_ref - state.dq))
        else:
            cmd = self.targets(q_ref, dq_ref)
        if not self.moded:
            self.moded = True
            cmd.mode_all(self.mode)
        return cmd


if __name__ == "__main__":
    sys.exit(run_main(PA10Follow))
