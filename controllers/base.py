"""The base class of a controller: hooks in OpenHRP's order (start, control each tick, stop)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from hrpsim.bodyinfo import Body
from hrpsim.controllers.command import Command
from hrpsim.controllers.services import Services
from hrpsim.controllers.state import JointIndex, State
from hrpsim.errors import ConfigError

if TYPE_CHECKING:
    from hrpsim.toolkit.model import RobotModel


class Controller:
    """Subclass and override :meth:`control` (and :meth:`start` / :meth:`stop` when needed).

    The runner calls ``start(body)`` once attached (``body`` is the robot's BodyInfo; joint
    arrays follow ``body.joint_names``), ``control(state)`` at each of the controller's ticks,
    and ``stop()`` when the run ends or the controller is interrupted. ``control`` returns a
    :class:`Command`, a numpy array (the torque of every joint), or None (keep the last command).
    ``self.period``, ``self.timestep``, ``self.gravity`` (the world's, m/s^2) and ``self.joints`` are
    set before ``start``;
    ``self.services.call(name, op, **args)`` reaches the stack's services by name (the simulator's
    operations, the collision service's ray and scan queries), with a deadline.

    ``self.model`` is the robot's kinematics and dynamics (:class:`hrpsim.toolkit.model.RobotModel`,
    on Pinocchio, under the world's gravity, its root where the project places the robot), built on
    first use and set to the current tick's state whenever it is read in ``control``: a controller
    that never reads it pays nothing. ``self.body`` is the BodyInfo.
    """

    period: float = 0.0
    timestep: float = 0.0
    gravity: tuple[float, float, float] = (0.0, 0.0, -9.8)  # a simulator that does not say: OpenHRP's
    # where the project places the robot's root (position, rotation); a simulator that does not say: the file's
    root_placement: tuple[np.ndarray, np.ndarray] | None = None
    body: Body | None = None
    _model: RobotModel | None = None
    _state: State | None = None  # this tick's, for the model
    _model_state: State | None = None  # the one the model holds

    def __init__(self, **options: Any) -> None:
        self.options = options
        self.joints = JointIndex([])
        self.services = Services(None)

    def start(self, body: Body) -> None:
        """Called once attached, before the first tick."""

    def control(self, state: State) -> Command | np.ndarray | None:
        raise NotImplementedError(f"{type(self).__name__} must define control(state)")

    def stop(self) -> None:
        """Called once at the end (run over, simulator gone, or interrupted)."""

    # --- the robot's model ---

    @property
    def model(self) -> RobotModel:
        if self._model is None:
            if self.body is None:
                raise ConfigError(f"{type(self).__name__}: self.model is there from start() on, once attached")
            from hrpsim.toolkit.model import RobotModel  # Pinocchio loads only for a controller that asks

            position, rotation = self.root_placement or (None, None)
            self._model = RobotModel(self.body, gravity=self.gravity, root_position=position, root_rotation=rotation)
        state = self._state
        if state is not None and state is not self._model_state:
            self._model.update(state)
            self._model_state = state
        return self._model

    def attached(self, body: Body) -> None:
        """The runner's (or the hub's) call before ``start``: a fresh attachment, a fresh model."""
        self.body, self._model, self._state, self._model_state = body, None, None, None

    def sees(self, state: State) -> None:
        """The runner's (or the hub's) call before ``control``: the state the model follows."""
        self._state = state

    # --- helpers for subclasses ---

    def command(self) -> Command:
        return Command(self.joints)

    def torque(self, values: np.ndarray) -> Command:
        cmd = Command(self.joints)
        cmd.torque = np.asarray(values, dtype=np.float64)
        return cmd

    def targets(self, q_ref: np.ndarray, dq_ref: np.ndarray | None = None) -> Command:
        """High-gain (position) targets for every joint."""
        cmd = Command(self.joints)
        cmd.q_ref = np.asarray(q_ref, dtype=np.float64)
        cmd.dq_ref = np.zeros_like(cmd.q_ref) if dq_ref is None else np.asarray(dq_ref, dtype=np.float64)
        return cmd
