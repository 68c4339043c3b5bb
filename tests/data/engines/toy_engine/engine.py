"""The toy engine's world: roots fall with drag (semi-implicit Euler), joints follow q_ref."""

from __future__ import annotations

from typing import Any

import numpy as np

from hrpsim.bodyinfo import Body
from hrpsim.engines.base import Engine, LinkStates, RobotState
from hrpsim.kinematics import forward_kinematics, link_values
from hrpsim.placement import root_placement
from hrpsim.project import Project
from hrpsim.transforms import matrix_quaternion


class _Point:
    """One moving model: its root's position and velocity, its joints and their modes."""

    def __init__(self, body: Body, position: np.ndarray, rotation: np.ndarray, joints: dict[str, float]) -> None:
        self.body = body
        self.names = body.joint_names
        self.position, self.rotation, self.velocity = position.copy(), rotation.copy(), np.zeros(3)
        self.q = np.array([joints.get(name, 0.0) for name in self.names])
        self.modes = ["high_gain"] * len(self.names)


class ToyEngine(Engine):
    name = "toy"

    def __init__(self, project: Project, bodies: dict[str, Body]) -> None:
        self.rebuild(project, bodies)

    def rebuild(self, project: Project, bodies: dict[str, Body]) -> None:
        self.project, self.bodies, self.timestep = project, bodies, float(project.world.timestep)
        self.reset()

    def reset(self) -> None:
        self.drag = self.settings().drag
        self.gravity = np.asarray(self.project.world.gravity, float)
        self.points: dict[str, _Point] = {}
        for config in self.project.models:
            body = self.bodies[config.name]
            if not (config.static or body.static):
                self.points[config.name] = _Point(body, *root_placement(config, body), config.joints)
        self.start()

    @property
    def robots(self) -> list[str]:
        return list(self.points)

    def _collide(self) -> None:
        """Points do not collide."""

    def _integrate(self) -> None:
        for point in self.points.values():
            point.velocity += (self.gravity - self.drag * point.velocity) * self.timestep
            point.position += point.velocity * self.timestep
        self.tick += 1
        self.time = self.tick * self.timestep

    def _point(self, robot: str) -> _Point:
        self.require_robot(robot)
        return self.points[robot]

    def _measure(self, robot: str) -> RobotState:
        point = self._point(robot)
        zeros = np.zeros(len(point.names))
        return RobotState(
            time=self.time,
            tick=self.tick,
            q=point.q.copy(),
            dq=zeros,
            tau=zeros.copy(),
            root_position=point.position.copy(),
            root_rotation=point.rotation.copy(),
            root_velocity=np.concatenate([point.velocity, np.zeros(3)]),
        )

    def _joint_names(self, robot: str) -> list[str]:
        return self._point(robot).names

    def _command(self, robot: str, torque: Any, q_ref: Any, dq_ref: Any, modes: dict[str, str] | None) -> None:
        point = self.points[robot]
        if q_ref is not None:
            point.q[:] = q_ref
        for joint, mode in (modes or {}).items():
            point.modes[point.names.index(joint)] = mode

    def drive_modes(self, robot: str) -> list[str]:
        return list(self._point(robot).modes)

    def root_pose(self, model: str) -> tuple[np.ndarray, np.ndarray]:
        point = self.points.get(model)
        if point is None:
            return root_placement(self.project.model(model), self.body(model))
        return point.position.copy(), point.rotation.copy()

    def link_values(self, model: str) -> tuple[np.ndarray, np.ndarray]:
        body = self.body(model)
        values = np.array(link_values(body, self.project.model(model).joints), dtype=float)
        point = self.points.get(model)
        if point is not None:
            for k, link in enumerate(body.joints):
                values[body.link_index(link.name)] = point.q[k]
        return values, np.zeros(len(body.links))

    def link_states(self, model: str) -> LinkStates:
        values, _ = self.link_values(model)
        poses = forward_kinematics(self.body(model), *self.root_pose(model), values)
        n = len(poses)
        return LinkStates(
            positions=np.array([p for p, _ in poses]),
            quaternions=np.array([matrix_quaternion(r) for _, r in poses]),
            linear=np.zeros((n, 3)),
            angular=np.zeros((n, 3)),
        )

    def set_link_data(self, robot: str, *, q: Any = None, root_position: Any = None, **_: Any) -> None:
        point = self._point(robot)
        if q is not None:
            point.q[:] = np.asarray(q, float)
        if root_position is not None:
            point.position[:] = np.asarray(root_position, float)
        self.forget_reading(robot)
