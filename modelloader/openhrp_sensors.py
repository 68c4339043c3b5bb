"""OpenHRP sensor PROTOs -> BodyInfo sensor types and parameters, as each type's descriptor
(hrpsim/sensor_types.py) names them.

Parameters keep OpenHRP's field names. A file's own PROTO may lack a field (floor.wrl's
VisionSensor has no frameRate); the value then comes from OpenHRP's declaration of the PROTO,
the type's ``params``.
"""

from __future__ import annotations

from typing import Any

from hrpsim.modelloader.vrml.fields import FieldReader
from hrpsim.modelloader.vrml.nodes import Node
from hrpsim.sensor_types import SENSOR_TYPES, called


def sensor_protos() -> dict[str, str]:
    """PROTO name -> BodyInfo sensor type (each type's ``aliases.vrml``, hrpsim/sensor_types.py)."""
    return {name: kinds[0] for name, kinds in called("vrml").items()}


def sensor_params(sensor_type: str, node: Node, fields: FieldReader) -> dict[str, Any]:
    """The type's parameters as plain values (floats, ints, strings, lists of floats)."""
    params: dict[str, Any] = {}
    for param in SENSOR_TYPES[sensor_type].params:
        name, default = param.name, param.default
        if param.kind == "vec3":
            params[name] = [float(v) for v in fields.vector(node, name, default)]
        elif param.kind == "float":
            params[name] = fields.float(node, name, default)
        elif param.kind == "int":
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
