"""Devices of a Choreonoid body file -> BodyInfo sensors, notes, or refusals.

Sensors BodyInfo carries are the device types each sensor type's descriptor names
(hrpsim/sensor_types.py, ``aliases.body``): ForceSensor -> force, RateGyroSensor -> gyro,
AccelerationSensor -> accel, Camera (``format`` COLOR; DEPTH, COLOR_DEPTH and the point-cloud
formats make Choreonoid's RangeCamera) -> vision, RangeSensor -> range. They keep OpenHRP's
parameter names: a type's ``params`` by the same keys, a camera's and a range sensor's from
Choreonoid's own. A Camera without ``format`` is not created, as in Choreonoid.

Devices that observe or decorate but do not move the body (lights, IMU, markers, holders,
digital I/O, scene effects) are kept as notes in ``Body.metadata["notes"]``. Devices that change
the physics through a simulator plugin (AGX or PhysX continuous tracks) or need one (the Livox
lidar) are refused with the file, line and element.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hrpsim.bodyinfo import Sensor
from hrpsim.modelloader.body_values import BodyFile
from hrpsim.modelloader.body_yaml import YMap
from hrpsim.sensor_types import SENSOR_TYPES, Param, called

NOTED = {
    "SpotLight": "a light (a viewer's business)",
    "PointLight": "a light (a viewer's business)",
    "DirectionalLight": "a light (a viewer's business)",
    "IMU": "an IMU (use its AccelerationSensor and RateGyroSensor; hrpsim has no combined IMU)",
    "CompetitorMarker": "a marker drawn for a competition",
    "MarkerDevice": "a marker drawn by a viewer",
    "Holder": "a holder (Choreonoid's grasp helper)",
    "Attachment": "an attachment (Choreonoid's grasp helper)",
    "DigitalIO": "digital I/O",
    "StdActionController": "an action controller",
    "Device": "a generic device",
    "ZmpDevice": "a ZMP display",
    "RainDevice": "a scene effect",
    "SnowDevice": "a scene effect",
    "FireDevice": "a scene effect",
    "SmokeDevice": "a scene effect",
    "FountainDevice": "a scene effect",
    "FogDevice": "a scene effect",
}
REFUSED = {
    "AGXVehicleContinuousTrackDevice": "a continuous track simulated by the AGX Dynamics plugin",
    "PxContinuousTrack": "a continuous track simulated by the PhysX plugin",
    "LivoxMid360": "a Livox lidar whose scan pattern comes from a Choreonoid installation",
    "LivoxMid70": "a Livox lidar whose scan pattern comes from a Choreonoid installation",
}
_IMAGE_TYPES = {
    "COLOR": "COLOR",
    "DEPTH": "DEPTH",
    "COLOR_DEPTH": "COLOR_DEPTH",
    "POINT_CLOUD": "DEPTH",
    "COLOR_POINT_CLOUD": "COLOR_DEPTH",
}


# Choreonoid's optical frames, as rotations from the GL frame's axes (columns) to the named frame
_OPTICAL_FRAMES = {
    "gl": ((1, 0, 0), (0, 1, 0), (0, 0, 1)),
    "cv": ((1, 0, 0), (0, -1, 0), (0, 0, -1)),
    "robotics": ((0, 0, -1), (-1, 0, 0), (0, 1, 0)),
}


def is_device(kind: str) -> bool:
    return kind in called("body") or kind in NOTED or kind in REFUSED


def read_device(file: BodyFile, node: YMap, kind: str, link: int, placed: np.ndarray) -> Sensor | str | None:
    """A Sensor, a note (str) for a device kept only as a note, or None (a problem was added)."""
    name = file.string(node, "name", kind)
    what = f"{kind} {name!r}" if name else kind
    if kind in REFUSED:
        file.add(node, what, f"{REFUSED[kind]} cannot be simulated by hrpsim", "type")
        return None
    if kind in NOTED:
        return f"{file.where(node)}: {what}: {NOTED[kind]}; not simulated"
    sensor_type = called("body")[kind][0]
    params = _params(file, node, sensor_type, what)
    if params is None:
        return f"{file.where(node)}: {what}: a Camera without format is not created (as in Choreonoid)"
    sensor_id = file.integer(node, "id", what, -1)
    rotation = _rigid(placed[:3, :3])
    if sensor_type in ("vision", "range"):
        rotation = rotation @ _optical_frame(file, node, what)
    return Sensor(
        name=name,
        type=sensor_type,
        id=sensor_id,
        link=link,
        translation=placed[:3, 3].copy(),
        rotation=rotation,
        params=params,
    )


def _optical_frame(file: BodyFile, node: YMap, what: str) -> np.ndarray:
    """The rotation from the device's frame to the frame a camera or scanner looks in (OpenHRP's
    and OpenGL's: along -Z, Y up): ``optical_frame`` gl (the default), cv or robotics, then
    ``optical_frame_rotation``, as Choreonoid's VisionSensor composes them."""
    kind = file.string(node, "opticalFrame", what, "gl")
    if kind not in _OPTICAL_FRAMES:
        file.add(node, what, f"optical_frame {kind!r} is not one of {', '.join(_OPTICAL_FRAMES)}")
        kind = "gl"
    extra = file.rotation(node, what, "opticalFrameRotation")
    frame = np.array(_OPTICAL_FRAMES[kind], dtype=np.float64)
    return frame if extra is None else frame @ extra


