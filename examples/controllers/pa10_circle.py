"""The PA10 arm draws a horizontal circle with its wrist (link J7), in torque mode.

Each tick: the circle's point for this instant -> damped least-squares IK (position and the
wrist's starting orientation, from the last solution) -> joint targets; their rates and
accelerations by differences; then computed torque with the toolkit's model:

    tau = M(q) (ddq_ref + Kd (dq_ref - dq) + Kp (q_ref - q)) + C(q, dq) dq + g(q)

The circle starts where the wrist is (its centre ``radius`` from it towards the base, along +y) and speeds up
over ``ramp`` seconds to one turn per ``turn`` seconds.

    hrpsim launch examples/pa10_circle.yaml
"""

from __future__ import annotations

import sys

import numpy as np

from hrpsim.controllers import Controller, run_main
from hrpsim.toolkit.ik import IKOptions, Target

HAND = "J7"
IK_OPTIONS = IKOptions(max_iterations=20, tolerance=1e-10, rotation_tolerance=1e-10)


def circle_point(time: float, start: np.ndarray, *, radius: float, turn: float, ramp: float) -> np.ndarray:
    """Where the wrist should be at ``time`` (world, m): a circle in the horizontal plane through
    ``start``, centred ``radius`` from it along +y (towards the arm's base), one turn per ``turn`` s
    once its speed has risen linearly over ``ramp`` s."""
    omega = 2.0 * np.pi / turn
    angle = omega * (time**2 / (2.0 * ramp) if time < ramp else time - ramp / 2.0)
    centre = np.asarray(start, float) + np.array([0.0, radius, 0.0])
    return centre + radius * np.array([np.sin(angle), -np.cos(angle), 0.0])


class PA10Circle(Controller):
    def __init__(
        self, *, radius: float = 0.1, turn: float = 4.0, ramp: float = 1.0, kp: float = 900.0, kd: float = 60.0
    ) -> None:
        super().__init__()
        self.radius, self.turn, self.ramp, self.kp, self.kd = radius, turn, ramp, kp, kd

    def start(self, body) -> None:
        self.start_pose = None
        self.q_ref = self.dq_ref = None

    def control(self, state):
        model = self.model  # set to this tick's state
        if self.start_pose is None:
            self.start_pose = model.link_pose(HAND)
            self.q_ref, self.dq_ref = state.q.copy(), np.zeros_like(state.q)
        goal = circle_point(state.time, self.start_pose.position, radius=self.radius, turn=self.turn, ramp=self.ramp)
        solved = model.solve_ik(
            [Target(HAND, position=goal, rotation=self.start_pose.rotation)], q=self.q_ref, options=IK_OPTIONS
        )
        dt = self.period  # the control period
        dq_ref = (solved.q - self.q_ref) / dt
        ddq_ref = (dq_ref - self.dq_ref) / dt
        self.q_ref, self.dq_ref = solved.q, dq_ref
        feedback = ddq_ref + self.kd * (dq_ref - state.dq) + self.kp * (solved.q - state.q)
        tau = model.joint_torques(model.mass_matrix() @ feedback + model.coriolis() + model.gravity())
        command = self.torque(tau)
        if state.tick == 0:
            command.mode_all("torque")
        return command


if __name__ == "__main__":
    sys.exit(run_main(PA10Circle))
