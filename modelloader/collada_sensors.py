"""OpenRAVE sensor definitions (library_sensors) as BodyInfo sensor types and parameters, with
OpenHRP's parameter names. The types are those whose descriptor names the definition's type
(hrpsim/sensor_types.py, ``aliases.collada``). Angles in the file are degrees; BodyInfo's are
radians."""

from __future__ import annotations

import math
from typing import Any

from lxml import etree

from hrpsim.sensor_types import called


def _folded(name: str) -> str:
    """OpenRAVE writes both the spec's names (base_laser2d) and interface names (BaseLaser2D)."""
    return name.replace("_", "").lower()


def sensor_types(definition: etree._Element) -> tuple[str, ...]:
    """BodyInfo types for a <sensor> (an IMU is both a gyro and an accelerometer); () if unknown."""
    key = _folded(definition.get("type") or "")
    return next((kinds for name, kinds in called("collada").items() if _folded(name) == key), ())


def sensor_params(definition: etree._Element, kind: str) -> dict[str, Any]:
    """OpenHRP-named parameters; values that are not numbers are left out (the sensor is still
    made: its parameters are descriptive, not structural)."""
    values = {}
    for child in definition:
        if isinstance(child.tag, str):
            numbers = _numbers_in(child.text)
            if numbers is not None:
                values[child.tag] = numbers
    params: dict[str, Any] = {"colladaType": definition.get("type", "")}
    if kind == "range":
        params.update(_range(values))
    elif kind == "vision":
        params.update(_vision(values))
    elif kind == "force":
        params.update(_numbers(values, {"load_range_force": "maxForce", "load_range_torque": "maxTorque"}))
    elif period := _first(values, "measurement_time", "scantime"):  # an IMU's, and any other type's
        params["period"] = period
    return params


def _numbers_in(text: str | None) -> list[float] | None:
    try:
        numbers = [float(v) for v in (text or "").split()]
    except ValueError:
        return None
    return numbers if numbers and all(math.isfinite(v) for v in numbers) else None


def _first(values: dict[str, list[float]], *names: str) -> float | None:
    for name in names:
        if values.get(name):
            return values[name][0]
    return None


def _numbers(values: dict[str, list[float]], mapping: dict[str, str]) -> dict[str, Any]:
    return {target: values[source] for source, target in mapping.items() if source in values}


def _range(values: dict[str, list[float]]) -> dict[str, Any]:
    params: dict[str, Any] = {}
    low = _first(values, "angle_min", "minangle")
    high = _first(values, "angle_max", "maxangle")
    if len(values.get("angle_range", [])) >= 2:
        low, high = values["angle_range"][:2]
    if low is not None and high is not None:
        params["scanAngle"] = math.radians(high - low)
    step = _first(values, "angle_increment", "resolution")
    if step is not None:
        params["scanStep"] = math.radians(step)
    distance = _first(values, "range_max", "maxrange")
    if distance is not None:
        params["maxDistance"] = distance
    period = _first(values, "measurement_time", "scantime")
    if period:
        params["scanRate"] = 1.0 / period
    return params


def _vision(values: dict[str, list[float]]) -> dict[str, Any]:
    params: dict[str, Any] = {}
    dims = values.get("image_dimensions", [])
    if len(dims) >= 2:
        params["width"], params["height"] = int(dims[0]), int(dims[1])
        channels = int(dims[2]) if len(dims) > 2 else 3
        params["imageType"] = "COLOR" if channels >= 3 else "GRAY"
    intrinsic = values.get("intrinsic", [])
    if len(intrinsic) >= 5 and "height" in params and intrinsic[4] > 0:
        # OpenHRP's fieldOfView is the vertical angle of view: 2 atan((height / 2) / fy)
        params["fieldOfView"] = 2.0 * math.atan(params["height"] / 2.0 / intrinsic[4])
        params["intrinsic"] = intrinsic
    period = _first(values, "measurement_time")
    if period:
        params["frameRate"] = 1.0 / period
    focal = _first(values, "focal_length")
    if focal is not None:
        params["focalLength"] = focal
    return params