def _params(file: BodyFile, node: YMap, sensor_type: str, what: str) -> dict[str, Any] | None:
    def num(keys: str | tuple[str, ...], default: float) -> float:
        return float(file.number(node, keys, what, default))

    def angle(keys: str | tuple[str, ...], default: float) -> float:
        value = file.number(node, keys, what)
        return default if value is None else file.radians(value)

    if sensor_type not in ("range", "vision"):  # the type's own parameters, by OpenHRP's names
        return {p.name: _param(file, node, p, what) for p in SENSOR_TYPES[sensor_type].params}
    if sensor_type == "range":
        return {
            "scanAngle": angle(("yawRange", "scanAngle"), 3.14159),
            "scanStep": angle(("yawStep", "scanStep"), 0.1),
            "scanRate": num("scanRate", 10.0),
            "maxDistance": num("maxDistance", 10.0),
            "minDistance": num("minDistance", 0.0),
            "pitchRange": angle("pitchRange", 0.0),
        }
    image = file.string(node, "format", what)
    if not image:
        return None
    if image not in _IMAGE_TYPES:
        file.add(node, what, f"format {image!r} is not one of {', '.join(_IMAGE_TYPES)}", "format")
    params: dict[str, Any] = {
        "width": file.integer(node, "width", what, 640, 1, 1 << 16),
        "height": file.integer(node, "height", what, 480, 1, 1 << 16),
        "fieldOfView": angle("fieldOfView", 0.785398),
        "frontClipDistance": num("nearClipDistance", 0.04),
        "backClipDistance": num("farClipDistance", 200.0),
        "frameRate": num("frameRate", 30.0),
        "imageType": _IMAGE_TYPES.get(image, "COLOR"),
    }
    lens = file.string(node, "lensType", what)
    if lens:
        params["lensType"] = lens
    return params


def _param(file: BodyFile, node: YMap, param: Param, what: str) -> Any:
    if param.kind == "vec3":
        return [float(v) for v in file.vector(node, param.name, what, 3, param.default)]
    if param.kind == "string":
        return file.string(node, param.name, what, param.default)
    value = file.number(node, param.name, what, param.default)
    return int(value) if param.kind == "int" else float(value)


def _rigid(linear: np.ndarray) -> np.ndarray:
    scales = np.linalg.norm(linear, axis=0)
    return linear / np.where(scales > 0, scales, 1.0)
