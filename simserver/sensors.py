"""Force/torque, rate gyro and accelerometer readings of one model, in each sensor's frame.

- force: the wrench the sensor's link passes to its parent through its joint, from ODE's joint
  feedback, moved to the sensor point (moment about the sensor point) and turned into the
  sensor frame: a foot sensor of a standing robot reads +weight along its up axis. A sensor on
  a link without a joint (a free root) reads zeros.
- gyro: the link's angular velocity in the sensor frame.
- accel: the sensor point's acceleration minus gravity, in the sensor frame, by differencing
  the point's velocity over one step (the velocity before the step is kept each step), so it
  reads +g upward at rest.

Range and vision sensors keep their BodyInfo and have no values yet.
"""

from __future__ import annotations

import logging

import numpy as np

from hrpsim.bodyinfo import Sensor
from hrpsim.engines.ode.model import LinkSim, OdeModel

log = logging.getLogger("hrpsim.simserver")


Vec = tuple[float, float, float]


def _to_link(r: tuple[float, ...], x: float, y: float, z: float) -> Vec:
    """R^T v for ODE's row-major 3x3 ``r``: a world vector in the link frame (plain floats: hot path)."""
    return (r[0] * x + r[3] * y + r[6] * z, r[1] * x + r[4] * y + r[7] * z, r[2] * x + r[5] * y + r[8] * z)


class _Mount:
    """Where a sensor sits on its link body: its offset from the COM and its rotation, link frame."""

    def __init__(self, sensor: Sensor, sim: LinkSim) -> None:
        self.name = sensor.name
        self.sim = sim
        self.offset = tuple(float(v) for v in np.asarray(sensor.translation, float) - sim.com)
        rotation = np.asarray(sensor.rotation, float)
        self.rotation_t = None if np.allclose(rotation, np.eye(3), atol=1e-12) else rotation.T.copy()

    def output(self, values: list[float]) -> np.ndarray:
        out = np.array(values)
        if self.rotation_t is not None:
            out = (self.rotation_t @ out.reshape(-1, 3).T).T.reshape(-1)
        return out


class SensorSet:
    def __init__(self, model: OdeModel, timestep: float, gravity: np.ndarray) -> None:
        self.model = model
        self.dt = timestep
        self.gravity = tuple(float(v) for v in gravity)
        self.force: list[_Mount] = []
        self.gyro: list[_Mount] = []
        self.accel: list[_Mount] = []
        for sensor in model.info.sensors:
            sim = model.links[sensor.link]
            if sim.body is None:
                continue
            if sensor.type == "force":
                if sim.joint is None:
                    log.warning("force sensor %r of %s has no joint to measure: it reads zeros",
                                sensor.name, model.where(sim.index))
                self.force.append(_Mount(sensor, sim))
            elif sensor.type == "gyro":
                self.gyro.append(_Mount(sensor, sim))
            elif sensor.type == "accel":
                self.accel.append(_Mount(sensor, sim))
        self._previous: list[Vec] = [m.sim.body.getRelPointVel(m.offset) for m in self.accel]

    def before_step(self) -> None:
        """Keep each accelerometer point's velocity for the difference after the step."""
        previous = self._previous
        for k, mount in enumerate(self.accel):
            previous[k] = mount.sim.body.getRelPointVel(mount.offset)

    def read(self) -> dict[str, np.ndarray]:
        out: dict[str, np.ndarray] = {}
        for mount in self.force:
            out[mount.name] = self._force(mount)
        for mount in self.gyro:
            body = mount.sim.body
            out[mount.name] = mount.output(list(_to_link(body.getRotation(), *body.getAngularVel())))
        inv_dt, (gx, gy, gz) = 1.0 / self.dt, self.gravity
        for k, mount in enumerate(self.accel):
            body = mount.sim.body
            vx, vy, vz = body.getRelPointVel(mount.offset)
            px, py, pz = self._previous[k]
            acceleration = _to_link(body.getRotation(), (vx - px) * inv_dt - gx, (vy - py) * inv_dt - gy,
                                    (vz - pz) * inv_dt - gz)
            out[mount.name] = mount.output(list(acceleration))
        return out

    @staticmethod
    def _force(mount: _Mount) -> np.ndarray:
        joint = mount.sim.joint
        if joint is None:
            return np.zeros(6)
        f1, t1, _, _ = joint.getFeedback()
        r = mount.sim.body.getRotation()
        fx, fy, fz = _to_link(r, *f1)
        tx, ty, tz = _to_link(r, *t1)
        dx, dy, dz = mount.offset  # sensor point minus COM, link frame
        # The joint pushes the link with f1 (torque t1 about its COM); the parent gets the reaction,
        # whose moment about the sensor point is -(t1 + (com - point) x f1) = -(t1 - d x f1).
        mx = -(tx - (dy * fz - dz * fy))
        my = -(ty - (dz * fx - dx * fz))
        mz = -(tz - (dx * fy - dy * fx))
        return mount.output([-fx, -fy, -fz, mx, my, mz])
