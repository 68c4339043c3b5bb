"""OpenHRP3's sample humanoid (sample1) keeps its balance after a push, with the hip strategy.

Stance: over the first second the robot bends its knees (hip, knee and ankle pitch), then holds
that posture in high-gain mode, its feet where they stand. Each tick after that:

- the centre of mass and its velocity from the toolkit's model give the capture point
  ``xi = x + v / omega`` (omega = sqrt(g / z), the linear inverted pendulum's): where the centre of
  mass would come to rest. Once it is more than ``zone`` m from where the commanded posture's
  centre of mass stands (the planning model's), the feet alone
  cannot stop the fall (their ZMP cannot leave the soles);
- so the trunk leans towards the fall, by ``gain`` rad per m beyond the zone, at most ``max_lean``,
  at ``rate`` rad/s: swinging the upper body forward drives the hips and the centre of mass back
  (the hip strategy), with angular momentum the feet alone cannot give;
- the ZMP from the ankle force sensors says when the danger is over: while it is within
  ``edge`` m of a sole's edge the feet are tipping and the lean is held; once it is back inside
  and the capture point is in the zone, the trunk comes back upright slowly (``return_rate``);
- IK puts the feet back where they stand under the leaning trunk (damped least squares over the
  leg joints, the root posed as wanted), and the legs get those joint targets.

``-o feedback=false`` holds the stance without reacting: the plain hold, for comparison.

    hrpsim launch examples/sample_push.yaml
"""

from __future__ import annotations

import sys

import numpy as np

from hrpsim.controllers import Controller, run_main
from hrpsim.controllers.ik import IKOptions, Target
from hrpsim.controllers.model import RobotModel
from hrpsim.transforms import axis_angle_matrix

FEET = ("RLEG_ANKLE_R", "LLEG_ANKLE_R")
IK_OPTIONS = IKOptions(max_iterations=30, tolerance=1e-9, rotation_tolerance=1e-9)


class SampleBalance(Controller):
    def __init__(
        self,
        *,
        feedback: bool = True,
        zone: float = 0.05,
        gain: float = 10.0,
        max_lean: float = 0.3,
        rate: float = 1.5,
        return_rate: float = 0.15,
        edge: float = 0.02,
        bend: float = 0.25,
        stance_time: float = 1.0,
    ) -> None:
        super().__init__()
        self.feedback, self.zone, self.gain, self.max_lean = feedback, zone, gain, max_lean
        self.rate, self.return_rate, self.edge = rate, return_rate, edge
        self.bend, self.stance_time = bend, stance_time

    def start(self, body) -> None:
        self.planner = RobotModel(body)  # where IK tries postures; self.model stays the robot's
        self.initial = self.base = None
        self.lean = 0.0

    def stance(self, share: float) -> np.ndarray:
        """The initial joints with the knees bent by ``share`` of the stance."""
        q = self.initial.copy()
        for side in ("RLEG", "LLEG"):
            for joint, factor in (("HIP_P", -1.0), ("KNEE", 2.0), ("ANKLE_P", -1.0)):
                q[self.joints.index(f"{side}_{joint}")] += factor * self.bend * share
        return q

    def control(self, state):
        if self.initial is None:
            self.initial = state.q.copy()
        if state.time < self.stance_time:
            return self.targets(self.stance(0.5 - 0.5 * np.cos(np.pi * state.time / self.stance_time)))
        if self.base is None:
            self.settle(state)
        if self.feedback:
            self.lean = self.next_lean(self.lean_wanted(state))
        return self.targets(self.legs_for(self.lean))

    def settle(self, state) -> None:
        """The stance is taken: remember where the root and the feet are."""
        model = self.model
        self.q_ref = self.stance(1.0)
        self.base = (state.root_position.copy(), state.root_rotation.copy())
        self.feet = [
            Target(n, position=model.link_pose(n).position, rotation=model.link_pose(n).rotation) for n in FEET
        ]
        self.legs = [n for n in model.joint_names if "LEG" in n]
        self.omega = np.sqrt(-model.pin_model.gravity.linear[2] / model.com()[2])
        self.rest = self.posture_com = model.com()[0]
        self.soles = sole_extent(self.body, model)

    def lean_wanted(self, state) -> float:
        model = self.model
        capture = model.com()[0] + model.com_velocity()[0] / self.omega
        off = capture - self.rest
        if abs(off) > self.zone and off * self.lean >= 0.0:
            return float(np.sign(off) * min(self.max_lean, self.gain * (abs(off) - self.zone)))
        zmp = model.sensor_zmp(state)
        heel, toe = self.soles
        settled = abs(capture - self.posture_com) < self.zone / 2
        if zmp is None or not heel + self.edge < zmp[0] < toe - self.edge or not settled:
            return self.lean  # in the air, tipping on an edge or still moving: hold on
        return 0.0

    def next_lean(self, wanted: float) -> float:
        """Towards ``wanted``: fast when leaning further, slowly when coming back."""
        further = abs(wanted) > abs(self.lean) and wanted * self.lean >= 0.0
        step = (self.rate if further else self.return_rate) * self.period
        return self.lean + float(np.clip(wanted - self.lean, -step, step))

    def legs_for(self, lean: float) -> np.ndarray:
        """Leg joints that keep the feet where they stand with the trunk leaning by ``lean`` (pitch)."""
        position, rotation = self.base
        self.planner.set(
            self.q_ref, root_position=position, root_rotation=rotation @ axis_angle_matrix([0, 1, 0], lean)
        )
        self.q_ref = self.planner.solve_ik(self.feet, joints=self.legs, options=IK_OPTIONS).q
        self.planner.set(self.q_ref)
        self.posture_com = self.planner.com()[0]  # where this posture's centre of mass stands still
        return self.q_ref


def sole_extent(body, model: RobotModel) -> tuple[float, float]:
    """World x of the heel and the toe: the soles' boxes, both feet."""
    ends = []
    for foot in FEET:
        pose = model.link_pose(foot)
        for shape in body.links[body.link_index(foot)].shapes:
            if shape.kind == "box":
                for sign in (-1.0, 1.0):
                    corner = shape.translation + shape.rotation @ (sign * shape.size / 2.0)
                    ends.append(float((pose.position + pose.rotation @ corner)[0]))
    return min(ends), max(ends)


if __name__ == "__main__":
    sys.exit(run_main(SampleBalance))
