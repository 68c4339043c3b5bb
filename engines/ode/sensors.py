"""One ODE model's sensors: force/torque from ODE's joint feedback here; gyro and accelerometer from
link motion through the engine-neutral hrpsim/inertial.py, fed by :class:`OdeLinkMotion`.

A force sensor reads the wrench its link passes to its parent through its joint, moved to the sensor
point (moment about the sensor point) and turned into the sensor frame: a foot sensor of a standing
robot reads +weight along its up axis. A sensor on a link without a joint (a free root) reads zeros.
Range and vision sensors are not measured here. Each type has its class (:data:`MEASURED`).
"""

from __future__ import annotations

import logging

import numpy as np

from hrpsim.bodyinfo import Sensor
from hrpsim.engines.ode.model import LinkSim, OdeModel
from hrpsim.inertial import InertialSensors, SensorFrame, Vec, to_link

log = logging.getLogger("hrpsim.engines.ode")


class OdeLinkMotion:
    """hrpsim.inertial.LinkMotion over ODE bodies (a link's body sits at its centre of mass)."""

    def __init__(self, model: OdeModel) -> None:
        self._bodies = [sim.body for sim in model.links]
        self._coms = [tuple(float(v) for v in sim.com) for sim in model.links]

    def rotation(self, link: int) -> tuple[float, ...]:
        return self._bodies[link].getRotation()

    def angular_velocity(self, link: int) -> Vec:
        return self._bodies[link].getAngularVel()

    def point_velocity(self, link: int, point: Vec) -> Vec:
        cx, cy, cz = self._coms[link]
        return self._bodies[link].getRelPointVel((point[0] - cx, point[1] - cy, point[2] - cz))


class OdeForce:
    """Force/torque sensors: the wrench each link passes to its parent, from ODE's joint feedback."""

    types = ("force",)
    steps = False  # nothing to keep before a step

    def __init__(self, model: OdeModel, sensors: list[Sensor], timestep: float, gravity: np.ndarray) -> None:
        self.force: list[tuple[SensorFrame, LinkSim]] = []
        for sensor in sensors:
            sim = model.links[sensor.link]
            if sim.body is None:
                continue
            if sim.joint is None:
                log.warning(
                    "force sensor %r of %s has no joint to measure: it reads zeros", sensor.name, model.where(sim.index)
                )
            self.force.append((SensorFrame(sensor), sim))

    def before_step(self) -> None:
        """Joint feedback is filled in by the step itself."""

    def read(self, out: dict[str, np.ndarray], stepped: bool) -> None:
        """``stepped`` False before the world's first step: ODE fills joint feedback during a step,
        so until then it is uninitialised memory and force sensors read zeros instead."""
        for frame, sim in self.force:
            out[frame.name] = _force(frame, sim) if stepped else np.zeros(6)


class OdeInertial:
    """Rate gyros and accelerometers, from link motion through the engine-neutral hrpsim/inertial.py
    (both read the same link motion, so one class measures the two types)."""

    types = ("gyro", "accel")

    def __init__(self, model: OdeModel, sensors: list[Sensor], timestep: float, gravity: np.ndarray) -> None:
        measurable = {sim.index for sim in model.links if sim.body is not None}
        # InertialSensors picks the model's gyros and accelerometers itself: ``sensors`` are those
        self.inertial = InertialSensors(model.info, OdeLinkMotion(model), timestep, gravity, links=measurable)
        self.steps = bool(self.inertial.accel)  # accelerometers keep their point's velocity before a step

    def before_step(self) -> None:
        self.inertial.before_step()

    def read(self, out: dict[str, np.ndarray], stepped: bool) -> None:
        self.inertial.read(out)


# The class that measures each sensor type an engine measures (hrpsim.bodyinfo.ENGINE_SENSOR_TYPES).
MEASURED = {kind: cls for cls in (OdeForce, OdeInertial) for kind in cls.types}


class OdeSensors:
    """Every engine-measured sensor of one model, each type by its class in :data:`MEASURED`."""

    def __init__(self, model: OdeModel, timestep: float, gravity: np.ndarray) -> None:
        self.parts = []
        for cls in dict.fromkeys(MEASURED.values()):
            sensors = [s for s in model.info.sensors if s.type in cls.types]
            if sensors:
                self.parts.append(cls(model, sensors, timestep, gravity))
        self._stepping = [part for part in self.parts if part.steps]

    def measuring(self, kind: str):  # -> OdeForce | OdeInertial | None
        """The part that measures sensors of type ``kind`` (None when the model has none)."""
        return next((part for part in self.parts if kind in part.types), None)

    @property
    def steps(self) -> bool:
        """Whether some sensor keeps something before each step (the engine skips the call if not)."""
        return bool(self._stepping)

    def before_step(self) -> None:
        for part in self._stepping:
            part.before_step()

    def read(self, stepped: bool = True) -> dict[str, np.ndarray]:
        out: dict[str, np.ndarray] = {}
        for part in self.parts:
            part.read(out, stepped)
        return out


def _force(frame: SensorFrame, sim) -> np.ndarray:
    joint = sim.joint
    if joint is None:
        return np.zeros(6)
    f1, t1, _, _ = joint.getFeedback()
    r = sim.body.getRotation()
    fx, fy, fz = to_link(r, *f1)
    tx, ty, tz = to_link(r, *t1)
    com = sim.com
    dx, dy, dz = frame.point[0] - com[0], frame.point[1] - com[1], frame.point[2] - com[2]  # point - COM, link frame
    # The joint pushes the link with f1 (torque t1 about its COM); the parent gets the reaction,
    # whose moment about the sensor point is -(t1 + (com - point) x f1) = -(t1 - d x f1).
    mx = -(tx - (dy * fz - dz * fy))
    my = -(ty - (dz * fx - dx * fz))
    mz = -(tz - (dx * fy - dy * fx))
    return frame.output([-fx, -fy, -fz, mx, my, mz])
