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
from simserver.odemodel import LinkSim, OdeModel

log = logging.getLogger("hrpsim.simserver")


class SensorSet:
    def __init__(self, model: OdeModel, timestep: float, gravity: np.ndarray) -> None:
        self.model = model
        self.dt = timestep
        self.gravity = np.asarray(gravity, float)
        self.force: list[tuple[Sensor, LinkSim]] = []
        self.gyro: list[tuple[Sensor, LinkSim]] = []
        self.accel: list[tuple[Sensor, LinkSim, tuple[float, float, float]]] = []
        for sensor in model.info.sensors:
            sim = model.links[sensor.link]
            if sim.body is None:
                continue
            if sensor.type == "force":
                if sim.joint is None:
                    log.warning("force sensor %r of %s has no joint to measure: it reads zeros",
                                sensor.name, model.where(sim.index))
                self.force.append((sensor, sim))
            elif sensor.type == "gyro":
                self.gyro.append((sensor, sim))
            elif sensor.type == "accel":
                local = tuple(float(v) for v in np.asarray(sensor.translation, float) - sim.com)
                self.accel.append((sensor, sim, local))
        self._previous = [np.array(sim.body.getRelPointVel(local)) for _, sim, local in self.accel]

    def before_step(self) -> None:
        """Keep each accelerometer point's velocity for the difference after the step."""
        previous = self._previous
        for k, (_, sim, local) in enumerate(self.accel):
            previous[k] = sim.body.getRelPointVel(local)

    def read(self) -> dict[str, np.ndarray]:
        out: dict[str, np.ndarray] = {}
        for sensor, sim in self.force:
            out[sensor.name] = self._force(sensor, sim)
        for sensor, sim in self.gyro:
            r = _sensor_rotation(sim, sensor)
            out[sensor.name] = r.T @ np.array(sim.body.getAngularVel())
        for k, (sensor, sim, local) in enumerate(self.accel):
            velocity = np.array(sim.body.getRelPointVel(local))
            acceleration = (velocity - np.asarray(self._previous[k])) / self.dt - self.gravity
            out[sensor.name] = _sensor_rotation(sim, sensor).T @ acceleration
        return out

    def _force(self, sensor: Sensor, sim: LinkSim) -> np.ndarray:
        if sim.joint is None:
            return np.zeros(6)
        f1, t1, _, _ = sim.joint.getFeedback()
        f1, t1 = np.array(f1), np.array(t1)
        r_link = np.array(sim.body.getRotation()).reshape(3, 3)
        com = np.array(sim.body.getPosition())
        point = com + r_link @ (np.asarray(sensor.translation, float) - sim.com)
        # The joint pushes the link with f1 (torque t1 about its COM); the parent gets the reaction.
        force = -f1
        moment = -(t1 + np.cross(com - point, f1))
        r = r_link @ np.asarray(sensor.rotation, float)
        return np.concatenate([r.T @ force, r.T @ moment])


def _sensor_rotation(sim: LinkSim, sensor: Sensor) -> np.ndarray:
    return np.array(sim.body.getRotation()).reshape(3, 3) @ np.asarray(sensor.rotation, float)
