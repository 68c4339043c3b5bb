"""Range and vision readings handed to controllers: each controller gets, with its next state, the
latest reading of each sensor produced since its last state, and never one twice. A controller that
runs every few ticks still sees every sensor slower than itself frame by frame; of a faster sensor
it sees the newest frame at each of its turns, as a real one would.

The tick loop calls ``produce(tick, time, link_states)`` once per tick before the hub sends states;
the hub asks ``take(controller, robot)`` for the readings to add to that controller's
``state.sensors``, and passes a command's ``sensors`` field to ``switch(robot, switches)``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from hrpsim.engines.base import Engine, LinkStates, RobotState
from hrpsim.errors import ConfigError, NotFound, RequestError, SimulationError
from hrpsim.simserver.sensor_frames import SensorFrames


class SensorDelivery:
    @classmethod
    def for_world(cls, engine: Engine) -> SensorDelivery | None:
        """Delivery of the range and vision sensors of the engine's robots; None when they have none."""
        robots = set(engine.robots)
        if not any(s.type in ("range", "vision") for name in robots for s in engine.body(name).sensors):
            return None
        try:
            frames = SensorFrames(
                engine.bodies, engine.timestep, cameras=engine.project.world.cameras, sensing=robots, engine=engine
            )
        except ConfigError as exc:  # a model's sensor or the rendering setup: the run stops saying which
            raise SimulationError(f"range and vision sensors: {exc}") from None
        return cls(frames, engine.link_states)

    def __init__(self, frames: SensorFrames, link_states: Callable[[str], LinkStates] | None = None) -> None:
        self.frames = frames
        self.produces = bool(frames.schedule.rates)  # False: no sensor ever has a frame (cameras off)
        self._latest: dict[str, dict[str, tuple[int, dict[str, Any]]]] = {}  # model -> label -> (serial, reading)
        self._seen: dict[str, dict[str, int]] = {}  # controller -> label -> serial last handed over
        self._serial = 0
        self._last_tick = -1
        self.link_states = link_states

    def produce(
        self, tick: int, sim_time: float, link_states: Callable[[str], LinkStates] | None = None
    ) -> dict[str, dict[str, dict[str, Any]]]:
        """Compute the readings due at this tick (the world posed by ``link_states``, or the world's
        own); return them, model -> sensor -> reading."""
        if tick <= self._last_tick:  # the world was reset: what is waiting belongs to the run before
            self._latest.clear()
            self._seen.clear()
        self._last_tick = tick
        produced = self.frames.frames(tick, sim_time, link_states or self.link_states)
        for model, readings in produced.items():
            latest = self._latest.setdefault(model, {})
            for label, reading in readings.items():
                self._serial += 1
                latest[label] = (self._serial, reading)
        return produced

    def take(self, controller: str, robot: str) -> dict[str, dict[str, Any]]:
        """The readings of ``robot``'s sensors this controller has not had yet."""
        latest = self._latest.get(robot)
        if not latest:
            return {}
        seen = self._seen.setdefault(controller, {})
        out = {}
        for label, (serial, reading) in latest.items():
            if seen.get(label, 0) < serial:
                seen[label] = serial
                out[label] = reading
        return out

    def switch(self, robot: str, switches: dict[str, bool]) -> None:
        """Turn sensors of ``robot`` on or off; RequestError naming the sensor if it has no such one."""
        for label, on in switches.items():
            if self.frames.owner.get(label) != robot:
                mine = [name for name, model in self.frames.owner.items() if model == robot]
                raise RequestError(
                    f"command field 'sensors': robot {robot!r} has no range or vision sensor "
                    f"{label!r} (its sensors: {', '.join(mine) or 'none'})"
                )
            try:
                self.frames.switch(label, on)
            except NotFound as exc:
                raise RequestError(f"command field 'sensors': {exc}", field="sensors") from None

    def close(self) -> None:
        self.frames.close()


def with_readings(state: RobotState, readings: dict[str, dict[str, Any]]) -> RobotState:
    """A robot state whose ``sensors`` also hold these range and vision readings."""
    if not readings:
        return state
    return dataclasses.replace(state, sensors={**state.sensors, **readings})


class WorldSensors:
    """The range and vision sensors of one project's world: their delivery (above) is built at the
    first tick, only when a robot has such sensors. The tick loop has them produce each tick's
    readings into the tick record; the hub hands them to controllers and switches them."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine
        self._delivery: SensorDelivery | bool | None = False  # False: not built yet

    def delivery(self) -> SensorDelivery | None:
        if self._delivery is False:
            self._delivery = SensorDelivery.for_world(self._engine)
        return self._delivery

    @property
    def produces(self) -> bool:
        """Whether any range or vision sensor of the world ever has a reading (cameras may be off)."""
        delivery = self.delivery()
        return delivery is not None and delivery.produces

    def produce(self, record: Any) -> None:
        """The readings due at the record's tick go into ``record.readings``."""
        delivery = self.delivery()
        if delivery is not None and delivery.produces:
            record.readings = delivery.produce(record.tick, record.time, record.links)

    def take(self, controller: str, robot: str) -> dict[str, dict[str, Any]]:
        delivery = self.delivery()
        return delivery.take(controller, robot) if delivery is not None and delivery.produces else {}

    def switch(self, robot: str, switches: dict[str, bool]) -> None:
        delivery = self.delivery()
        if delivery is None:
            raise RequestError(
                f"command field 'sensors': robot {robot!r} has no range or vision sensors", field="sensors"
            )
        delivery.switch(robot, switches)

    def close(self) -> None:
        if self._delivery:
            self._delivery.close()
        self._delivery = False
