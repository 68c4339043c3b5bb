"""Hold every joint at the angle it starts at, with a PD law: the smallest useful controller.

hrpsim controller examples/controllers/hold_pose.py --robot robot -o p_gain=400
"""

import sys

from hrpsim.controllers import Controller, run_main


class HoldPose(Controller):
    def __init__(self, *, p_gain: float = 400.0, d_gain: float = 20.0) -> None:
        super().__init__()
        self.p_gain, self.d_gain = p_gain, d_gain
        self.q_ref = None

    def control(self, state):
        if self.q_ref is None:
            self.q_ref = state.q.copy()
        return self.p_gain * (self.q_ref - state.q) - self.d_gain * state.dq  # joint torques


if __name__ == "__main__":
    sys.exit(run_main(HoldPose))
