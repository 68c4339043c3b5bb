"""Range scans and camera images in a recording: foxglove.LaserScan and foxglove.RawImage messages,
read back with the mcap library alone, whose geometry is the scene's."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import numpy as np
from mcap.reader import make_reader
from sensor_helpers import FORWARD, FRONT, WALL_X, ball, camera, ground, range_sensor, wall
from sim_helpers import model, project

from hrpsim.bodyinfo import Body, Link
from hrpsim.recording.writer import Recorder
from hrpsim.simulation import Simulation
from hrpsim.transforms import quaternion_matrix

TICKS = 250
SCAN_RATE = 10.0  # Hz: scans at ticks 0, 100 and 200 of a 1 ms step


def _record(tmp_path: Path) -> Path:
    """The known scene, its sensors on a robot (a stand floating without gravity), recorded."""
    sensors = [range_sensor("front", FRONT, scanRate=SCAN_RATE), camera("eye", FORWARD)]
    stand = Body("stand", links=[Link("BASE")], sensors=sensors)
    parts = [(model(b.name, static=True), b) for b in (ground(), wall(), ball())] + [(model("stand"), stand)]
    proj, bodies = project(tmp_path, parts, gravity=[0.0, 0.0, 0.0], cameras="inline")
    path = tmp_path / "sensors.mcap"
    with Simulation(proj, bodies=bodies, observers=[Recorder(path)]) as sim:
        sim.step(TICKS)
    return path


def _messages(path: Path) -> dict[str, list[tuple[str, int, dict]]]:
    by_topic: dict[str, list[tuple[str, int, dict]]] = {}
    with open(path, "rb") as f:
        for schema, channel, message in make_reader(f).iter_messages():
            by_topic.setdefault(channel.topic, []).append((schema.name, message.log_time, json.loads(message.data)))
    return by_topic


def _matrix(pose: dict) -> np.ndarray:
    """4x4 from a Foxglove translation/position and rotation/orientation."""
    t = pose.get("translation") or pose["position"]
    q = pose.get("rotation") or pose["orientation"]
    out = np.eye(4)
    out[:3, :3] = quaternion_matrix(np.array([q["w"], q["x"], q["y"], q["z"]]))
    out[:3, 3] = [t["x"], t["y"], t["z"]]
    return out


def test_scans_are_laser_scans_whose_points_lie_on_the_wall_and_the_ground(tmp_path: Path) -> None:
    messages = _messages(_record(tmp_path))
    scans = messages["/robots/stand/sensors/front"]
    assert {name for name, _, _ in scans} == {"foxglove.LaserScan"}
    assert len(scans) == len(range(0, TICKS, round(1.0 / SCAN_RATE / 0.001)))
    links = {t: m for _, t, m in messages["/tf"]}
    on_wall = on_ground = 0
    for _, log_time, scan in scans:
        frame = next(f for f in links[log_time]["transforms"] if f["child_frame_id"] == scan["frame_id"])
        to_world = _matrix(frame) @ _matrix(scan["pose"])
        ranges = np.array(scan["ranges"])
        angles = np.linspace(scan["start_angle"], scan["end_angle"], len(ranges))
        beams = np.stack(
            [ranges * np.cos(angles), ranges * np.sin(angles), np.zeros_like(ranges), np.ones_like(ranges)]
        )
        points = (to_world @ beams)[:3, ranges < 5.0].T
        wall_hits = np.abs(points[:, 0] - WALL_X) < 1e-6
        ground_hits = np.abs(points[:, 2]) < 1e-6
        assert np.all(wall_hits | ground_hits), points[~(wall_hits | ground_hits)]
        on_wall, on_ground = on_wall + wall_hits.sum(), on_ground + ground_hits.sum()
    assert on_wall > 10 and on_ground > 10  # both surfaces seen: the directions were checked, not guessed


def test_camera_images_are_raw_images_that_show_the_wall_ahead(tmp_path: Path) -> None:
    messages = _messages(_record(tmp_path))
    color = messages["/robots/stand/sensors/eye/color"]
    depth = messages["/robots/stand/sensors/eye/depth"]
    assert color and len(color) == len(depth)
    _, _, image = color[-1]
    assert (image["encoding"], image["step"]) == ("rgb8", 3 * image["width"])
    pixels = np.frombuffer(base64.b64decode(image["data"]), np.uint8).reshape(image["height"], image["width"], 3)
    middle = pixels[image["height"] // 2, image["width"] // 2]
    assert middle[0] > 200 and middle[1] < 50 and middle[2] < 50  # the red wall straight ahead
    _, _, image = depth[-1]
    assert image["encoding"] == "32FC1"
    metres = np.frombuffer(base64.b64decode(image["data"]), "<f4").reshape(image["height"], image["width"])
    assert abs(metres[image["height"] // 2, image["width"] // 2] - WALL_X) < 1e-3
