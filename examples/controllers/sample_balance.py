"""OpenHRP3's sample humanoid (sample1) keeps its balance after a push, with the hip strategy, and
straightens up again once it has come to rest.

Stance: over the first second the robot bends its knees (hip, knee and ankle pitch), then holds
that posture in high-gain mode, its feet where they stand. Each tick after that:

- the centre of mass and its velocity from the toolkit's model give the capture point
  ``xi = x + v / omega`` (omega = sqrt(g / z), the linear inverted pendulum's): where the centre of
  mass would come to rest. Once it is more than ``zone`` m from where the centre of mass stood, the
  feet alone cannot stop the fall (their ZMP cannot leave the soles);
- so the trunk leans towards the fall (reacting), by ``gain`` rad per m beyond the zone, at most
  ``max_lean``, at ``rate`` rad/s: swinging the upper body forward drives the hips and the centre
  of mass back (the hip strategy), with angular momentum the feet alone cannot give;
- once the capture point is back within ``zone / 2`` of where the leaning posture's centre of mass
  stands, the push is caught (recovering) and the lean is held still. The robot still rocks on its
  heels and toes; each landing drains the rocking, as long as the trunk does not swing in time with
  it (a lean that keeps following the capture point feeds the rocking for good). Only a new push,
  one that asks for more lean than the robot has, makes it react again;
- the robot is balanced when the capture point is within ``zone / 2`` of the posture's centre of
  mass, the ZMP from the ankle force sensors is more than ``edge`` m inside the soles (the feet
  flat, not tipping on an edge) and the centre of mass moves less than ``still`` m/s apart from the
  posture's own motion. After ``quiet_time`` s balanced the trunk straightens up, at most
  ``return_rate`` rad/s, speeding up and slowing down at ``return_accel`` rad/s^2 (a sudden start
  or stop of the trunk jolts the feet onto an edge), and easing off whenever the robot is not
  balanced. Upright and balanced, it stands as before the push, ready to react again;
- IK puts the feet back where they stand under the leaning trunk (damped least squares over the
  leg joints, the root posed as wanted), and the legs get those joint targets: upright again, the
  legs are back in the starting stance.

``-o feedback=false`` holds the stance without reacting: the plain hold, for comparison.

    hrpsim launch examples/sample_push.yaml
"""

from __future__ import annotations

import logging
import sys

import numpy as np

from hrpsim.bodyinfo import Body
from hrpsim.controllers import Controller, run_main
from hrpsim.controllers.command import Command
from hrpsim.controllers.state import State
from hrpsim.toolkit.ik import IKOptions, Target
from hrpsim.toolkit.model import RobotModel
from hrpsim.transforms import axis_angle_matrix

FEET = ("RLEG_ANKLE_R", "LLEG_ANKLE_R")
IK_OPTIONS = IKOptions(max_iterations=30, tolerance=1e-9, rotation_tolerance=1e-9)
STANDING, REACTING, RECOVERING = "standing", "reacting", "recovering"

