"""The OpenHRP3 sample humanoid (sample1.wrl): move to the initial pose, walk, then reach and touch.

What it does, in the order of OpenHRP3's SampleController:
1. from the pose it starts in, move smoothly (minimum jerk) to the first row of Sample.pos, which
   is the pattern's pose at t = 1.5 s, and hold it until then;
2. play the walking pattern Sample.pos / Sample.vel (t = 1.5 ... 10.4 s, a row every 2 ms, columns in
   jointId order), with the gains of SR_PDgain.dat;
3. reach forward with the right arm, slowly, until the right wrist force sensor (``rhsensor``)
   feels contact; then stop the arm where it is and hold. Contact is the force beyond the free
   arm's reading averaged over the last 10 ms, an impulse per time: a rigid contact (ODE) stops
   the hand within one step and reads its whole impulse in that step (about 5000 N for 2 ms),
   a soft one (MuJoCo) spreads the same impulse over some 20 ms, so the peak depends on the
   engine and the step and the average does not (docs/sensors.md, *Force sensors at impact*).

Drive: ``-o mode=torque`` (the default) computes the PD torques P (q_ref - q) + D (dq_ref - dq) with
the gains of SR_PDgain.dat, as OpenHRP3's SampleController does; the simulator adds each joint's
reflected rotor inertia in joint space, which is what makes these stiff gains stable.
``-o mode=high_gain`` sends the joint targets (q_ref, dq_ref) instead, tracked stiffly by the simulator.

    hrpsim controller examples/controllers/sample_walk.py --robot robot [-o mode=high_gain] [-o data=DIR]
"""

from __future__ import annotations

import logging
import sys
from collections import deque
from pathlib import Path

import numpy as np

from hrpsim.controllers import Controller, run_main
from hrpsim.motion_data import read_gains, read_motion

MODELS = Path(__file__).resolve().parents[2] / "models"
DATA = MODELS / "openhrp3" / "controller" / "SampleController" / "etc"
POSE_TIME = 1.0  # seconds to reach the initial pose
SETTLE = 0.5  # seconds of holding the last row before reaching
REACH_TIME = 3.0  # seconds for the arm to sweep to the reach pose
CONTACT_FORCE = 15.0  # newtons above the reading at the start of the reach, averaged over CONTACT_WINDOW
CONTACT_WINDOW = 0.01  # seconds
REACH_POSE = {"RARM_SHOULDER_P": -1.45, "RARM_SHOULDER_R": 0.0, "RARM_ELBOW": -0.25, "RARM_WRIST_P": 0.0}

log = logging.getLogger("sample_walk")


def min_jerk(s: float) -> float:
    s = min(max(s, 0.0), 1.0)
    return s * s * s * (10.0 - 15.0 * s + 6.0 * s * s)


class SampleWalk(Controller):
    def __init__(self, *, mode: str = "torque", data: str = str(DATA)) -> None:
        super().__init__()
        if mode not in ("high_gain", "torque"):
            raise ValueError(f"mode must be high_gain or torque, got {mode!r}")
        self.mode, self.data = mode, Path(data)
        self.q_start: np.ndarray | None = None
        self.reach_from: np.ndarray | None = None
        self.reach_start = 0.0
        self.force_at_reach: float = 0.0
        self.touched_at: float | None = None
        self.q_hold: np.ndarray | None = None
        self.moded = False

    def start(self, body) -> None:
        n = len(body.joint_names)
        self.pos = read_motion(self.data / "Sample.pos", joints=n)
        self.vel = read_motion(self.data / "Sample.vel", joints=n)
        self.p_gain, self.d_gain = read_gains(self.data / "SR_PDgain.dat", joints=n)
        self.felt: deque[float] = deque(maxlen=max(1, round(CONTACT_WINDOW / self.period)))
        self.reach_joints = np.array([self.joints.index(j) for j in REACH_POSE])
        self.reach_target = np.array(list(REACH_POSE.values()))
        self.q_start = None
        self.moded = False
        log.info("pattern %.3f..%.3f s, %d rows; mode %s", self.pos.start, self.pos.end, len(self.pos.times), self.mode)

    def control(self, state):
        if self.q_start is None:
            self.q_start = state.q.copy()
        q_ref, dq_ref = self.reference(state)
        if self.mode == "torque":
            cmd = self.torque(self.p_gain * (q_ref - state.q) + self.d_gain * (dq_ref - state.dq))
        else:
            cmd = self.targets(q_ref, dq_ref)
        if not self.moded:  # modes hold until changed: say it once
            self.moded = True
            cmd.mode_all(self.mode)
        return cmd

    def reference(self, state) -> tuple[np.ndarray, np.ndarray]:
        t = state.time
        first = self.pos.values[0]
        if t < self.pos.start:
            s = min_jerk(t / POSE_TIME)
            return self.q_start + s * (first - self.q_start), np.zeros_like(first)
        if t <= self.pos.end + SETTLE:
            return self.pos.at(t).copy(), (self.vel.at(t).copy() if t <= self.pos.end else np.zeros_like(first))
        return self.reach(state)

    def reach(self, state) -> tuple[np.ndarray, np.ndarray]:
        last = self.pos.values[-1].copy()
        force = float(np.linalg.norm(state.sensors["rhsensor"][:3])) if "rhsensor" in state.sensors else 0.0
        if self.reach_from is None:
            self.reach_from, self.reach_start, self.force_at_reach = last[self.reach_joints], state.time, force
            log.info("reaching with the right arm at t=%.3f", state.time)
        self.felt.append(force - self.force_at_reach)
        felt = sum(self.felt) / self.felt.maxlen  # the window's impulse per time, N
        if self.q_hold is None and felt > CONTACT_FORCE:
            self.touched_at = state.time
            self.q_hold = state.q[self.reach_joints].copy()
            log.info(
                "contact: the right wrist feels %.1f N over the last %.0f ms (%.1f N now) at t=%.3f; the arm stops",
                felt,
                self.felt.maxlen * self.period * 1e3,
                force,
                state.time,
            )
        if self.q_hold is not None:
            last[self.reach_joints] = self.q_hold
        else:
            s = min_jerk((state.time - self.reach_start) / REACH_TIME)
            last[self.reach_joints] = self.reach_from + s * (self.reach_target - self.reach_from)
        return last, np.zeros_like(last)

    def stop(self) -> None:
        if self.touched_at is not None:
            log.info("done: touched at t=%.3f", self.touched_at)
        else:
            log.info("stopped without feeling contact")


if __name__ == "__main__":
    sys.exit(run_main(SampleWalk))
