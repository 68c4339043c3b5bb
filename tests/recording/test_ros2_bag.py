"""ROS 2 bags of a recorded run, read back with the rosbags library: every message deserializes,
joint states and frames match the exported URDF, values equal the recording's. Both ways of
making one: ``hrpsim export ros2`` from a file, and ``--record-profile ros2`` during the run."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml
from foxglove_helpers import hrpsim, launch, stand_project
from lxml import etree
from mcap.reader import make_reader
from rosbags.rosbag2 import Reader
from rosbags.typesys import Stores, get_typestore

from hrpsim.recording.reader import open_recording
from hrpsim.recording.writer import ros2_bag_folder
from hrpsim.transforms import quaternion_matrix

STORE = get_typestore(Stores.ROS2_JAZZY)


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory, models_dir: Path) -> Path:
    """A run recorded with the ros2 profile: stand.mcap and its bag stand_ros2/."""
    folder = tmp_path_factory.mktemp("ros2")
    launch(stand_project(folder, models_dir), folder, "--record-profile", "ros2")
    return folder / "stand.mcap"


def _read_bag(folder: Path) -> dict[str, list[tuple[int, object]]]:
    messages: dict[str, list[tuple[int, object]]] = {}
    info = yaml.safe_load((folder / "metadata.yaml").read_text())["rosbag2_bagfile_information"]
    assert info["storage_identifier"] == "mcap"
    (storage,) = info["relative_file_paths"]
    with open(folder / storage, "rb") as handle:  # as ros2 bag reads it: ros2msg schemas, CDR messages
        summary = make_reader(handle).get_summary()
        assert {s.encoding for s in summary.schemas.values()} == {"ros2msg"}
        assert {c.message_encoding for c in summary.channels.values()} == {"cdr"}
    with Reader(folder) as reader:
        for connection, stamp, raw in reader.messages():
            messages.setdefault(connection.topic, []).append((stamp, STORE.deserialize_cdr(raw, connection.msgtype)))
    return messages


def _urdf(path: Path) -> tuple[list[str], list[str], dict[str, str]]:
    """Links, moving joints (in file order) and each fixed link's joint type, of an exported URDF."""
    root = etree.parse(str(path)).getroot()
    links = [e.get("name") for e in root.findall("link")]
    joints = [e for e in root.findall("joint")]
    moving = [j.get("name") for j in joints if j.get("type") in ("revolute", "continuous", "prismatic")]
    kinds = {j.find("child").get("link"): j.get("type") for j in joints}
    return links, moving, kinds


def _check_bag(bag: Path, recording: Path) -> None:
    rec = open_recording(recording)
    series = rec.series("robot")
    messages = _read_bag(bag)
    links, joints, kinds = _urdf(bag / "robot.urdf")
    # one JointState per recorded state, named as the URDF's joints, the recorded values exactly
    states = messages["/joint_states"]
    assert len(states) == len(series.tick)
    for (stamp, msg), time, q, dq in zip(states, series.time, series.fields["q"], series.fields["dq"], strict=True):
        assert sorted(msg.name) == sorted(joints) and list(msg.name) == rec.joints("robot")
        assert stamp == round(time * 1e9)
        np.testing.assert_allclose(msg.position, q, rtol=0, atol=1e-12)
        np.testing.assert_allclose(msg.velocity, dq, rtol=0, atol=1e-12)
    # /tf: every moving link of the URDF and the root; /tf_static: the rest, with the sensors' frames
    tf = messages["/tf"]
    assert len(tf) == len(series.tick)
    children = {t.child_frame_id for t in tf[0][1].transforms}
    static = {t.child_frame_id for t in messages["/tf_static"][0][1].transforms}
    robot_links = {f"robot/{name}" for name in links}
    assert children <= robot_links
    assert robot_links <= children | static
    assert {f"robot/{lk}" for lk, kind in kinds.items() if kind == "fixed"} <= static
    # composing /tf from the root gives the recorded world pose of every link
    _, poses = rec.link_poses()
    _, last = tf[-1]
    world = {"world": np.eye(4)}
    pending = list(last.transforms)
    while pending:
        t = pending.pop(0)
        if t.header.frame_id not in world:
            pending.append(t)
            continue
        tr, ro = t.transform.translation, t.transform.rotation
        world[t.child_frame_id] = world[t.header.frame_id] @ _matrix(tr.x, tr.y, tr.z, ro.x, ro.y, ro.z, ro.w)
    assert set(world) == {"world"} | children
    for frame, pose in world.items():
        if frame != "world":
            x, y, z, qw, qx, qy, qz = poses["robot"][frame.split("/", 1)[1]][-1]
            np.testing.assert_allclose(pose, _matrix(x, y, z, qx, qy, qz, qw), rtol=0, atol=1e-9)
    # the sensors: a wrench per force sensor, one Imu, a clock per tick
    for sensor in ("rfsensor", "lfsensor"):
        wrenches = messages[f"/robot/{sensor}"]
        assert len(wrenches) == len(series.tick)
        np.testing.assert_array_equal(wrenches[-1][1].wrench.force.z, series.sensor_readings[sensor][-1][2])
    assert len(messages["/clock"]) == len(series.tick)
    (imu_topic,) = [t for t in messages if "/imu/" in t]
    imu = messages[imu_topic][-1][1]
    (mount,) = [t for t in messages["/tf_static"][0][1].transforms if t.child_frame_id == imu.header.frame_id]
    tr, ro = mount.transform.translation, mount.transform.rotation
    imu_in_world = (world[mount.header.frame_id] @ _matrix(tr.x, tr.y, tr.z, ro.x, ro.y, ro.z, ro.w))[:3, :3]
    a = imu.linear_acceleration
    np.testing.assert_allclose(imu_in_world @ [a.x, a.y, a.z], [0, 0, 9.8], atol=0.05)  # standing: gravity's reaction


def _matrix(x: float, y: float, z: float, qx: float, qy: float, qz: float, qw: float) -> np.ndarray:
    pose = np.eye(4)
    pose[:3, :3], pose[:3, 3] = quaternion_matrix([qw, qx, qy, qz]), [x, y, z]
    return pose


def test_export_ros2_writes_a_bag_that_matches_the_urdf_and_the_recording(recorded: Path, tmp_path: Path) -> None:
    bag = tmp_path / "bag"
    run = hrpsim("export", "ros2", str(recorded), str(bag))
    assert run.returncode == 0, run.stderr
    assert (bag / "metadata.yaml").is_file() and (bag / "robot.urdf").is_file()
    _check_bag(bag, recorded)


def test_the_ros2_profile_writes_the_same_bag_during_the_run(recorded: Path) -> None:
    _check_bag(ros2_bag_folder(recorded), recorded)


def test_export_into_an_existing_folder_is_a_one_line_error(recorded: Path, tmp_path: Path) -> None:
    (tmp_path / "bag").mkdir()
    run = hrpsim("export", "ros2", str(recorded), str(tmp_path / "bag"))
    assert run.returncode == 2
    assert "exists already" in run.stderr and "Traceback" not in run.stderr


def test_an_unknown_record_profile_is_an_error_naming_the_key(tmp_path: Path, models_dir: Path) -> None:
    project = stand_project(tmp_path, models_dir)
    project.write_text(project.read_text().replace("contacts: true}", "contacts: true, profile: ros1}"))
    run = hrpsim("launch", str(project), "--run-dir", str(tmp_path / "run"))
    assert run.returncode == 2
    assert "record.profile" in run.stderr and "ros2" in run.stderr and "Traceback" not in run.stderr
