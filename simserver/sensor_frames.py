"""Range and vision readings of one world, on the ticks their rates say, ready for controllers.

``frames(tick, time, link_states)`` gives, per model, the readings produced at that tick:
``{label: {"time": t, "distances": ...}}`` for a range sensor, ``{label: {"time": t, "color": ...,
"depth": ...}}`` for a camera (the keys its type names; see simserver/vision_sensors.py). ``time``
is when the reading was taken. A tick where no sensor is due costs nothing.

Cameras render in the simulator's process (``world.cameras: inline``, the default: the image of
tick k arrives at tick k) or in a rendering process of their own (``world.cameras: process``): the
poses of tick k go to that process and its images arrive, stamped with k's time, on the next tick
a camera is due, so rendering overlaps the ticks between frames. Both are deterministic: which
tick carries which image depends only on the tick numbers.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hrpsim.bodyinfo import Body
from hrpsim.engines.base import Engine, LinkStates
from hrpsim.sensor_mounts import link_frames
from hrpsim.simserver.range_sensors import RangeScanner
from hrpsim.simserver.render_process import RenderProcess
from hrpsim.simserver.sensor_schedule import SensorSchedule
from hrpsim.simserver.vision_sensors import SceneRenderer, cameras_of

Readings = dict[str, dict[str, dict[str, Any]]]  # model -> label -> reading


class SensorFrames:
    def __init__(
        self,
        bodies: dict[str, Body],
        timestep: float,
        *,
        cameras: str = "inline",
        sensing: set[str] | None = None,
        engine: Engine | None = None,
    ) -> None:
        """``sensing``: the models whose sensors produce readings (default all); every body is seen.
        ``engine``: the running engine, whose own ray casts the range sensors use when it has them."""
        self.models = list(bodies)
        sensing = set(bodies) if sensing is None else sensing
        has_range = any(s.type == "range" for name in sensing for s in bodies[name].sensors)
        self.scanner = RangeScanner(bodies, sensing, engine) if has_range else None
        self.cameras = cameras_of(bodies, sensing) if cameras != "off" else {}
        self.renderer: SceneRenderer | None = None
        self.process: RenderProcess | None = None
        if self.cameras:
            if cameras == "process":
                self.process = RenderProcess(bodies, sensing)
            else:
                self.renderer = SceneRenderer(bodies, sensing)
        ranges = self.scanner.sensors if self.scanner is not None else {}
        self.owner = {label: s.mount.model for label, s in ranges.items()}
        self.owner.update({label: c.mount.model for label, c in self.cameras.items()})
        rates = {label: s.rate for label, s in ranges.items()} | {label: c.rate for label, c in self.cameras.items()}
        self.schedule = SensorSchedule(timestep, rates)

    def switch(self, label: str, on: bool) -> None:
        self.schedule.switch(label, on)

    def frames(self, tick: int, sim_time: float, link_states: Callable[[str], LinkStates]) -> Readings:
        """The readings produced at this tick, by model (only models with one)."""
        due = self.schedule.due(tick)
        if not due:
            return {}
        out: Readings = {}
        if self.scanner is not None:
            scans = self.scanner.scan([label for label in due if label in self.scanner.sensors], link_states)
            for label, distances in scans.items():
                self._put(out, label, {"time": sim_time, "distances": distances})
        cameras = [label for label in due if label in self.cameras]
        if cameras and self.renderer is not None:
            for label, images in self.renderer.render(cameras, link_states).items():
                self._put(out, label, {"time": sim_time, **images})
        elif cameras and self.process is not None:
            self._relay(out, tick, sim_time, cameras, link_states)
        return out

    def _relay(
        self, out: Readings, tick: int, sim_time: float, cameras: list[str], link_states: Callable[[str], LinkStates]
    ) -> None:
        """Collect the rendering process's previous frame, then hand it this tick's poses."""
        answer = self.process.collect()
        if answer is not None and answer["tick"] < tick:  # not from before a reset of the world
            for label, images in answer["images"].items():
                self._put(out, label, {"time": answer["time"], **images})
        frames = {name: link_frames(link_states(name)) for name in self.models}
        self.process.submit(tick, sim_time, cameras, frames)

    def _put(self, out: Readings, label: str, reading: dict[str, Any]) -> None:
        out.setdefault(self.owner[label], {})[label] = reading

    def close(self) -> None:
        if self.renderer is not None:
            self.renderer.close()
            self.renderer = None
        if self.process is not None:
            self.process.close()
            self.process = None
