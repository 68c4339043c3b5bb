"""Scenes of known geometry for range and vision sensor tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from sim_helpers import model, project

from hrpsim.bodyinfo import Appearance, Body, Link, Sensor, Shape

SENSOR_HEIGHT = 1.0
WALL_X = 2.0  # the box's face towards the sensors
BALL_CENTRE = np.array([-3.0, 0.0, SENSOR_HEIGHT])
BALL_RADIUS = 0.5

# Sensor axes as columns in the world: "front" looks along world +X, its scan sweeping the X-Z
# plane with positive beam angles pointing down; "back" looks along world -X the same way.
FRONT = np.array([[0.0, 0.0, -1.0], [0.0, 1.0, 0.0], [1.0, 0.0, 0.0]])
BACK = np.array([[0.0, 0.0, 1.0], [0.0, -1.0, 0.0], [1.0, 0.0, 0.0]])
# Camera axes as columns: looking along world +X with +Y (image up) along world +Z; looking down.
FORWARD = np.array([[0.0, 0.0, -1.0], [-1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
DOWN = np.eye(3)


def ground() -> Body:
    plane = Shape("plane", appearance=Appearance(np.array([0.6, 0.6, 0.6])))
    return Body("ground", links=[Link("BASE", shapes=[plane])], static=True)


def wall() -> Body:
    """A red box whose -X face is the plane x = WALL_X, 0.4 m tall around the sensor height."""
    box = Shape(
        "box",
        translation=np.array([WALL_X + 0.25, 0.0, SENSOR_HEIGHT]),
        size=np.array([0.5, 1.0, 0.4]),
        appearance=Appearance(np.array([1.0, 0.0, 0.0])),
    )
    return Body("wall", links=[Link("BASE", shapes=[box])], static=True)


def ball() -> Body:
    sphere = Shape(
        "sphere", translation=BALL_CENTRE.copy(), radius=BALL_RADIUS, appearance=Appearance(np.array([0.0, 0.0, 1.0]))
    )
    return Body("ball", links=[Link("BASE", shapes=[sphere])], static=True)


def stand(sensors: list[Sensor]) -> Body:
    """A pole with no collision shape of its own carrying the given sensors on its one link."""
    return Body("stand", links=[Link("BASE")], sensors=sensors, static=True)


def range_sensor(name: str, rotation: np.ndarray, **params: Any) -> Sensor:
    values = {"scanAngle": 2.0, "scanStep": 0.01, "scanRate": 10.0, "maxDistance": 5.0, **params}
    return Sensor(
        name, "range", 0, 0, translation=np.array([0.0, 0.0, SENSOR_HEIGHT]), rotation=rotation, params=values
    )


def camera(name: str, rotation: np.ndarray, **params: Any) -> Sensor:
    """A 320x240 COLOR_DEPTH camera with the format's other defaults (45 degrees, clips 0.01-10 m, 30 fps)."""
    values = {"name": name, "type": "COLOR_DEPTH", **params}
    return Sensor(
        f"{name}_NODE",
        "vision",
        0,
        0,
        translation=np.array([0.0, 0.0, SENSOR_HEIGHT]),
        rotation=rotation,
        params=values,
    )


def known_scene(tmp: Path, sensors: list[Sensor], *, wall_and_ball: bool = True) -> tuple[Any, dict[str, Body]]:
    """A Project and its bodies: a ground plane, the red wall, the blue ball and the sensor stand."""
    parts = [ground(), wall(), ball(), stand(sensors)] if wall_and_ball else [ground(), stand(sensors)]
    return project(tmp, [(model(b.name, static=True), b) for b in parts])
