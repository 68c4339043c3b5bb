"""OpenHRP sensor PROTOs -> BodyInfo sensor types and parameters.

Parameters keep OpenHRP's field names. A file's own PROTO may lack a field (floor.wrl's
VisionSensor has no frameRate); the value then comes from OpenHRP's declaration of the PROTO.
"""

from __future__ import annotations

from typing import Any

from hrpsim.modelloader.vrml.fields import FieldReader
from hrpsim.modelloader.vrml.nodes import Node

# PROTO name -> BodyInfo sensor type.
SENSOR_PROTOS: dict[str, str] = {
    "ForceSensor": "force",
    "Gyro": "gyro",
    "GyroSensor": "gyro",
    "RateGyroSensor": "gyro",
    "AccelerationSensor": "accel",
    "VisionSensor": "vision",
    "RangeSensor": "range",
}

# Per sensor type: parameter -> (kind, OpenHRP's default).
_PARAMETERS: dict[str, dict[str, tuple[str, Any]]] = {
    "force": {"maxForce": ("vec3", (-1.0, -1.0, -1.0)), "maxTorque": ("vec3", (-1.0, -1.0, -1.0))},
    "gyro": {"maxAngularVelocity": ("vec3", (-1.0, -1.0, -1.0))},
    "accel": {"maxAcceleration": ("vec3", (-1.0, -1.0, -1.0))},
    "vision": {
        "name": ("string", ""),
        "type": ("string", "NONE"),
        "width": ("int", 320),
        "height": ("int", 240),
        "fieldOfView": ("float", 0.785398),
        "frontClipDistance": ("float", 0.01),
        "backClipDistance": ("float", 10.0),
        "frameRate": ("float", 30.0),
    },
    "range": {
        "scanAngle": ("float", 3.14159),
        "scanStep": ("float", 0.1),
        "scanRate": ("float", 10.0),
        "maxDistance": ("float", 10.0),
    },
}


def sensor_params(sensor_type: str, node: Node, fields: FieldReader) -> dict[str, Any]:
    """The type's parameters as plain values (floats, ints, strings, lists of floats)."""
    params: dict[str, Any] = {}
    for name, (kind, default) in _PARAMETERS.get(sensor_type, {}).items():
        if kind == "vec3":
            params[name] = [float(v) for v in fields.vector(node, name, default)]
        elif kind == "float":
            params[name] = fields.float(node, name, default)
        elif kind == "int":
            params[name] = fields.int(node, name, default)
        else:
            params[name] = fields.string(node, name, default)
    if sensor_type == "vision":
        params["imageType"] = params["type"]
    return params


def duplicate_ids(sensors: list[tuple[str, str, int, str]]) -> list[str]:
    """Problems for sensors of one type sharing a sensorId: entries are (type, name, id, where)."""
    problems = []
    seen: dict[tuple[str, int], str] = {}
    for sensor_type, name, sensor_id, where in sensors:
        if sensor_id < 0:
            continue
        first = seen.setdefault((sensor_type, sensor_id), name)
        if first != name:
            problems.append(
                f"{where}: sensor {name!r}: {sensor_type} sensorId {sensor_id} is already used by {first!r}"
            )
    return problems
