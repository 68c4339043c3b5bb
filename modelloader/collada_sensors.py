"""OpenRAVE sensor definitions (library_sensors) as BodyInfo sensor types and parameters, with
OpenHRP's parameter names. Angles in the file are degrees; BodyInfo's are radians."""

from __future__ import annotations

import math
from typing import Any

from lxml import etree

# OpenRAVE writes both the spec's names (base_laser2d) and interface names (BaseLaser2D).
_KINDS = {
    "baselaser2d": ("range",),
    "baselaser3d": ("range",),
    "baseflashlaser": ("range",),
    "basepinholecamera": ("vision",),
    "basecamera": ("vision",),
    "basestereocamera": ("vision",),
    "baseforce6d": ("force",),
    "baseimu": ("gyro", "accel"),
}


def sensor_types(definition: etree._Element) -> tuple[str, ...]:
    """BodyInfo types for a <sensor> (an IMU is both a gyro and an accelerometer); () if unknown."""
    key = (definition.get("type") or "").replace("_", "").lower()
    return _KINDS.get(key, ())


def sensor_params(definition: etree._Element, kind: str) -> dict[str, Any]:
    values = {child.tag: (child.text or "").split() for child in definition if isinstance(child.tag, str)}
    params: dict[str, Any] = {"colladaType": definition.get("type", "")}
    if kind == "range":
        params.update(_range(values))
    elif kind == "vision":
        params.update(_vision(values))
    elif kind == "force":
        params.update(_numbers(values, {"load_range_force": "maxForce", "load_range_torque": "maxTorque"}))
    period = _first(values, "measurement_time", "scantime")
    if period and kind in ("gyro", "accel"):
        params["period"] = period
    return params


def _first(values: dict[str, list[str]], *names: str) -> float | None:
    for name in names:
        if values.get(name):
            try:
                return float(values[name][0])
            except ValueError:
                return None
    return None


def _numbers(values: dict[str, list[str]], mapping: dict[str, str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for source, target in mapping.items():
        try:
            out[target] = [float(v) for v in values.get(source, [])] or None
        except ValueError:
            continue
        if out[target] is None:
            del out[target]
    return out


def _range(values: dict[str, list[str]]) -> dict[str, Any]:
    params: dict[str, Any] = {}
    low = _first(values, "angle_min", "minangle")
    high = _first(values, "angle_max", "maxangle")
    if values.get("angle_range"):
        low, high = (float(v) for v in values["angle_range"][:2])
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


def _vision(values: dict[str, list[str]]) -> dict[str, Any]:
    params: dict[str, Any] = {}
    dims = values.get("image_dimensions", [])
    if len(dims) >= 2:
        params["width"], params["height"] = int(float(dims[0])), int(float(dims[1]))
        channels = int(float(dims[2])) if len(dims) > 2 else 3
        params["imageType"] = "COLOR" if channels >= 3 else "GRAY"
    intrinsic = [float(v) for v in values.get("intrinsic", [])]
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
