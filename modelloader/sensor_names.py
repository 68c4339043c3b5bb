"""Every sensor of a loaded body has a name of its own.

A sensor's name is how everything after the loader finds it: the engines' sites, the readings a
controller gets (``state.sensor(NAME)``), the URDF and MJCF exports, ROS 2 frame ids and recordings.
Choreonoid lets a device go without ``name:`` (its humanoids' accelerometers and gyros often do);
such a sensor is named after its link and type, ``LINK/TYPEk`` (``WAIST/accel0``, ``WAIST/gyro0``),
``k`` counting that link's unnamed sensors of that type in file order, skipping a name the file
already uses. A name the file gives twice is an error: which sensor a reading belongs to would
depend on the reader.
"""

from __future__ import annotations

from collections.abc import Iterable

from hrpsim.bodyinfo import Body, Sensor
from hrpsim.errors import ModelError


def generated_name(link: str, sensor_type: str, index: int) -> str:
    return f"{link}/{sensor_type}{index}"


def name_unnamed_sensors(body: Body) -> None:
    """Give each sensor without a name its ``LINK/TYPEk`` name (in place)."""
    taken = {s.name for s in body.sensors if s.name}
    counts: dict[tuple[int, str], int] = {}
    for sensor in body.sensors:
        if sensor.name:
            continue
        key = (sensor.link, sensor.type)
        index = counts.get(key, 0)
        link = body.links[sensor.link].name
        while generated_name(link, sensor.type, index) in taken:
            index += 1
        sensor.name = generated_name(link, sensor.type, index)
        counts[key] = index + 1
        taken.add(sensor.name)


def repeated_names(sensors: Iterable[Sensor]) -> list[tuple[Sensor, Sensor]]:
    """(sensor, the earlier sensor with its name) for every named sensor whose name was taken."""
    first: dict[str, Sensor] = {}
    repeats = []
    for sensor in sensors:
        if not sensor.name:
            continue
        if sensor.name in first:
            repeats.append((sensor, first[sensor.name]))
        else:
            first[sensor.name] = sensor
    return repeats


def repeat_message(sensor: Sensor, earlier: Sensor, links: list[str]) -> str:
    return (
        f"{sensor.type} sensor {sensor.name!r} on link {links[sensor.link]!r}: the name is already the "
        f"{earlier.type} sensor's on link {links[earlier.link]!r}; sensor names must be unique in a "
        "body: rename one (or leave its name out to have it named after its link and type)"
    )


def check_and_name_sensors(body: Body, path: str) -> None:
    """ModelError naming the file for a sensor name given twice; then name the unnamed sensors."""
    links = [link.name for link in body.links]
    problems = [f"{path}: {repeat_message(s, earlier, links)}" for s, earlier in repeated_names(body.sensors)]
    if problems:
        raise ModelError(problems[0] if len(problems) == 1 else f"{path}: {len(problems)} problems", problems)
    name_unnamed_sensors(body)
