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
        self.force: list[tuple[str, int, int]] = []  # name, address of force (3) and torque (3), -1: reads zeros
        self.gyro: list[tuple[str, int]] = []
        self.accel: list[tuple[str, int]] = []
        for sensor in info.sensors:
            site = sites.get(sensor.name)
            if site is None:
                continue
            first = int(model.sensor_adr[mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_SENSOR, f"{site}/0")])
            if sensor.type == "force":
                second = int(model.sensor_adr[mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_SENSOR, f"{site}/1")])
                on_root = sensor.link == 0
                self.force.append((sensor.name, -1 if on_root else first, second))
            elif sensor.type == "gyro":
                self.gyro.append((sensor.name, first))
            else:
                self.accel.append((sensor.name, first))

    def snapshot(self) -> None:
        """Keep the acceleration-stage readings of the step just taken."""
        self.after_step[:] = self.d.sensordata

    def read(self) -> dict[str, np.ndarray]:
        out: dict[str, np.ndarray] = {}
        kept, now = self.after_step, self.d.sensordata
        for name, force, torque in self.force:
            out[name] = np.zeros(6) if force < 0 else -np.concatenate([kept[force:force + 3], kept[torque:torque + 3]])
        for name, adr in self.gyro:
            out[name] = now[adr:adr + 3].copy()
        for name, adr in self.accel:
            out[name] = kept[adr:adr + 3].copy()
        return out
