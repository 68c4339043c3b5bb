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
from hrpsim.engines.ode.einsum import einsum
from hrpsim.engines.ode.model import LinkSim, OdeModel, slice_if_contiguous
from hrpsim.inertial import InertialSensors, SensorFrame, Vec

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
    """Force/torque sensors: the wrench each link passes to its parent, from ODE's joint feedback.

    All of a model's force sensors are read at once: their joints' wrenches in link frames come
    from the model's :class:`JointWrenches` (shared with the joint efforts), and one fixed 6x6 map
    per sensor turns a wrench into the sensor's reading."""

    types = ("force",)
    steps = False  # nothing to keep before a step

    def __init__(self, model: OdeModel, sensors: list[Sensor], timestep: float, gravity: np.ndarray) -> None:
        self.model = model
        self.force: list[tuple[SensorFrame, LinkSim]] = []  # the sensors with a joint to measure
        self._order: list[tuple[str, int]] = []  # every sensor's name and its row in force (-1: zeros)
        for sensor in sensors:
            sim = model.links[sensor.link]
            if sim.body is None:
                continue
            if sim.joint is None:
                log.warning(
                    "force sensor %r of %s has no joint to measure: it reads zeros", sensor.name, model.where(sim.index)
                )
                self._order.append((sensor.name, -1))
                continue
            self._order.append((sensor.name, len(self.force)))
            self.force.append((SensorFrame(sensor), sim))
        self._rows = slice_if_contiguous([model.wrenches.add(sim) for _, sim in self.force])
        self._maps = np.array([_wrench_map(frame, sim) for frame, sim in self.force]).reshape(-1, 6, 6)

    def before_step(self) -> None:
        """Joint feedback is filled in by the step itself."""

    def memory(self) -> None:
        """Nothing kept between steps here (the model's wrenches keep the feedback)."""

    def restore(self, memory: None) -> None:
        """Nothing to put back."""

    def read(self, out: dict[str, np.ndarray], stepped: bool) -> None:
        """``stepped`` False before the world's first step: ODE fills joint feedback during a step,
        so until then it is uninitialised memory and force sensors read zeros instead."""
        if stepped and self.force:
            wrenches = self.model.wrenches.link_frame(self.model.reading())[self._rows]
            values = einsum("kab,kb->ka", self._maps, wrenches)
        for name, row in self._order:
            out[name] = values[row] if stepped and row >= 0 else np.zeros(6)


def _wrench_map(frame: SensorFrame, sim: LinkSim) -> np.ndarray:
    """(6, 6): the sensor's reading from the link-frame force and torque (about the link's centre
    of mass) that its joint puts on the link.

    The parent gets the reaction: force -f, and about the sensor point the moment
    -(t + (com - point) x f) = d x f - t with d = point - com (link frame); the sensor frame then
    turns both triples."""
    dx, dy, dz = (np.asarray(frame.point, float) - np.asarray(sim.com, float)).tolist()
    cross_d = np.array([[0.0, -dz, dy], [dz, 0.0, -dx], [-dy, dx, 0.0]])  # cross_d @ v = d x v
    link_map = np.block([[-np.eye(3), np.zeros((3, 3))], [cross_d, -np.eye(3)]])
    turn = np.eye(3) if frame.rotation_t is None else frame.rotation_t
    return np.kron(np.eye(2), turn) @ link_map


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

    def memory(self) -> list:
        return self.inertial.memory()

    def restore(self, memory: list) -> None:
        self.inertial.restore(memory)

    def read(self, out: dict[str, np.ndarray], stepped: bool) -> None:
        self.inertial.read(out)


# The class that measures each sensor type engines measure (hrpsim.sensor_types.engine_sensor_types()).
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

    def memory(self) -> list:
        """What each part keeps between steps (for a snapshot), in part order."""
        return [part.memory() for part in self.parts]

    def restore(self, memory: list) -> None:
        for part, kept in zip(self.parts, memory, strict=True):
            part.restore(kept)

    def read(self, stepped: bool = True) -> dict[str, np.ndarray]:
        out: dict[str, np.ndarray] = {}
        for part in self.parts:
            part.read(out, stepped)
        return out
