"""A world without physics, for the hardware-in-the-loop stand-in: joints follow their commands.

It offers the simulator core's interface (``robots``, ``body``, ``state``, ``command``,
``collide``, ``integrate``, ``time``, ``tick``, ``timestep``), so the controller hub serves it
exactly as it serves the ODE world, and a controller cannot tell the difference on the wire.

Each joint follows its drive mode: ``high_gain`` joints sit at ``q_ref`` moving at ``dq_ref``;
``velocity`` joints integrate ``dq_ref``; ``torque`` joints are a unit of joint-space inertia
(the reflected rotor inertia, at least 1 kg m^2) with viscous damping.
The root stays where it was placed; force sensors read zero, gyros zero, accelerometers +g.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hrpsim.bodyinfo import Body
from hrpsim.errors import RequestError
from hrpsim.tick import DRIVE_MODES

GRAVITY = 9.8
DAMPING = 1.0  # N m s/rad on torque-driven joints, so a constant torque gives a bounded speed
MIN_INERTIA = 1.0  # kg m^2: keeps stiff PD gains stable with the explicit update at a 1 ms step


class _Robot:
    def __init__(self, body: Body, q0: np.ndarray, root_position: np.ndarray) -> None:
        self.body = body
        self.names = body.joint_names
        self.index_of = {n: i for i, n in enumerate(self.names)}
        n = len(self.names)
        self.q, self.dq, self.tau = q0.astype(np.float64).copy(), np.zeros(n), np.zeros(n)
        self.torque, self.q_ref, self.dq_ref = np.zeros(n), self.q.copy(), np.zeros(n)
        self.modes = np.array(["high_gain"] * n, dtype=object)
        self.inertia = np.array([max(lk.reflected_inertia, MIN_INERTIA) for lk in body.joints])
        self.root_position = root_position.astype(np.float64).copy()


class KinematicWorld:
    def __init__(self, bodies: dict[str, Body], *, timestep: float = 0.001,
                 initial: dict[str, np.ndarray] | None = None,
                 positions: dict[str, np.ndarray] | None = None) -> None:
        self.timestep = float(timestep)
        self.time = 0.0
        self.tick = 0
        self._robots = {
            name: _Robot(body, (initial or {}).get(name, np.zeros(len(body.joints))),
                         (positions or {}).get(name, np.zeros(3)))
            for name, body in bodies.items() if not body.static
        }

    @property
    def robots(self) -> list[str]:
        return list(self._robots)

    def body(self, name: str) -> Body:
        return self._robot(name).body

    def state(self, robot: str) -> dict[str, Any]:
        r = self._robot(robot)
        return {"time": self.time, "tick": self.tick, "q": r.q.copy(), "dq": r.dq.copy(), "tau": r.tau.copy(),
                "root_position": r.root_position.copy(), "root_rotation": np.eye(3), "root_velocity": np.zeros(6),
                "sensors": {s.name: self._reading(s.type) for s in r.body.sensors
                            if s.type in ("force", "gyro", "accel")}}

    def command(self, robot: str, *, torque: Any = None, q_ref: Any = None, dq_ref: Any = None,
                modes: dict[str, str] | None = None) -> None:
        r = self._robot(robot)
        checked = {key: self._checked(r, key, value)
                   for key, value in (("torque", torque), ("q_ref", q_ref), ("dq_ref", dq_ref)) if value is not None}
        for joint, mode in (modes or {}).items():
            if joint not in r.index_of:
                raise RequestError(f"modes: unknown joint {joint!r} of {robot}")
            if mode not in DRIVE_MODES:
                raise RequestError(f"modes.{joint}: unknown mode {mode!r} (modes: {', '.join(DRIVE_MODES)})")
        for key, values in checked.items():
            getattr(r, key)[:] = values
        for joint, mode in (modes or {}).items():
            r.modes[r.index_of[joint]] = mode

    def collide(self) -> None:
        """Nothing collides in a kinematic world."""

    def integrate(self) -> None:
        dt = self.timestep
        for r in self._robots.values():
            gain = r.modes == "high_gain"
            vel = r.modes == "velocity"
            torq = r.modes == "torque"
            r.dq[gain], r.q[gain] = r.dq_ref[gain], r.q_ref[gain]
            r.dq[vel] = r.dq_ref[vel]
            r.q[vel] += r.dq_ref[vel] * dt
            r.tau[:] = np.where(torq, r.torque, 0.0)
            r.dq[torq] += (r.torque[torq] - DAMPING * r.dq[torq]) / r.inertia[torq] * dt
            r.q[torq] += r.dq[torq] * dt
        self.tick += 1
        self.time = self.tick * self.timestep

    def step(self) -> None:
        self.collide()
        self.integrate()

    def _robot(self, name: str) -> _Robot:
        try:
            return self._robots[name]
        except KeyError:
            raise RequestError(f"no robot named {name!r} (robots: {', '.join(self._robots)})") from None

    @staticmethod
    def _checked(r: _Robot, key: str, value: Any) -> np.ndarray:
        arr = np.asarray(value, dtype=np.float64)
        if arr.shape != (len(r.names),):
            raise RequestError(f"{key}: expected {len(r.names)} values (one per joint), got shape {arr.shape}")
        bad = np.flatnonzero(~np.isfinite(arr))
        if bad.size:
            raise RequestError(f"{key}[{bad[0]}] (joint {r.names[bad[0]]}) is not finite")
        return arr

    @staticmethod
    def _reading(sensor_type: str) -> np.ndarray:
        if sensor_type == "force":
            return np.zeros(6)
        if sensor_type == "gyro":
            return np.zeros(3)
        return np.array([0.0, 0.0, GRAVITY])
