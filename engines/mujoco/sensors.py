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
A robot's readings are read every tick, so where each one comes from is worked out once per model:
a read is one gather from the values now, the values kept from the step and a zero.
"""

from __future__ import annotations

from collections.abc import Callable

import mujoco
import numpy as np

from hrpsim.bodyinfo import Body, Sensor
from hrpsim.engines.base import read_only


class MujocoForce:
    """Force/torque: MuJoCo's force and torque sensors on the site, negated (the wrench the link
    passes to its parent); zeros on the root link, which has no parent joint."""

    types = ("force",)
    elements = (mujoco.mjtSensor.mjSENS_FORCE, mujoco.mjtSensor.mjSENS_TORQUE)
    after_step = True  # an acceleration-stage value, kept from the step (else read now)
    sign = -1.0

    @staticmethod
    def reads_zero(sensor: Sensor) -> bool:
        return sensor.link == 0


class MujocoGyro:
    """Rate gyro: the body's angular velocity in the site frame, at the state now."""

    types = ("gyro",)
    elements = (mujoco.mjtSensor.mjSENS_GYRO,)
    after_step = False
    sign = 1.0

    @staticmethod
    def reads_zero(sensor: Sensor) -> bool:
        return False


class MujocoAccel(MujocoGyro):
    """Accelerometer: the site's acceleration minus gravity, from the step just taken."""

    types = ("accel",)
    elements = (mujoco.mjtSensor.mjSENS_ACCELEROMETER,)
    after_step = True


Measured = type[MujocoForce] | type[MujocoGyro]

# The class that measures each sensor type engines measure (hrpsim.sensor_types.engine_sensor_types()).
MEASURED: dict[str, Measured] = {kind: cls for cls in (MujocoForce, MujocoGyro, MujocoAccel) for kind in cls.types}


class SensorSet:
    """Every engine-measured sensor of one model, read as :data:`MEASURED` says (force sensors
    first, then gyros, then accelerometers; each type in the model's order)."""

    def __init__(self, model: mujoco.MjModel, data: mujoco.MjData, info: Body, sites: dict[str, str]) -> None:
        self._sensordata = data.sensordata  # (a view kept: each attribute of an MjData makes a new array)
        n = self._sensordata.size
        # [the values now | those of the last step | 0.0]: every reading is gathered from here
        self._values = np.zeros(2 * n + 1)
        self._values[n : 2 * n] = data.sensordata
        self.after_step = self._values[n : 2 * n]  # acceleration-stage values of the last step
        self._now = self._values[:n]
        index: list[int] = []
        sign: list[float] = []
        self._slices: list[tuple[str, slice]] = []  # each reading's name and place in a read
        for cls in dict.fromkeys(MEASURED.values()):
            for sensor in info.sensors:
                if sensor.type not in cls.types or sensor.name not in sites:
                    continue
                columns = _columns(model, sites[sensor.name], len(cls.elements))
                if cls.reads_zero(sensor):
                    index += [2 * n] * len(columns)
                    sign += [1.0] * len(columns)
                else:
                    index += [a + n if cls.after_step else a for a in columns]
                    sign += [cls.sign] * len(columns)
                self._slices.append((sensor.name, slice(len(index) - len(columns), len(index))))
        self._index = np.array(index, dtype=np.intp)
        self._sign = np.array(sign)

    def snapshot(self) -> None:
        """Keep the acceleration-stage readings of the step just taken."""
        self.after_step[:] = self._sensordata

    def read(self) -> dict[str, np.ndarray]:
        """Every reading now, in new arrays."""
        if not self._slices:
            return {}
        values = np.empty(self._index.size)
        self._gather(values)
        return {name: values[place] for name, place in self._slices}

    def reader(self) -> Callable[[], dict[str, np.ndarray]]:
        """What reads every reading now into arrays kept from call to call: the map it returns is
        made once, of read-only views of them."""
        values = np.empty(self._index.size)
        readings = {name: read_only(values[place]) for name, place in self._slices}

        def read() -> dict[str, np.ndarray]:
            if readings:
                self._gather(values)
            return readings

        return read

    def _gather(self, out: np.ndarray) -> None:
        self._now[:] = self._sensordata
        self._values.take(self._index, out=out, mode="clip")
        out *= self._sign


def _columns(model: mujoco.MjModel, site: str, elements: int) -> list[int]:
    """Where the site's three-vector sensors (as build.py names them) are in sensordata."""
    out: list[int] = []
    for element in range(elements):
        start = int(model.sensor_adr[mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_SENSOR, f"{site}/{element}")])
        out += range(start, start + 3)
    return out
