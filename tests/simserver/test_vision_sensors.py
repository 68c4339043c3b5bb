"""Vision sensors rendered headless against a scene of known geometry: depth of a plane within 1 mm
across a known field of view, and the red box where the pinhole camera puts it."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from sensor_helpers import DOWN, FORWARD, SENSOR_HEIGHT, WALL_X, camera, known_scene

from hrpsim.engines.ode.engine import OdeEngine
from hrpsim.errors import ConfigError
from hrpsim.simserver.vision_sensors import SceneRenderer

WIDTH, HEIGHT, FOV = 320, 240, 0.785398


def _render(tmp_path: Path, rotation: np.ndarray, *, wall_and_ball: bool = True, **params: object) -> tuple:
    proj, bodies = known_scene(tmp_path, [camera("eye", rotation, **params)], wall_and_ball=wall_and_ball)
    world = OdeEngine(proj, bodies)
    renderer = SceneRenderer(bodies)
    try:
        return renderer.cameras["eye"], renderer.render(["eye"], world.link_states)["eye"]
    finally:
        renderer.close()


def _pixel_rays(cam, rotation: np.ndarray) -> np.ndarray:
    """(H, W, 3) world directions through the pixel centres, scaled to unit depth along the line of sight."""
    f = cam.focal_length
    u = (np.arange(cam.width) + 0.5 - cam.width / 2) / f
    v = -(np.arange(cam.height) + 0.5 - cam.height / 2) / f
    x, y = np.meshgrid(u, v)
    local = np.stack([x, y, -np.ones_like(x)], axis=-1)
    return local @ rotation.T


def test_depth_of_a_plane_straight_ahead_is_its_distance_in_every_pixel(tmp_path: Path) -> None:
    _, frame = _render(tmp_path, DOWN, wall_and_ball=False)
    depth = frame["depth"]
    assert depth.dtype == np.float32 and depth.shape == (HEIGHT, WIDTH)
    assert abs(depth[HEIGHT // 2, WIDTH // 2] - SENSOR_HEIGHT) < 1e-3
    assert np.max(np.abs(depth - SENSOR_HEIGHT)) < 1e-3


def test_depth_of_a_tilted_plane_follows_the_field_of_view(tmp_path: Path) -> None:
    pitch = 0.2  # rad below the horizon: the ground fills the lower part of the image, the sky the upper
    c, s = math.cos(pitch), math.sin(pitch)
    tilt = np.array([[1.0, 0.0, 0.0], [0.0, c, s], [0.0, -s, c]])  # about the camera's X: line of sight down
    rotation = FORWARD @ tilt
    cam, frame = _render(tmp_path, rotation, wall_and_ball=False)
    assert cam.yfov == pytest.approx(FOV)
    rays = _pixel_rays(cam, rotation)
    falling = rays[..., 2] < -1e-6
    analytic = np.where(falling, SENSOR_HEIGHT / -np.where(falling, rays[..., 2], -1.0), np.inf)
    ground = analytic < cam.far * 0.95
    sky = ~falling
    assert ground.sum() > 1000 and sky.sum() > 1000
    # the centre pixel sits half a pixel below the line of sight, which meets the ground at h / sin(pitch)
    assert analytic[HEIGHT // 2, WIDTH // 2] == pytest.approx(SENSOR_HEIGHT / s, rel=0.02)
    assert abs(frame["depth"][HEIGHT // 2, WIDTH // 2] - analytic[HEIGHT // 2, WIDTH // 2]) < 1e-3
    inner = ground & (analytic < 5.0)  # where the depth buffer resolves a millimetre
    assert np.max(np.abs(frame["depth"][inner] - analytic[inner])) < 1e-3
    assert np.all(frame["depth"][sky] == cam.far)


def test_the_red_box_appears_where_the_camera_geometry_puts_it(tmp_path: Path) -> None:
    cam, frame = _render(tmp_path, FORWARD)
    color, depth = frame["color"], frame["depth"]
    assert color.dtype == np.uint8 and color.shape == (HEIGHT, WIDTH, 3)
    f = cam.focal_length
    # the wall's face x = WALL_X spans world y in [-0.5, 0.5] (image right is world -y) and z in h +- 0.2
    left, right = WIDTH / 2 - f * 0.5 / WALL_X, WIDTH / 2 + f * 0.5 / WALL_X
    top, bottom = HEIGHT / 2 - f * 0.2 / WALL_X, HEIGHT / 2 + f * 0.2 / WALL_X
    red = (color[..., 0] > 150) & (color[..., 1] < 60) & (color[..., 2] < 60)
    rows, cols = np.nonzero(red)
    assert abs(cols.min() - left) <= 1.0 and abs(cols.max() + 1 - right) <= 1.0
    assert abs(rows.min() - top) <= 1.0 and abs(rows.max() + 1 - bottom) <= 1.0
    assert red[int(top) + 2 : int(bottom) - 2, int(left) + 2 : int(right) - 2].all()
    assert np.max(np.abs(depth[red] - WALL_X)) < 1e-3
    # the ground below the box is grey, not red
    assert not red[int(bottom) + 5 :, :].any() and color[HEIGHT - 1, WIDTH // 2, 0] > 20


def test_mono_and_depth_only_cameras_give_what_their_type_names(tmp_path: Path) -> None:
    _, mono = _render(tmp_path, FORWARD, type="MONO")
    assert set(mono) == {"mono"} and mono["mono"].shape == (HEIGHT, WIDTH) and mono["mono"].dtype == np.uint8
    _, depth = _render(tmp_path, FORWARD, type="DEPTH")
    assert set(depth) == {"depth"} and abs(depth["depth"][HEIGHT // 2, WIDTH // 2] - WALL_X) < 1e-3


def test_a_bad_camera_parameter_names_the_model_the_sensor_and_the_field(tmp_path: Path) -> None:
    _, bodies = known_scene(tmp_path, [camera("eye", FORWARD, fieldOfView=4.0)])
    with pytest.raises(ConfigError, match=r"model 'stand' vision sensor 'eye': fieldOfView"):
        SceneRenderer(bodies)
