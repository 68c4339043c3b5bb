"""A policy run as a controller, seeing and acting as it did in its env: so that a policy trained on
a ProjectEnv runs wherever a controller runs, in a project under ``hrpsim launch``, in a
``Simulation``, and in a sweep of many varied runs on this machine's cores or a Ray cluster
(``hrpsim sweep --ray``; docs/gym.md).

Subclass :class:`PolicyController`, define ``act(observation) -> action``, and give the controller
the env's options (``observe``, ``sensors``, ``joints``, ``action_limits``), the drive modes the
policy was trained in (``drive``: one mode, or joint -> mode, as a project's model gives it; default
torque; its first command puts the robot's joints in them) and a period of
the env's ``frame_skip`` ticks: its turn at tick k sees the state of tick k and its command holds
until its next turn, as an env step does.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from hrpsim.bodyinfo import Body
from hrpsim.controllers.base import Controller
from hrpsim.controllers.command import Command
from hrpsim.controllers.state import State
from hrpsim.gym.spaces import ActionMap, ObservationLayout, default_parts, joint_modes


class PolicyController(Controller):
    """Runs :meth:`act` on the env's observation at each of its turns and sends its action."""

    def __init__(
        self,
        *,
        drive: str | Mapping[str, str] = "torque",
        observe: Sequence[str] | None = None,
        sensors: Sequence[str] = (),
        joints: Sequence[str] | None = None,
        action_limits: Mapping[str, Sequence[float]] | None = None,
        **options: object,
    ) -> None:
        super().__init__(**options)
        self.drive, self.observe, self.sensors, self.chosen = drive, observe, tuple(sensors), joints
        self.action_limits = {k: (float(lo), float(hi)) for k, (lo, hi) in (action_limits or {}).items()}
        self.observation_layout: ObservationLayout | None = None
        self.action_map: ActionMap | None = None

    def act(self, observation: np.ndarray) -> np.ndarray:
        """The policy: the action for this observation."""
        raise NotImplementedError(f"{type(self).__name__} must define act(observation)")

    def start(self, body: Body) -> None:
        self.observation_layout, self.action_map = None, None  # built at the first turn, from its state

    def control(self, state: State) -> Command:
        first = self.observation_layout is None
        if first:
            self._build(state)
        command = Command(self.joints)
        for key, values in self.action_map.command(self.act(self.observation_layout(state))).items():
            setattr(command, key, values)
        if first:  # the modes the policy was trained in, whatever the project's
            command.modes = dict(self.action_map.modes_by_joint)
        return command

    def _build(self, state: State) -> None:
        body = self.body
        drive = self.drive if isinstance(self.drive, str) else dict(self.drive)
        parts = default_parts(body) if self.observe is None else self.observe
        self.observation_layout = ObservationLayout(body, state, parts, self.sensors)
        self.action_map = ActionMap(body, joint_modes(body, drive), state.q, self.chosen, self.action_limits)
