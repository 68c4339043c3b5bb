"""Rewards and terminations: functions of one env step, and a ready one, standing.

A reward is ``reward(t: Transition) -> float`` and a termination ``terminated(t: Transition) -> bool``:
``t.before`` and ``t.after`` are the robot's states around the step (hrpsim.controllers.State:
``q``, ``dq``, ``tau``, ``root_position``, ``root_rotation``, ``root_velocity``, ``sensors``,
``time``), ``t.start`` its state when the episode began, ``t.action`` the action as given, ``t.dt``
the step's simulated seconds and ``t.sim`` the simulation (other robots, ``sim.summary()``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from hrpsim.controllers.state import State

if TYPE_CHECKING:
    from hrpsim.simulation import Simulation


@dataclass(frozen=True)
class Transition:
    """One env step of the robot: from ``before`` to ``after`` under ``action`` in ``dt`` seconds."""

    before: State
    after: State
    action: np.ndarray
    start: State
    dt: float
    sim: Simulation


@dataclass(frozen=True)
class Standing:
    """Stay up: a reward of ``alive`` for each step that ends with the robot up, less
    ``control_cost`` times the squared action; the episode ends once it has fallen.

    Fallen: the root has sunk below ``min_height`` times its height at the episode's start, or the
    root's z axis leans more than ``max_tilt`` (rad) from the vertical. A robot fixed to the world
    never falls."""

    min_height: float = 0.6
    max_tilt: float = math.radians(50.0)
    alive: float = 1.0
    control_cost: float = 0.0

    def fallen(self, t: Transition) -> bool:
        sunk = t.after.root_position[2] < self.min_height * t.start.root_position[2]
        upright = float(np.clip(t.after.root_rotation[2, 2], -1.0, 1.0))
        return bool(sunk or math.acos(upright) > self.max_tilt)

    def reward(self, t: Transition) -> float:
        if self.fallen(t):
            return 0.0
        return self.alive - self.control_cost * float(np.dot(t.action, t.action))

    def terminated(self, t: Transition) -> bool:
        return self.fallen(t)
