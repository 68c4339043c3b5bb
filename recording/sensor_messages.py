"""Range and vision readings as Foxglove's own messages: a scan as ``foxglove.LaserScan``, each
image of a camera as ``foxglove.RawImage``. Foxglove's 3D panel draws the scans in the link frames
of the ``/tf`` topic, its image panel shows the images; our own readers skip these topics.

A reading is recorded at the tick it reaches the simulator (the tick its controllers can first
get it), stamped inside with the simulated time it was taken (``timestamp``).
"""

from __future__ import annotations

import base64
from typing import TYPE_CHECKING, Any

import numpy as np
import orjson

from hrpsim.recording import schemas
from hrpsim.recording.messages import timestamp
from hrpsim.sensor_mounts import Mount, RangeSensor
from hrpsim.transforms import matrix_quaternion

if TYPE_CHECKING:
    from hrpsim.engines.base import Engine

# A LaserScan's beam at angle t lies along (cos t, sin t, 0) of its pose; an OpenHRP scan's beam at
# angle a along (-sin a, 0, -cos a) of the sensor frame. The columns of this rotation are the
# scan frame's axes in the sensor frame, so the same angle names the same beam in both.
SCAN_IN_SENSOR = np.array([[0.0, -1.0, 0.0], [0.0, 0.0, 1.0], [-1.0, 0.0, 0.0]])

# image kind -> (RawImage encoding, bytes per pixel)
IMAGE_ENCODINGS = {"color": ("rgb8", 3), "mono": ("mono8", 1), "depth": ("32FC1", 4)}


class SensorMessages:
    """The messages of one reading of a robot's range or vision sensor."""

    def __init__(self, engine: Engine) -> None:
        self._mounts: dict[tuple[str, str], Mount] = {}
        self._angles: dict[tuple[str, str], np.ndarray] = {}
        self._frames: dict[tuple[str, str], str] = {}
        for model in engine.robots:
            body = engine.body(model)
            for sensor in body.sensors:
                if sensor.type not in ("range", "vision"):
                    continue
                mount = Mount.of(model, sensor)
                key = (model, mount.label)
                self._mounts[key] = mount
                self._frames[key] = schemas.frame_id(model, body.links[mount.link].name)
                if sensor.type == "range":
                    self._angles[key] = RangeSensor.of(mount).angles

    def messages(self, model: str, label: str, reading: dict[str, Any]) -> list[tuple[str, dict[str, Any], bytes]]:
        """(topic, schema, JSON) of each message the reading makes; none for a sensor not known."""
        key = (model, label)
        if key not in self._mounts:
            return []
        stamp = timestamp(reading.get("time", 0.0))
        if key in self._angles:
            topic = schemas.sensor_topic(model, label)
            return [(topic, schemas.LASER_SCAN, self._scan(key, stamp, reading["distances"]))]
        return [
            (schemas.sensor_topic(model, label, kind), schemas.RAW_IMAGE, _image(self._frames[key], stamp, kind, image))
            for kind, image in reading.items()
            if kind in IMAGE_ENCODINGS
        ]

    def _scan(self, key: tuple[str, str], stamp: dict[str, int], distances: Any) -> bytes:
        on_link = self._mounts[key].on_link
        angles = self._angles[key]
        w, x, y, z = matrix_quaternion(on_link[:3, :3] @ SCAN_IN_SENSOR)
        p = on_link[:3, 3]
        return orjson.dumps(
            {
                "timestamp": stamp,
                "frame_id": self._frames[key],
                "pose": {
                    "position": {"x": float(p[0]), "y": float(p[1]), "z": float(p[2])},
                    "orientation": {"x": float(x), "y": float(y), "z": float(z), "w": float(w)},
                },
                "start_angle": float(angles[0]),
                "end_angle": float(angles[-1]),
                "ranges": np.asarray(distances, dtype=np.float64),
                "intensities": [],
            },
            option=orjson.OPT_SERIALIZE_NUMPY,
        )


def _image(frame_id: str, stamp: dict[str, int], kind: str, image: Any) -> bytes:
    encoding, size = IMAGE_ENCODINGS[kind]
    pixels = np.ascontiguousarray(image, dtype=np.float32 if kind == "depth" else np.uint8)
    height, width = pixels.shape[:2]
    return orjson.dumps(
        {
            "timestamp": stamp,
            "frame_id": frame_id,
            "width": width,
            "height": height,
            "encoding": encoding,
            "step": width * size,
            "data": base64.b64encode(pixels.astype(pixels.dtype.newbyteorder("<"), copy=False).tobytes()).decode(),
        }
    )
