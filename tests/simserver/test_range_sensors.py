"""Range sensors against a scene of known geometry: readings within 1 mm of the analytic distances
to a plane, a box face and a sphere, in the format's scan order, maxDistance where nothing is hit."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from sensor_helpers import (
    BACK,
    BALL_CENTRE,
    BALL_RADIUS,
    FRONT,
    SENSOR_HEIGHT,
    WALL_X,
    known_scene,
    range_sensor,
)

from hrpsim.bodyinfo import Shape
from hrpsim.engines.base import make_engine
from hrpsim.engines.ode.engine import OdeEngine
from hrpsim.errors import ConfigError
from hrpsim.simserver.range_sensors import RangeScanner

MAX_DISTANCE = 5.0


def _expected_front(angle: float) -> float:
    """Beam (cos a, 0, -sin a) from (0, 0, h): the wall's face x = WALL_X (z within 0.2 of h), or the ground."""
    candidates = [MAX_DISTANCE]
    if abs(WALL_X * math.tan(angle)) <= 0.2:
        candidates.append(WALL_X / math.cos(angle))
    if angle > 0:
        candidates.append(SENSOR_HEIGHT / math.sin(angle))
    return min(d for d in candidates if d <= MAX_DISTANCE)


def _expected_back(angle: float) -> float:
    """Beam (-cos a, 0, -sin a) from (0, 0, h): the ball, or the ground."""
    candidates = [MAX_DISTANCE]
    along = -BALL_CENTRE[0] * math.cos(angle)
    off_axis_sq = BALL_CENTRE[0] ** 2 - along**2
    if off_axis_sq <= BALL_RADIUS**2:
        candidates.append(along - math.sqrt(BALL_RADIUS**2 - off_axis_sq))
    if angle > 0:
        candidates.append(SENSOR_HEIGHT / math.sin(angle))
    return min(d for d in candidates if d <= MAX_DISTANCE)


# ODE's engine casts no rays: its scans are cast on the collision shapes; MuJoCo's go through mj_multiRay.
ENGINES = ["ode", "mujoco"]


def _scan(
    tmp_path: Path, stand_shapes: list[Shape] | None = None, engine: str = "ode"
) -> tuple[RangeScanner, dict[str, np.ndarray]]:
    proj, bodies = known_scene(tmp_path, [range_sensor("front", FRONT), range_sensor("back", BACK)])
    if stand_shapes:
        bodies["stand"].links[0].shapes = stand_shapes
    proj.world.engine = engine
    world = make_engine(proj, bodies)
    scanner = RangeScanner(bodies, engine=world)
    assert (scanner.engine is not None) == (engine == "mujoco")
    return scanner, scanner.scan(["front", "back"], world.link_states)


@pytest.mark.parametrize("engine", ENGINES)
def test_readings_match_the_analytic_distances_to_a_plane_a_box_face_and_a_sphere(tmp_path: Path, engine: str) -> None:
    scanner, readings = _scan(tmp_path, engine=engine)
    angles = scanner.sensors["front"].angles
    assert angles[0] == pytest.approx(-1.0) and angles[-1] == pytest.approx(1.0) and len(angles) == 201
    front = np.array([_expected_front(a) for a in angles])
    back = np.array([_expected_back(a) for a in angles])
    # every kind of target is in the scans: the wall, the ball, the ground and open space
    assert np.sum(np.abs(front - WALL_X / np.cos(angles)) < 1e-9) > 5
    assert np.sum(back < 2.6) > 5
    assert np.sum(np.isclose(front, SENSOR_HEIGHT / np.sin(np.clip(angles, 1e-9, None)))) > 5
    assert np.sum(front == MAX_DISTANCE) > 5
    assert np.max(np.abs(readings["front"] - front)) < 1e-3
    assert np.max(np.abs(readings["back"] - back)) < 1e-3


@pytest.mark.parametrize("engine", ENGINES)
def test_the_sensor_does_not_see_the_link_it_is_mounted_in(tmp_path: Path, engine: str) -> None:
    housing = Shape("box", translation=np.array([0.0, 0.0, SENSOR_HEIGHT]), size=np.array([0.2, 0.2, 0.2]))
    scanner, readings = _scan(tmp_path, [housing], engine)
    angles = scanner.sensors["front"].angles
    assert np.max(np.abs(readings["front"] - [_expected_front(a) for a in angles])) < 1e-3


def test_a_sensor_without_a_scan_has_one_beam_straight_ahead(tmp_path: Path) -> None:
    proj, bodies = known_scene(tmp_path, [range_sensor("front", FRONT, scanAngle=0.0)])
    world = OdeEngine(proj, bodies)
    scanner = RangeScanner(bodies)
    reading = scanner.scan(["front"], world.link_states)["front"]
    assert reading.shape == (1,) and reading[0] == pytest.approx(WALL_X, abs=1e-6)


def test_a_bad_range_parameter_names_the_model_the_sensor_and_the_field(tmp_path: Path) -> None:
    _, bodies = known_scene(tmp_path, [range_sensor("front", FRONT, maxDistance=-1.0)])
    with pytest.raises(ConfigError, match=r"model 'stand' range sensor 'front': maxDistance"):
        RangeScanner(bodies)


def test_mujocos_own_rays_scan_as_the_collision_shapes_do(tmp_path: Path) -> None:
    """MuJoCo's mj_multiRay on the running model, and rays cast on the collision shapes posed from the
    same engine's link states, read the same world."""
    proj, bodies = known_scene(tmp_path, [range_sensor("front", FRONT), range_sensor("back", BACK)])
    proj.world.engine = "mujoco"
    world = make_engine(proj, bodies)
    through_engine = RangeScanner(bodies, engine=world).scan(["front", "back"], world.link_states)
    on_shapes = RangeScanner(bodies).scan(["front", "back"], world.link_states)
    for label in ("front", "back"):
        assert np.max(np.abs(through_engine[label] - on_shapes[label])) < 1e-9
    assert np.sum(through_engine["front"] < MAX_DISTANCE) > 50  # the scan hits things: the comparison means something


def test_mujocos_rays_see_a_fully_transparent_shape(tmp_path: Path) -> None:
    """MuJoCo's ray casts skip geoms of alpha 0; a range sensor sees every collision shape."""
    proj, bodies = known_scene(tmp_path, [range_sensor("front", FRONT)])
    for link in bodies["wall"].links:
        for shape in link.shapes:
            shape.appearance.transparency = 1.0
    proj.world.engine = "mujoco"
    world = make_engine(proj, bodies)
    scanner = RangeScanner(bodies, engine=world)
    reading = scanner.scan(["front"], world.link_states)["front"]
    ahead = int(np.argmin(np.abs(scanner.sensors["front"].angles)))
    assert reading[ahead] == pytest.approx(WALL_X, abs=1e-6)
