"""The kinematic engine: the hardware stand-in's world. Joints follow their commands, nothing
collides, roots stay where they were placed.

Each joint follows its drive mode (``high_gain`` until a command changes it): ``high_gain`` joints
sit at ``q_ref`` moving at ``dq_ref``; ``velocity`` joints integrate ``dq_ref``; ``torque`` joints
are a unit of joint-space inertia (the reflected rotor inertia, at least 1 kg m^2) with viscous
damping. With a motion table (``motion=``, an OpenHRP .pos table) the joints replay it instead,
whatever the commands say, as a robot whose data is played back would. Force sensors read zero,
gyros zero, accelerometers +g.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hrpsim.bodyinfo import Body
from hrpsim.engines.base import Engine, LinkStates, RobotState
from hrpsim.errors import ConfigError, RequestError
from hrpsim.kinematics import follow_mimics, forward_kinematics, link_values, starting_joints
from hrpsim.motion_data import Motion
from hrpsim.placement import root_placement
from hrpsim.project import ModelConfig, Project
from hrpsim.sensor_types import SENSOR_TYPES, engine_sensor_types
from hrpsim.transforms import matrix_quaternion

GRAVITY = 9.8
DAMPING = 1.0  # N m s/rad on torque-driven joints, so a constant torque gives a bounded speed
MIN_JOINT_INERTIA = 1.0  # kg m^2: keeps stiff PD gains stable with the explicit update at a 1 ms step
# A robot's arrays that make its state (Engine.get_state): joints, commands, modes, root.
_STATE = ("q", "dq", "tau", "torque", "q_ref", "dq_ref", "modes", "root_position", "root_rotation")


class _Robot:
    def __init__(self, body: Body, config: ModelConfig) -> None:
        self.body = body
        self.names = body.joint_names
        self.index_of = {n: i for i, n in enumerate(self.names)}
        unknown = sorted(set(config.joints) - set(self.names))
        if unknown:
            raise ConfigError(f"model {config.name!r}: joints: unknown joint(s) {', '.join(unknown)}")
        n = len(self.names)
        start = starting_joints(body, config.joints)
        self.q = np.array([start.get(name, 0.0) for name in self.names], dtype=np.float64)
        self.dq, self.tau = np.zeros(n), np.zeros(n)
        self.torque, self.q_ref, self.dq_ref = np.zeros(n), self.q.copy(), np.zeros(n)
        # A stand-in follows positions until told otherwise: the project's drive is the simulator's.
        self.modes = np.array(["high_gain"] * n, dtype=object)
        self.inertia = np.array([max(lk.reflected_inertia, MIN_JOINT_INERTIA) for lk in body.joints])
        self.root_position, self.root_rotation = root_placement(config, body)
        self.joint_links = [body.link_index(lk.name) for lk in body.joints]
        measured = engine_sensor_types()
        self.sensors = [(s.name, s.type) for s in body.sensors if s.type in measured]  # read at rest


class KinematicEngine(Engine):
    name = "kinematic"

    def __init__(self, project: Project, bodies: dict[str, Body], *, motion: Motion | None = None) -> None:
        self.motion = motion
        self._setup(project, bodies)

    def _setup(self, project: Project, bodies: dict[str, Body]) -> None:
        self.project, self.bodies = project, bodies
        self.timestep = float(project.world.timestep)
        self.start()
        self._robots = {
            m.name: _Robot(bodies[m.name], m) for m in project.models if not (m.static or bodies[m.name].static)
        }
        if self.motion is not None:
            for name, r in self._robots.items():
                if self.motion.values.shape[1] != len(r.names):
                    raise ConfigError(
                        f"replay data has {self.motion.values.shape[1]} joint columns, robot "
                        f"{name!r} has {len(r.names)} joints"
                    )

    @property
    def robots(self) -> list[str]:
        return list(self._robots)

    # --- the tick ---

    def _collide(self) -> None:
        """Nothing collides in a kinematic world."""

    def _integrate(self) -> None:
        before = self.motion.at(self.time) if self.motion is not None else None
        for r in self._robots.values():
            self._follow(r)
        self.tick += 1
        self.time = self.tick * self.timestep
        if before is not None:
            after = self.motion.at(self.time)
            for r in self._robots.values():
                r.q[:] = after
                r.dq[:] = (after - before) / self.timestep

    def _follow(self, r: _Robot) -> None:
        dt = self.timestep
        gain, vel, torq = r.modes == "high_gain", r.modes == "velocity", r.modes == "torque"
        r.dq[gain], r.q[gain] = r.dq_ref[gain], r.q_ref[gain]
        r.dq[vel] = r.dq_ref[vel]
        r.q[vel] += r.dq_ref[vel] * dt
        r.tau[:] = np.where(torq, r.torque, 0.0)
        r.dq[torq] += (r.torque[torq] - DAMPING * r.dq[torq]) / r.inertia[torq] * dt
        r.q[torq] += r.dq[torq] * dt

    # --- state and commands ---

    def _measure(self, robot: str) -> RobotState:
        r = self._robot(robot)
        return RobotState(
            time=self.time,
            tick=self.tick,
            q=r.q.copy(),
            dq=r.dq.copy(),
            tau=r.tau.copy(),
            root_position=r.root_position.copy(),
            root_rotation=r.root_rotation.copy(),
            root_velocity=np.zeros(6),
            sensors={name: _reading(kind) for name, kind in r.sensors},
        )

    def _joint_names(self, robot: str) -> list[str]:
        return self._robot(robot).names

    def _command(
        self,
        robot: str,
        torque: np.ndarray | None,
        q_ref: np.ndarray | None,
        dq_ref: np.ndarray | None,
        modes: dict[str, str] | None,
    ) -> None:
        r = self._robot(robot)
        for target, values in ((r.torque, torque), (r.q_ref, q_ref), (r.dq_ref, dq_ref)):
            if values is not None:
                target[:] = values
        for joint, mode in (modes or {}).items():
            r.modes[r.index_of[joint]] = mode

    def drive_modes(self, robot: str) -> list[str]:
        return list(self._robot(robot).modes)

    def root_pose(self, model: str) -> tuple[np.ndarray, np.ndarray]:
        r = self._robots.get(model)
        if r is None:
            config = self.project.model(model) if model in self.bodies else None
            if config is None:
                self.body(model)  # raises NotFound naming the models
            return root_placement(config, self.bodies[model])
        return r.root_position.copy(), r.root_rotation.copy()

    def link_values(self, model: str) -> tuple[np.ndarray, np.ndarray]:
        body = self.body(model)
        values, rates = np.zeros(len(body.links)), np.zeros(len(body.links))
        r = self._robots.get(model)
        if r is not None:
            values[r.joint_links], rates[r.joint_links] = r.q, r.dq
            follow_mimics(body, values, rates)
        else:
            values[:] = link_values(body, starting_joints(body, self.project.model(model).joints))
        return values, rates

    def link_states(self, model: str) -> LinkStates:
        values, _ = self.link_values(model)
        p, r = self.root_pose(model)
        poses = forward_kinematics(self.body(model), p, r, values)
        n = len(poses)
        return LinkStates(
            positions=np.array([pp for pp, _ in poses]),
            quaternions=np.array([matrix_quaternion(rr) for _, rr in poses]),
            linear=np.zeros((n, 3)),
            angular=np.zeros((n, 3)),
        )

    def set_link_data(
        self,
        robot: str,
        *,
        q: Any = None,
        dq: Any = None,
        root_position: Any = None,
        root_rotation: Any = None,
        root_velocity: Any = None,
    ) -> None:
        r = self._robot(robot)
        if q is not None:
            r.q[:] = r.q_ref[:] = _checked(r, "q", q)
        if dq is not None:
            r.dq[:] = _checked(r, "dq", dq)
        if root_position is not None:
            r.root_position[:] = np.asarray(root_position, float).reshape(3)
        if root_rotation is not None:
            r.root_rotation[:] = np.asarray(root_rotation, float).reshape(3, 3)

    # --- snapshots ---

    def _get_state(self) -> dict[str, Any]:
        return {name: {key: np.array(getattr(r, key)) for key in _STATE} for name, r in self._robots.items()}

    def _set_state(self, data: dict[str, Any]) -> None:
        for name, values in data.items():
            r = self._robots[name]
            for key in _STATE:
                getattr(r, key)[...] = values[key]

    # --- life ---

    def reset(self) -> None:
        self._setup(self.project, self.bodies)

    def rebuild(self, project: Project, bodies: dict[str, Body]) -> None:
        self._setup(project, bodies)

    def _robot(self, name: str) -> _Robot:
        r = self._robots.get(name)
        if r is None:
            self.require_robot(name)  # NotFound or "static" with the model names
            raise RequestError(f"no robot named {name!r} (robots: {', '.join(self._robots)})")
        return r


def _checked(r: _Robot, key: str, value: Any) -> np.ndarray:
    arr = np.asarray(value, dtype=np.float64)
    if arr.shape != (len(r.names),):
        raise RequestError(f"{key}: expected {len(r.names)} values (one per joint), got shape {arr.shape}")
    bad = np.flatnonzero(~np.isfinite(arr))
    if bad.size:
        raise RequestError(f"{key}[{bad[0]}] (joint {r.names[bad[0]]}) is not finite")
    return arr


def _reading(sensor_type: str) -> np.ndarray:
    """What a sensor of a robot at rest reads (an accelerometer's +g up: its type's ``rest_per_g``)."""
    kind = SENSOR_TYPES[sensor_type]
    if kind.rest_per_g:
        return np.array(kind.rest_per_g) * GRAVITY
    return np.zeros(len(kind.axes))
