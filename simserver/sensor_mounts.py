"""Where a range or vision sensor sits in the world: its link's pose (from the engine's link states)
times the sensor's fixed pose on that link.

In the sensor frame of the OpenHRP format, -Z points forward (the line of sight, the middle beam of
a scan) and +Y up; a scan sweeps the X-Z plane.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from hrpsim.bodyinfo import Sensor
from hrpsim.engines.base import LinkStates
from hrpsim.transforms import pose


def sensor_label(sensor: Sensor) -> str:
    """The name controllers know a sensor by: the node's ``name`` field where the file gives one
    (sample1's VisionSensor ``name "LeftCamera"``), else its node name."""
    name = sensor.params.get("name")
    return name if isinstance(name, str) and name else sensor.name


def link_frames(states: LinkStates) -> np.ndarray:
    """(links, 4, 4) world poses of the link frames."""
    w, x, y, z = (states.quaternions[:, i] for i in range(4))
    frames = np.zeros((len(w), 4, 4))
    frames[:, 0, 0] = 1 - 2 * (y * y + z * z)
    frames[:, 0, 1] = 2 * (x * y - z * w)
    frames[:, 0, 2] = 2 * (x * z + y * w)
    frames[:, 1, 0] = 2 * (x * y + z * w)
    frames[:, 1, 1] = 1 - 2 * (x * x + z * z)
    frames[:, 1, 2] = 2 * (y * z - x * w)
    frames[:, 2, 0] = 2 * (x * z - y * w)
    frames[:, 2, 1] = 2 * (y * z + x * w)
    frames[:, 2, 2] = 1 - 2 * (x * x + y * y)
    frames[:, :3, 3] = states.positions
    frames[:, 3, 3] = 1.0
    return frames


@dataclass
class Mount:
    """One sensor of one model: which link carries it and its pose in that link's frame."""

    model: str
    label: str
    sensor: Sensor
    link: int
    on_link: np.ndarray  # 4x4

    @classmethod
    def of(cls, model: str, sensor: Sensor) -> Mount:
        on_link = pose(np.asarray(sensor.translation, float), np.asarray(sensor.rotation, float))
        return cls(model, sensor_label(sensor), sensor, sensor.link, on_link)

    def world_pose(self, frames: np.ndarray) -> np.ndarray:
        """4x4 pose of the sensor frame in the world, given the model's link frames."""
        return frames[self.link] @ self.on_link

    def param(self, key: str, default: Any) -> Any:
        value = self.sensor.params.get(key, default)
        return default if value is None else value
