"""Force/torque, rate gyro and accelerometer readings of one model from MuJoCo's own sensors.

Each BodyInfo sensor is a MuJoCo site at the sensor's pose with MuJoCo sensors on it (build.py),
which read in the site frame with the meanings hrpsim gives them on ODE:

- force: MuJoCo's force and torque sensors give the wrench the parent exerts on the site's body,
  moment about the site; hrpsim reads the opposite, the wrench the link passes to its parent, so
  a foot sensor of a standing robot reads +weight up. A sensor on the root link (no parent joint)
  reads zeros, as on ODE.
- gyro: the body's angular velocity in the site frame, at the state now.
- accel: the site's acceleration minus gravity (+g up at rest, zero in free fall), from the
  accelerations of the step just taken, as ODE's difference over the last step gives it.

Force and acceleration are MuJoCo's acceleration-stage sensors: they are computed during the step,
so the engine keeps a copy of them (``snapshot``) before it computes the next step's positions.
"""

from __future__ import annotations

import mujoco
import numpy as np

from hrpsim.bodyinfo import Body


class SensorSet:
    def __init__(self, model: mujoco.MjModel, data: mujoco.MjData, info: Body, sites: dict[str, str]) -> None:
        self.d = data
        self.after_step = np.array(data.sensordata)  # acceleration-stage values of the last step
        force: list[tuple[str, int, int]] = []  # name, address of force (3) and torque (3); -1: reads zeros
        gyro: list[tuple[str, int]] = []
        accel: list[tuple[str, int]] = []
        for sensor in info.sensors:
            site = sites.get(sensor.name)
            if site is None:
                continue
            first = _address(model, f"{site}/0")
            if sensor.type == "force":
                force.append((sensor.name, -1 if sensor.link == 0 else first, _address(model, f"{site}/1")))
            elif sensor.type == "gyro":
                gyro.append((sensor.name, first))
            else:
                accel.append((sensor.name, first))
        # One gather per read: kept values (force, accel) and values now (gyro), then a view per sensor.
        self.force_names = [name for name, _, _ in force]
        self.zero_force = np.array([adr < 0 for _, adr, _ in force], dtype=bool)
        self.force_index = np.array(
            [[*range(max(f, 0), max(f, 0) + 3), *range(t, t + 3)] for _, f, t in force], dtype=int
        ).reshape(-1)
        self.accel_names = [name for name, _ in accel]
        self.accel_index = np.array([range(adr, adr + 3) for _, adr in accel], dtype=int).reshape(-1)
        self.gyro_names = [name for name, _ in gyro]
        self.gyro_index = np.array([range(adr, adr + 3) for _, adr in gyro], dtype=int).reshape(-1)

    def snapshot(self) -> None:
        """Keep the acceleration-stage readings of the step just taken."""
        self.after_step[:] = self.d.sensordata

    def read(self) -> dict[str, np.ndarray]:
        out: dict[str, np.ndarray] = {}
        if self.force_names:
            wrenches = (-self.after_step[self.force_index]).reshape(-1, 6)
            wrenches[self.zero_force] = 0.0
            out.update(zip(self.force_names, wrenches, strict=True))
        if self.gyro_names:
            out.update(zip(self.gyro_names, self.d.sensordata[self.gyro_index].reshape(-1, 3), strict=True))
        if self.accel_names:
            out.update(zip(self.accel_names, self.after_step[self.accel_index].reshape(-1, 3), strict=True))
        return out


def _address(model: mujoco.MjModel, sensor: str) -> int:
    return int(model.sensor_adr[mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_SENSOR, sensor)])
