"""Range scans and camera images in a ROS 2 bag (the ros2 record profile through the Python
API): sensor_msgs/LaserScan whose beams, placed by the bag's own /tf and /tf_static, land on the
known scene's wall and ground; sensor_msgs/Image with the recorded pixels."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import numpy as np
from mcap.reader import make_reader
from rosbags.rosbag2 import Reader
from rosbags.typesys import Stores, get_typestore
from sensor_helpers import FORWARD, FRONT, WALL_X, ball, camera, ground, range_sensor, wall
from sim_helpers import model, project

from hrpsim.bodyinfo import Body, Link
from hrpsim.recording.writer import Recorder, ros2_bag_folder
from hrpsim.simulation import Simulation
from hrpsim.transforms import quaternion_matrix

TICKS = 250
STORE = get_typestore(Stores.ROS2_JAZZY)


def _record(tmp_path: Path) -> Path:
    sensors = [range_sensor("front", FRONT, scanRate=10.0), camera("eye", FORWARD)]
    stand = Body("stand", links=[Link("BASE")], sensors=sensors)
    parts = [(model(b.name, static=True), b) for b in (ground(), wall(), ball())] + [(model("stand"), stand)]
    proj, bodies = project(tmp_path, parts, gravity=[0.0, 0.0, 0.0], cameras="inline")
    path = tmp_path / "sensors.mcap"
    with Simulation(proj, bodies=bodies, observers=[Recorder(path, profile="ros2")]) as sim:
        sim.step(TICKS)
    return path


def _recorded(path: Path, topic: str) -> list[dict]:
    with open(path, "rb") as f:
        return [json.loads(m.data) for _, _, m in make_reader(f).iter_messages(topics=[topic])]


def _bag(folder: Path) -> dict[str, list]:
    out: dict[str, list] = {}
    with Reader(folder) as reader:
        for connection, _, raw in reader.messages():
            out.setdefault(connection.topic, []).append(STORE.deserialize_cdr(raw, connection.msgtype))
    return out


def _matrix(transform: object) -> np.ndarray:
    t, q = transform.translation, transform.rotation
    out = np.eye(4)
    out[:3, :3], out[:3, 3] = quaternion_matrix([q.w, q.x, q.y, q.z]), [t.x, t.y, t.z]
    return out


def test_scans_and_images_in_the_bag_are_the_recorded_ones_in_the_bags_frames(tmp_path: Path) -> None:
    path = _record(tmp_path)
    bag = _bag(ros2_bag_folder(path))
    scans, recorded_scans = bag["/stand/front"], _recorded(path, "/robots/stand/sensors/front")
    assert len(scans) == len(recorded_scans) == 3
    (root,) = [t for t in bag["/tf"][-1].transforms if t.child_frame_id == "stand/BASE"]
    statics = {t.child_frame_id: t for t in bag["/tf_static"][0].transforms}
    on_wall = on_ground = 0
    for scan, recorded in zip(scans, recorded_scans, strict=True):
        np.testing.assert_array_equal(scan.ranges, np.float32(recorded["ranges"]))
        mount = statics[scan.header.frame_id]
        assert mount.header.frame_id == "stand/BASE"
        to_world = _matrix(root.transform) @ _matrix(mount.transform)
        angles = scan.angle_min + scan.angle_increment * np.arange(len(scan.ranges))
        r = scan.ranges.astype(float)
        beams = np.stack([r * np.cos(angles), r * np.sin(angles), np.zeros_like(r), np.ones_like(r)])
        points = (to_world @ beams)[:3, r < 5.0].T
        wall_hits, ground_hits = np.abs(points[:, 0] - WALL_X) < 1e-5, np.abs(points[:, 2]) < 1e-5
        assert np.all(wall_hits | ground_hits), points[~(wall_hits | ground_hits)]
        on_wall, on_ground = on_wall + wall_hits.sum(), on_ground + ground_hits.sum()
    assert on_wall > 10 and on_ground > 10
    for kind, encoding in (("color", "rgb8"), ("depth", "32FC1")):
        images, recorded = bag[f"/stand/eye/{kind}"], _recorded(path, f"/robots/stand/sensors/eye/{kind}")
        assert len(images) == len(recorded) > 0
        for image, raw in zip(images, recorded, strict=True):
            assert (image.encoding, image.width, image.height, image.step) == (
                encoding,
                raw["width"],
                raw["height"],
                raw["step"],
            )
            assert image.data.tobytes() == base64.b64decode(raw["data"])
            assert image.header.frame_id == "stand/eye"
