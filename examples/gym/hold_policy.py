"""A policy as a controller (hrpsim.gym.PolicyController): it sees the observation its env gave and
answers with an action of that env. Here the scripted policy of random_and_scripted.py, a PD law
towards the pose of its first turn, stands in for a trained one: put your model's forward pass in
``act``. examples/gym/quadruped_policy.yaml runs it; examples/sweeps/policy_push.yaml sweeps it.
"""

from __future__ import annotations

import numpy as np

from hrpsim.gym import PolicyController


class HoldPolicy(PolicyController):
    def __init__(self, *, kp: float = 15.0, kd: float = 0.3, **options: object) -> None:
        super().__init__(**options)
        self.kp, self.kd = kp, kd
        self.target: np.ndarray | None = None

    def act(self, observation: np.ndarray) -> np.ndarray:
        slices = self.observation_layout.slices
        q, dq = observation[slices["q"]], observation[slices["dq"]]
        if self.target is None:
            self.target = q.copy()
        return self.kp * (self.target - q) - self.kd * dq
