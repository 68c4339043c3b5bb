"""Any project as a Gymnasium environment: one robot of it observed and commanded, the rest of the
world as the project makes it.

An env step holds the action's joint command for ``frame_skip`` ticks of the world (through
``Simulation.command`` and ``Simulation.step``), then reads the robot's state; the reward and the
termination are the caller's functions of that step (gym/tasks.py). An episode ends, truncated, at
the project's ``end_time`` (or the ``end_time`` given), and ends, terminated, when the world blows
up (``info["error"]`` says how) or the termination function says so.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import gymnasium
import numpy as np

from hrpsim.controllers.state import JointIndex, State
from hrpsim.engines.base import RobotState
from hrpsim.errors import ConfigError, SimulationError
from hrpsim.gym.episodes import EpisodeStart
from hrpsim.gym.spaces import ActionMap, ObservationLayout, default_parts, joint_modes
from hrpsim.gym.tasks import Transition
from hrpsim.project import Project, load_project
from hrpsim.simulation import Simulation

if TYPE_CHECKING:
    from hrpsim.simserver.world import Snapshot

Reward = Callable[[Transition], float]
Termination = Callable[[Transition], bool]


class ProjectEnv(gymnasium.Env[np.ndarray, np.ndarray]):
    """A project (YAML or GrxUI ``.xml``, or a Project) as a Gymnasium environment (docs/gym.md).

    ``robot``: the model the agent drives (default: the project's only model that is not static).
    ``observe``: state parts (default ``q``, ``dq``, and the root's pose and velocity when it moves
    freely); ``sensors``: force, gyro and accelerometer sensors to add, by name. ``joints``: the
    joints the action commands (default all; the others keep their initial commands), each in its
    drive mode from the project; ``action_limits``: bounds by joint or drive mode where the model's
    are missing or not wanted. ``reward`` / ``terminated``: functions of a :class:`Transition`
    (default 0 and never). ``frame_skip``: world ticks per env step. ``reset_with``: ``auto``,
    ``snapshot`` or ``world`` (gym/episodes.py); ``reset_noise_scale``: uniform noise on the start's
    joint angles and speeds."""

    metadata: dict[str, Any] = {"render_modes": []}  # noqa: RUF012 (Gymnasium's class attribute)

    def __init__(
        self,
        project: str | Path | Project,
        *,
        robot: str | None = None,
        frame_skip: int = 1,
        observe: Sequence[str] | None = None,
        sensors: Sequence[str] = (),
        joints: Sequence[str] | None = None,
        action_limits: Mapping[str, tuple[float, float]] | None = None,
        reward: Reward | None = None,
        terminated: Termination | None = None,
        end_time: float | None = None,
        reset_with: str = "auto",
        reset_noise_scale: float = 0.0,
        render_mode: str | None = None,
    ) -> None:
        if render_mode is not None:
            raise ConfigError(f"render_mode: {render_mode!r}: this env renders nothing (view a run with hrpsim view)")
        if not (isinstance(frame_skip, int) and frame_skip >= 1):
            raise ConfigError(f"frame_skip: ticks per env step, a whole number >= 1; got {frame_skip!r}")
        project = copy.deepcopy(project) if isinstance(project, Project) else load_project(project)
        if end_time is not None:
            project.world.end_time = float(end_time)
        self.robot = the_robot(project, robot)
        self.frame_skip = frame_skip
        self.reward_function, self.termination_function = reward, terminated
        # an env goes back to its start many times, which a recording (one line of ticks) cannot follow
        self.sim = Simulation(project, record=False)
        try:
            self._build(observe, sensors, joints, action_limits, reset_with, reset_noise_scale)
        except BaseException:
            self.sim.close()
            raise

    def _build(
        self,
        observe: Sequence[str] | None,
        sensors: Sequence[str],
        joints: Sequence[str] | None,
        action_limits: Mapping[str, tuple[float, float]] | None,
        reset_with: str,
        reset_noise_scale: float,
    ) -> None:
        body = self.sim.bodies[self.robot]
        if not body.joint_names:
            raise ConfigError(f"robot {self.robot!r} has no joints to command")
        self._joints = JointIndex(body.joint_names)
        self.episodes = EpisodeStart(self.sim, self.robot, reset_with, reset_noise_scale)
        state = self._read()
        parts = default_parts(body) if observe is None else observe
        self.observation_layout = ObservationLayout(body, state, parts, sensors)
        modes = joint_modes(body, self.sim.project.model(self.robot).drive)
        self.action_map = ActionMap(body, modes, self.episodes.initial_q, joints, action_limits)
        self.observation_space = self.observation_layout.space
        self.action_space = self.action_map.space
        self.timestep = float(self.sim.project.world.timestep)
        self._end_tick = round(self.sim.project.world.end_time / self.timestep)
        self._start = self._state = state
        self._failed: str | None = None

    # --- Gymnasium's API ---

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        """Back to the start (``options={"snapshot": s}``: to ``s``, one of this env's
        :meth:`snapshot`); ``seed`` seeds the reset noise and the project's hardware models."""
        super().reset(seed=seed)
        unknown = sorted(set(options or {}) - {"snapshot"})
        if unknown:
            raise ConfigError(f"reset options: unknown {', '.join(unknown)} (options: snapshot)")
        self.episodes.begin(self.np_random, (options or {}).get("snapshot"))
        self._start = self._state = self._read()
        self._failed = None
        return self.observation_layout(self._state), self._info()

    def step(self, action: np.ndarray) -> tuple[np.ndarray, float, bool, bool, dict]:
        ticks = min(self.frame_skip, self._end_tick - self.sim.tick)
        if self._failed is not None or ticks <= 0:
            why = (
                f"the world blew up ({self._failed})"
                if self._failed
                else f"it reached its end time, t={self.sim.time:g} s"
            )
            raise SimulationError(f"this episode is over: {why}; call reset() first")
        command = self.action_map.command(action)
        before = self._state
        self.sim.command(self.robot, **command)
        try:
            self.sim.step(ticks)
        except SimulationError as exc:
            self._failed = str(exc)
            return self.observation_layout(before), 0.0, True, False, self._info()
        self._state = self._read()
        moved = Transition(before, self._state, np.asarray(action), self._start, ticks * self.timestep, self.sim)
        reward = float(self.reward_function(moved)) if self.reward_function else 0.0
        terminated = bool(self.termination_function(moved)) if self.termination_function else False
        truncated = self.sim.tick >= self._end_tick
        return self.observation_layout(self._state), reward, terminated, truncated, self._info()

    def close(self) -> None:
        if self.sim is not None:
            self.sim.close()
            self.sim = None

    # --- beyond Gymnasium's ---

    def snapshot(self) -> Snapshot:
        """The world now, to begin an episode from: ``reset(options={"snapshot": s})``."""
        return self.sim.snapshot()

    def _read(self) -> State:
        """The robot's state now, copied: it stays what it was while the world goes on."""
        s = self.sim.state(self.robot)
        sensors = {name: copy.deepcopy(value) for name, value in s.sensors.items()}
        arrays = [np.array(a) for a in (s.q, s.dq, s.tau, s.root_position, s.root_rotation, s.root_velocity)]
        return State.of(RobotState(s.time, s.tick, *arrays, sensors=sensors), self._joints)

    def _info(self) -> dict[str, Any]:
        info: dict[str, Any] = {"time": self.sim.time}
        if self._failed is not None:
            info["error"] = self._failed
        return info


def the_robot(project: Project, robot: str | None) -> str:
    """The model the agent drives: ``robot``, or the project's only model that moves."""
    moving = [m.name for m in project.models if not m.static]
    if robot is None:
        if len(moving) != 1:
            raise ConfigError(
                f"{project.path}: say which robot the env drives (robot=...): the project's models that "
                f"move are {', '.join(moving) or 'none'}"
            )
        return moving[0]
    if robot not in moving:
        raise ConfigError(f"{project.path}: robot {robot!r} is not a model that moves (those: {', '.join(moving)})")
    return robot