log = logging.getLogger("sample_balance")


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
        return_accel: float = 0.5,
        still: float = 0.02,
        quiet_time: float = 0.3,
        edge: float = 0.02,
        bend: float = 0.25,
        stance_time: float = 1.0,
    ) -> None:
        super().__init__()
        self.feedback, self.zone, self.gain, self.max_lean, self.rate = feedback, zone, gain, max_lean, rate
        self.return_rate, self.return_accel = return_rate, return_accel
        self.still, self.quiet_time, self.edge = still, quiet_time, edge
        self.bend, self.stance_time = bend, stance_time

    def start(self, body: Body) -> None:
        self.planner = RobotModel(body)  # where IK tries postures; self.model stays the robot's
        self.initial = self.base = None
        self.lean = 0.0
        self.mode = STANDING
        self.quiet = 0.0  # s the robot has been balanced
        self.straighten = 0.0  # rad/s, the trunk coming back upright

    def stance(self, share: float) -> np.ndarray:
        """The initial joints with the knees bent by ``share`` of the stance."""
        q = self.initial.copy()
        for side in ("RLEG", "LLEG"):
            for joint, factor in (("HIP_P", -1.0), ("KNEE", 2.0), ("ANKLE_P", -1.0)):
                q[self.joints.index(f"{side}_{joint}")] += factor * self.bend * share
        return q

    def control(self, state: State) -> Command:
        if self.initial is None:
            self.initial = state.q.copy()
        if state.time < self.stance_time:
            return self.targets(self.stance(0.5 - 0.5 * np.cos(np.pi * state.time / self.stance_time)))
        if self.base is None:
            self.settle(state)
        if self.feedback:
            self.steer(state)
        return self.targets(self.legs_for(self.lean))

    def settle(self, state: State) -> None:
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
        self.posture_velocity = 0.0
        self.soles = sole_extent(self.body, model)

    def steer(self, state: State) -> None:
        """This tick's lean, by what the robot is doing."""
        model = self.model
        capture = float(model.com()[0] + model.com_velocity()[0] / self.omega)
        wanted = self.lean_wanted(capture)
        if self.mode != REACTING and abs(wanted) > abs(self.lean):
            self.enter(REACTING, state)  # pushed (again): more lean than the robot has
        if self.mode == REACTING:
            if abs(self.capture_error(capture)) < self.zone / 2:
                self.enter(RECOVERING, state)  # caught
            else:
                self.lean = self.next_lean(wanted)
        if self.mode == RECOVERING:
            self.recover(state, capture)

    def enter(self, mode: str, state: State) -> None:
        log.info("%s at t=%.3f (lean %.3f rad)", mode, state.time, self.lean)
        self.mode, self.quiet, self.straighten = mode, 0.0, 0.0  # a reaction takes the lean over at once

    def lean_wanted(self, capture: float) -> float:
        """Towards the fall while the capture point is beyond the zone; else the lean as it is."""
        off = capture - self.rest
        if abs(off) > self.zone and off * self.lean >= 0.0:
            return float(np.sign(off) * min(self.max_lean, self.gain * (abs(off) - self.zone)))
        return self.lean

    def next_lean(self, wanted: float) -> float:
        """Towards ``wanted``: fast when leaning further, slowly when coming back."""
        further = abs(wanted) > abs(self.lean) and wanted * self.lean >= 0.0
        step = (self.rate if further else self.return_rate) * self.period
        return self.lean + float(np.clip(wanted - self.lean, -step, step))

    def capture_error(self, capture: float) -> float:
        """How far the capture point is from where the commanded posture's centre of mass stands,
        measured from the feet (they may have slid a little since the stance was taken)."""
        slid = np.mean([self.model.link_pose(f.link).position[0] - f.position[0] for f in self.feet])
        return float(capture - slid - self.posture_com)

    def recover(self, state: State, capture: float) -> None:
        """Hold the lean while the robot rocks; once balanced for a while, straighten up."""
        balanced = self.balanced(state, self.capture_error(capture))
        self.quiet = self.quiet + self.period if balanced else 0.0
        if self.quiet - self.period < self.quiet_time <= self.quiet:
            log.info(
                "balanced for %.1f s at t=%.3f: straightening up (lean %.3f rad)", self.quiet, state.time, self.lean
            )
        self.straighten = self.straightening_speed(self.quiet >= self.quiet_time)
        self.lean -= float(np.sign(self.lean)) * min(self.straighten * self.period, abs(self.lean))
        if self.lean == 0.0 and self.quiet >= self.quiet_time:
            self.enter(STANDING, state)

    def straightening_speed(self, go: bool) -> float:
        """rad/s: up to ``return_rate`` while ``go``, down to nothing otherwise, at ``return_accel``;
        slowing down before upright, so that it arrives without a jolt too."""
        change = self.return_accel * self.period
        speed = self.straighten + change if go else self.straighten - change
        arrive = np.sqrt(2.0 * self.return_accel * abs(self.lean))
        return float(np.clip(speed, 0.0, min(self.return_rate, arrive + change)))

    def balanced(self, state: State, error: float) -> bool:
        """Capture point in, feet flat by the ZMP, and the centre of mass moving only with the posture."""
        zmp = self.model.sensor_zmp(state)
        heel, toe = self.soles
        if zmp is None or not heel + self.edge < zmp[0] < toe - self.edge:
            return False  # in the air or tipping on an edge
        drift = self.model.com_velocity()[0] - self.posture_velocity
        return abs(error) < self.zone / 2 and abs(drift) < self.still

    def legs_for(self, lean: float) -> np.ndarray:
        """Leg joints that keep the feet where they stand with the trunk leaning by ``lean`` (pitch)."""
        position, rotation = self.base
        self.planner.set(
            self.q_ref, root_position=position, root_rotation=rotation @ axis_angle_matrix([0, 1, 0], lean)
        )
        self.q_ref = self.planner.solve_ik(self.feet, joints=self.legs, options=IK_OPTIONS).q
        self.planner.set(self.q_ref)
        com = self.planner.com()[0]  # where this posture's centre of mass stands still
        self.posture_velocity = (com - self.posture_com) / self.period
        self.posture_com = com
        return self.q_ref


def sole_extent(body: Body, model: RobotModel) -> tuple[float, float]:
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
