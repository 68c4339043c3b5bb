"""Rate gyros and accelerometers from link motion, for every engine (written once, above the engine).

An engine gives, per link, its rotation (row-major 3x3 as 9 floats), angular velocity and the world
velocity of a point fixed in the link (:class:`LinkMotion`); this module turns that into readings in
each sensor's frame:

- gyro: the link's angular velocity in the sensor frame;
- accel: the sensor point's acceleration minus gravity, in the sensor frame, by differencing the
  point's velocity over one step (the engine calls :meth:`InertialSensors.before_step` each step), so it
  reads +g upward at rest.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from hrpsim.bodyinfo import Body, Sensor

Vec = tuple[float, float, float]


class LinkMotion(Protocol):
    def rotation(self, link: int) -> tuple[float, ...]:
        """The link frame's rotation, row-major 3x3 as 9 floats."""

    def angular_velocity(self, link: int) -> Vec:
        """World frame."""

    def point_velocity(self, link: int, point: Vec) -> Vec:
        """World velocity of ``point`` (link frame, from the link origin), world frame."""


def to_link(r: tuple[float, ...], x: float, y: float, z: float) -> Vec:
    """R^T v for a row-major 3x3 ``r``: a world vector in the link frame (plain floats: hot path)."""
    return (r[0] * x + r[3] * y + r[6] * z, r[1] * x + r[4] * y + r[7] * z, r[2] * x + r[5] * y + r[8] * z)


class SensorFrame:
    """Where a sensor sits on its link: its point (link frame) and its rotation."""

    def __init__(self, sensor: Sensor) -> None:
        self.name = sensor.name
        self.link = sensor.link
        self.point: Vec = tuple(float(v) for v in np.asarray(sensor.translation, float))  # type: ignore[assignment]
        rotation = np.asarray(sensor.rotation, float)
        self.rotation_t = None if np.allclose(rotation, np.eye(3), atol=1e-12) else rotation.T.copy()

    def output(self, values: Vec) -> np.ndarray:
        """A link-frame triple turned into the sensor frame (one matrix-vector product: the same
        BLAS call as a (3, 1) column would make, without the reshapes around it)."""
        out = np.array(values)
        return out if self.rotation_t is None else self.rotation_t @ out


class InertialSensors:
    def __init__(
        self, body: Body, motion: LinkMotion, timestep: float, gravity: np.ndarray, *, links: set[int] | None = None
    ) -> None:
        """``links``: the links the engine can measure (others' sensors read nothing)."""
        self.motion = motion
        self.dt = timestep
        self.gravity = tuple(float(v) for v in gravity)
        usable = [s for s in body.sensors if links is None or s.link in links]
        self.gyro = [SensorFrame(s) for s in usable if s.type == "gyro"]
        self.accel = [SensorFrame(s) for s in usable if s.type == "accel"]
        self._previous: list[Vec] = [motion.point_velocity(m.link, m.point) for m in self.accel]

    def before_step(self) -> None:
        """Keep each accelerometer point's velocity for the difference after the step."""
        previous, velocity = self._previous, self.motion.point_velocity
        for k, frame in enumerate(self.accel):
            previous[k] = velocity(frame.link, frame.point)

    def memory(self) -> list[Vec]:
        """What the next reading needs from before the last step (each accelerometer point's velocity)."""
        return list(self._previous)

    def restore(self, memory: list[Vec]) -> None:
        self._previous[:] = [tuple(v) for v in memory]

    def read(self, out: dict[str, np.ndarray]) -> None:
        motion = self.motion
        for frame in self.gyro:
            out[frame.name] = frame.output(to_link(motion.rotation(frame.link), *motion.angular_velocity(frame.link)))
        inv_dt, (gx, gy, gz) = 1.0 / self.dt, self.gravity
        for k, frame in enumerate(self.accel):
            vx, vy, vz = motion.point_velocity(frame.link, frame.point)
            px, py, pz = self._previous[k]
            acceleration = to_link(
                motion.rotation(frame.link), (vx - px) * inv_dt - gx, (vy - py) * inv_dt - gy, (vz - pz) * inv_dt - gz
            )
            out[frame.name] = frame.output(acceleration)
