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

from hrpsim.bodyinfo import Body, Sensor


class MujocoForce:
    """Force/torque: MuJoCo's force and torque sensors on the site, negated (the wrench the link
    passes to its parent); zeros on the root link, which has no parent joint."""

    types = ("force",)
    elements = (mujoco.mjtSensor.mjSENS_FORCE, mujoco.mjtSensor.mjSENS_TORQUE)

    def __init__(self, model: mujoco.MjModel, entries: list[tuple[Sensor, str]]) -> None:
        self.names = [sensor.name for sensor, _ in entries]
        self.zero = np.array([sensor.link == 0 for sensor, _ in entries], dtype=bool)
        self.index = np.array(
            [
                [*range(f, f + 3), *range(t, t + 3)]
                for f, t in ((_address(model, s, 0), _address(model, s, 1)) for _, s in entries)
            ],
            dtype=int,
        ).reshape(-1)

    def read(self, out: dict[str, np.ndarray], now: np.ndarray, after_step: np.ndarray) -> None:
        wrenches = (-after_step[self.index]).reshape(-1, 6)
        wrenches[self.zero] = 0.0
        out.update(zip(self.names, wrenches, strict=True))


class _Vector:
    """A sensor type read as one MuJoCo three-vector sensor on the site."""

    types: tuple[str, ...]
    elements: tuple[mujoco.mjtSensor, ...]
    after_step: bool  # an acceleration-stage value, kept from the step (else read now)

    def __init__(self, model: mujoco.MjModel, entries: list[tuple[Sensor, str]]) -> None:
        self.names = [sensor.name for sensor, _ in entries]
        self.index = np.array([range(a, a + 3) for a in (_address(model, s, 0) for _, s in entries)], dtype=int)
        self.index = self.index.reshape(-1)

    def read(self, out: dict[str, np.ndarray], now: np.ndarray, after_step: np.ndarray) -> None:
        values = after_step if self.after_step else now
        out.update(zip(self.names, values[self.index].reshape(-1, 3), strict=True))


class MujocoGyro(_Vector):
    """Rate gyro: the body's angular velocity in the site frame, at the state now."""

    types = ("gyro",)
    elements = (mujoco.mjtSensor.mjSENS_GYRO,)
    after_step = False


class MujocoAccel(_Vector):
    """Accelerometer: the site's acceleration minus gravity, from the step just taken."""

    types = ("accel",)
    elements = (mujoco.mjtSensor.mjSENS_ACCELEROMETER,)
    after_step = True


# The class that measures each sensor type an engine measures (hrpsim.bodyinfo.ENGINE_SENSOR_TYPES).
MEASURED = {kind: cls for cls in (MujocoForce, MujocoGyro, MujocoAccel) for kind in cls.types}


class SensorSet:
    """Every engine-measured sensor of one model, each type by its class in :data:`MEASURED`."""

    def __init__(self, model: mujoco.MjModel, data: mujoco.MjData, info: Body, sites: dict[str, str]) -> None:
        self.d = data
        self.after_step = np.array(data.sensordata)  # acceleration-stage values of the last step
        self.parts = []
        for cls in dict.fromkeys(MEASURED.values()):
            entries = [(s, sites[s.name]) for s in info.sensors if s.type in cls.types and s.name in sites]
            if entries:
                self.parts.append(cls(model, entries))

    def snapshot(self) -> None:
        """Keep the acceleration-stage readings of the step just taken."""
        self.after_step[:] = self.d.sensordata

    def read(self) -> dict[str, np.ndarray]:
        out: dict[str, np.ndarray] = {}
        for part in self.parts:
            part.read(out, self.d.sensordata, self.after_step)
        return out


def _address(model: mujoco.MjModel, site: str, element: int) -> int:
    """Where the site's ``element``-th sensor (as build.py names them) starts in sensordata."""
    return int(model.sensor_adr[mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_SENSOR, f"{site}/{element}")])
