"""Hold every joint at the angle it starts at, with a PD law whose gains suit the robot.

Without ``p_gain``/``d_gain`` each joint's gains come from the robot's model: critically damped on
the joint's inertia (mass matrix and rotor inertia), stable at the controller's period
(hrpsim.toolkit.gains, docs/physics.md "Stable PD gains"). Given, they apply to every joint.

hrpsim controller examples/controllers/hold_pose.py --robot robot -o p_gain=400 -o d_gain=20
"""

import sys

from hrpsim.controllers import Controller, run_main
from hrpsim.toolkit.gains import hold_gains


class HoldPose(Controller):
    def __init__(self, *, p_gain: float | None = None, d_gain: float | None = None) -> None:
        super().__init__()
        self.p_gain, self.d_gain, self.q_ref = p_gain, d_gain, None

    def control(self, state):
        if self.q_ref is None:
            self.q_ref = state.q.copy()
            p, d = hold_gains(self.model, self.period)  # per joint, from the robot's model at this pose
            self.p_gain = p if self.p_gain is None else self.p_gain
            self.d_gain = d if self.d_gain is None else self.d_gain
        return self.p_gain * (self.q_ref - state.q) - self.d_gain * state.dq  # joint torques


if __name__ == "__main__":
    sys.exit(run_main(HoldPose))
