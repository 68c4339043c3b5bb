"""Where a range or vision sensor sits in the world: its link's pose (from an engine's link states)
times the sensor's fixed pose on that link; and a range sensor's scan as its model file describes it.

In the sensor frame of the OpenHRP format, -Z points forward (the line of sight, the middle beam of
a scan) and +Y up; a scan sweeps the X-Z plane: beam angles run from -scanAngle/2 to +scanAngle/2
in multiples of scanStep from 0, in that order. The simulator scans and renders from these; the
recorder describes the sensors with them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from hrpsim.bodyinfo import Sensor
from hrpsim.errors import ConfigError
from hrpsim.transforms import pose

# The format's defaults (RangeSensor PROTO): used where a model file leaves a field out.
RANGE_DEFAULTS = {"scanAngle": 3.14159, "scanStep": 0.1, "scanRate": 10.0, "maxDistance": 10.0}


class LinkPoses(Protocol):
    """Every link's world pose (an engine's LinkStates)."""

    positions: np.ndarray  # (links, 3)
    quaternions: np.ndarray  # (links, 4) w x y z


def sensor_label(sensor: Sensor) -> str:
    """The name controllers know a sensor by: the node's ``name`` field where the file gives one
    (sample1's VisionSensor ``name "LeftCamera"``), else its node name."""
    name = sensor.params.get("name")
    return name if isinstance(name, str) and name else sensor.name


def link_frames(states: LinkPoses) -> np.ndarray:
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


def scan_angles(angle_range: float, step: float) -> np.ndarray:
    """The beam angles of a scan, in scan order (OpenHRP's RangeSensor convention)."""
    half = math.floor(angle_range / 2 / step + 1e-9) if step > 0 else 0
    return np.arange(-half, half + 1, dtype=np.float64) * step


@dataclass
class RangeSensor:
    """A range sensor's mount and scan, its model file's fields checked (defaults where left out)."""

    mount: Mount
    scan_angle: float  # rad
    scan_step: float  # rad
    angles: np.ndarray  # (beams,) rad, scan order
    max_distance: float
    rate: float  # scans per second

    @classmethod
    def of(cls, mount: Mount) -> RangeSensor:
        values = {key: mount.param(key, default) for key, default in RANGE_DEFAULTS.items()}
        where = f"model {mount.model!r} range sensor {mount.label!r}"
        for key, value in values.items():
            if not isinstance(value, int | float) or not np.isfinite(value) or value < 0:
                raise ConfigError(f"{where}: {key} must be a number >= 0, got {value!r}; fix the model file")
        if values["maxDistance"] <= 0 or values["scanRate"] <= 0:
            raise ConfigError(
                f"{where}: maxDistance and scanRate must be > 0, got {values['maxDistance']!r} "
                f"and {values['scanRate']!r}; fix the model file"
            )
        scan_angle, scan_step = float(values["scanAngle"]), float(values["scanStep"])
        angles = scan_angles(scan_angle, scan_step)
        return cls(mount, scan_angle, scan_step, angles, float(values["maxDistance"]), float(values["scanRate"]))
