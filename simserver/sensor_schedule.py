"""Which range and vision sensors produce a new frame at tick k.

A sensor with rate ``r`` (scanRate, frameRate; Hz) produces frame ``n = floor(t * r)`` at the first
tick whose time ``t = k * timestep`` reaches it, so tick 0 always has a frame and the long-run rate
is exactly ``r`` even when ``1 / r`` is not a whole number of ticks (30 fps at 1 ms: frames at ticks
0, 34, 67, 100, ...). A rate above ``1 / timestep`` gives a frame every tick. The rule depends only on
the tick number, so two runs of one project produce frames on the same ticks.

A sensor can be switched off (a controller asks) and on again; an off sensor produces nothing.
"""

from __future__ import annotations

import math

from hrpsim.errors import ConfigError, NotFound

# Guards floor(k * dt * r) against k * dt * r landing a rounding error below a whole number.
_EPSILON = 1e-9


class SensorSchedule:
    def __init__(self, timestep: float, rates: dict[str, float]) -> None:
        if not timestep > 0:
            raise ConfigError(f"sensor schedule: the time step must be > 0 s, got {timestep!r}")
        for name, rate in rates.items():
            if not (isinstance(rate, int | float) and math.isfinite(rate) and rate > 0):
                raise ConfigError(
                    f"sensor {name!r}: its rate (scanRate or frameRate) must be a number > 0 Hz, "
                    f"got {rate!r}; fix the model file"
                )
        self.timestep = float(timestep)
        self.rates = {name: float(rate) for name, rate in rates.items()}
        self.off: set[str] = set()

    def frame_number(self, name: str, tick: int) -> int:
        return math.floor(tick * self.timestep * self.rates[name] + _EPSILON)

    def is_due(self, name: str, tick: int) -> bool:
        return name not in self.off and self.frame_number(name, tick) != self.frame_number(name, tick - 1)

    def due(self, tick: int) -> list[str]:
        """The sensors (switched on) with a new frame at this tick, in the order they were given."""
        return [name for name in self.rates if self.is_due(name, tick)]

    def switch(self, name: str, on: bool) -> None:
        if name not in self.rates:
            raise NotFound(f"no range or vision sensor named {name!r} (sensors: {', '.join(self.rates) or 'none'})")
        if on:
            self.off.discard(name)
        else:
            self.off.add(name)
