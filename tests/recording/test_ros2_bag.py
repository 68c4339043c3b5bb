"""ROS 2 bags of a recorded run, read back with the rosbags library: every message deserializes,
joint states and frames match the exported URDF, values equal the recording's, and every message's
bytes are what rosbags serializes for the same message. Both ways of making one: ``hrpsim export
ros2`` from a file, and ``--record-profile ros2`` during the run; they write the same bytes."""

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
from hrpsim.recording.ros2_bag import Ros2Bag, iter_recorded
from hrpsim.recording.writer import ros2_bag_folder
from hrpsim.transforms import quaternion_matrix

STORE = get_typestore(Stores.ROS2_JAZZY)
TYPES = STORE.types


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


def _raw_bag(folder: Path) -> dict[str, list[tuple[int, str, bytes]]]:
    """Per topic, each message's log time, type and CDR bytes."""
    messages: dict[str, list[tuple[int, str, bytes]]] = {}
    with Reader(folder) as reader:
        for connection, stamp, raw in reader.messages():
            messages.setdefault(connection.topic, []).append((stamp, connection.msgtype, bytes(raw)))
    return messages


def _serialized(message: object) -> bytes:
    return bytes(STORE.serialize_cdr(message, message.__msgtype__))


def _header(stamp: int, frame: str) -> object:
    sec, nanosec = divmod(stamp, 1_000_000_000)
    return TYPES["std_msgs/msg/Header"](
        stamp=TYPES["builtin_interfaces/msg/Time"](sec=sec, nanosec=nanosec), frame_id=frame
    )


def _vector(v: np.ndarray) -> object:
    return TYPES["geometry_msgs/msg/Vector3"](x=v[0], y=v[1], z=v[2])


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


def test_the_bags_bytes_are_rosbags_own_for_the_recorded_values(recorded: Path) -> None:
    """Every per-tick message, built as rosbags messages from the recording's values and
    serialized by rosbags, is byte for byte the bag's; /tf_static is rosbags' bytes of itself."""
    rec = open_recording(recorded)
    series = rec.series("robot")
    stamps = [round(t * 1e9) for t in series.time]
    bag = _raw_bag(ros2_bag_folder(recorded))
    _check_joint_states(bag["/joint_states"], stamps, rec.joints("robot"), series.fields)
    assert [data for _, _, data in bag["/clock"]] == [
        _serialized(TYPES["rosgraph_msgs/msg/Clock"](clock=_header(s, "").stamp)) for s in stamps
    ]
    for sensor in ("rfsensor", "lfsensor"):
        readings = series.sensor_readings[sensor]
        assert len(bag[f"/robot/{sensor}"]) == len(readings) == len(stamps)
        for (_, _, data), stamp, reading in zip(bag[f"/robot/{sensor}"], stamps, readings, strict=True):
            wrench = TYPES["geometry_msgs/msg/Wrench"](force=_vector(reading[:3]), torque=_vector(reading[3:]))
            expected = TYPES["geometry_msgs/msg/WrenchStamped"](header=_header(stamp, f"robot/{sensor}"), wrench=wrench)
            assert data == _serialized(expected)
    _check_imu(bag, rec, series, stamps)
    _check_tf(bag["/tf"], stamps, rec)
    ((_, kind, data),) = bag["/tf_static"]
    assert data == _serialized(STORE.deserialize_cdr(data, kind))


def _check_joint_states(messages: list, stamps: list[int], joints: list[str], fields: dict) -> None:
    assert len(messages) == len(stamps)
    for (_, _, data), stamp, q, dq, tau in zip(messages, stamps, fields["q"], fields["dq"], fields["tau"], strict=True):
        expected = TYPES["sensor_msgs/msg/JointState"](
            header=_header(stamp, ""), name=joints, position=q, velocity=dq, effort=tau
        )
        assert data == _serialized(expected)


def _check_imu(bag: dict, rec: object, series: object, stamps: list[int]) -> None:
    """sample1's gyro and accelerometer on its chest: one Imu in the gyro's frame."""
    sensors = {s.type: s for s in rec.bodies()["robot"].sensors if s.type in ("gyro", "accel")}
    gyro, accel = sensors["gyro"], sensors["accel"]
    messages = bag[f"/robot/imu/{rec.bodies()['robot'].links[gyro.link].name}"]
    into_gyro = np.asarray(gyro.rotation, float).T
    no_data, unknown = np.array([-1.0, *[0.0] * 8]), np.zeros(9)
    assert len(messages) == len(stamps)
    for k, ((_, _, data), stamp) in enumerate(zip(messages, stamps, strict=True)):
        turned = {
            s.name: (into_gyro @ np.asarray(s.rotation, float)) @ series.sensor_readings[s.name][k]
            for s in (gyro, accel)
        }
        expected = TYPES["sensor_msgs/msg/Imu"](
            header=_header(stamp, f"robot/{gyro.name}"),
            orientation=TYPES["geometry_msgs/msg/Quaternion"](x=0.0, y=0.0, z=0.0, w=1.0),
            orientation_covariance=no_data,
            angular_velocity=_vector(turned[gyro.name]),
            angular_velocity_covariance=unknown,
            linear_acceleration=_vector(turned[accel.name]),
            linear_acceleration_covariance=unknown,
        )
        assert data == _serialized(expected)


def _check_tf(messages: list, stamps: list[int], rec: object) -> None:
    """Each tick's /tf from the recorded world poses: the root as it is, each link in its parent."""
    _, poses = rec.link_poses()
    world = {f"robot/{link}": track[:, [0, 1, 2, 4, 5, 6, 3]] for link, track in poses["robot"].items()}
    assert len(messages) == len(stamps)
    for k, ((_, kind, data), stamp) in enumerate(zip(messages, stamps, strict=True)):
        frames = [(t.header.frame_id, t.child_frame_id) for t in STORE.deserialize_cdr(data, kind).transforms]
        assert frames[0] == ("world", "robot/WAIST") and len(frames) == len(world)
        transforms = [_transform(stamp, "world", "robot/WAIST", world["robot/WAIST"][k])]
        for parent, child in frames[1:]:
            transforms.append(_transform(stamp, parent, child, _in_parent(world[parent][k], world[child][k])))
        assert data == _serialized(TYPES["tf2_msgs/msg/TFMessage"](transforms=transforms))


def _in_parent(parent: np.ndarray, child: np.ndarray) -> np.ndarray:
    """``child``'s pose in ``parent``'s, both x y z qx qy qz qw in the world: the parent's inverse
    rotation applied to the offset (v + 2 u x (u x v + w v)) and to the child's rotation."""
    (x, y, z, w), v = parent[3:] * [-1.0, -1.0, -1.0, 1.0], child[:3] - parent[:3]
    u = np.array([x, y, z])
    translation = v + 2.0 * np.cross(u, np.cross(u, v) + w * v)
    bx, by, bz, bw = child[3:]
    rotation = [
        w * bx + x * bw + y * bz - z * by,
        w * by - x * bz + y * bw + z * bx,
        w * bz + x * by - y * bx + z * bw,
        w * bw - x * bx - y * by - z * bz,
    ]
    return np.concatenate([translation, rotation])


def _transform(stamp: int, parent: str, child: str, row: np.ndarray) -> object:
    qx, qy, qz, qw = row[3:]
    return TYPES["geometry_msgs/msg/TransformStamped"](
        header=_header(stamp, parent),
        child_frame_id=child,
        transform=TYPES["geometry_msgs/msg/Transform"](
            translation=_vector(row[:3]), rotation=TYPES["geometry_msgs/msg/Quaternion"](x=qx, y=qy, z=qz, w=qw)
        ),
    )


def test_export_and_the_ros2_profile_write_the_same_bytes(recorded: Path, tmp_path: Path) -> None:
    """The profile's bag takes the link poses as the simulator sent them, the export from the
    recorded JSON: message for message, the same bytes on every topic."""
    bag = tmp_path / "bag"
    run = hrpsim("export", "ros2", str(recorded), str(bag))
    assert run.returncode == 0, run.stderr
    exported, recorded_bag = _raw_bag(bag), _raw_bag(ros2_bag_folder(recorded))
    assert set(exported) == set(recorded_bag) and len(exported["/tf"]) > 10
    for topic, messages in recorded_bag.items():
        assert exported[topic] == messages, topic
    info = [
        yaml.safe_load((folder / "metadata.yaml").read_text())["rosbag2_bagfile_information"]
        for folder in (bag, ros2_bag_folder(recorded))
    ]
    for key in ("topics_with_message_count", "message_count", "starting_time", "duration"):
        assert info[0][key] == info[1][key], key


def test_a_bad_state_fails_its_own_take_and_the_bag_keeps_what_came_before(recorded: Path, tmp_path: Path) -> None:
    """Messages are made a batch at a time; a state that cannot be one is refused when it comes,
    not when its batch is made, and the messages before it are in the closed bag."""
    rec = open_recording(recorded)
    bag = Ros2Bag(tmp_path / "bag", rec.bodies(), rec.robots)
    messages = list(iter_recorded(rec))
    first_states = [k for k, (topic, _, _) in enumerate(messages) if topic == "/robots/robot/state"][:3]
    for topic, log_time, message in messages[: first_states[-1]]:
        bag.take(topic, log_time, message)
    topic, log_time, state = messages[first_states[-1]]
    with pytest.raises(ValueError):
        bag.take(topic, log_time, {**state, "q": ["not a number", *state["q"][1:]]})
    bag.close()
    written = _raw_bag(tmp_path / "bag")
    poses_before = sum(topic == "/tf" for topic, _, _ in messages[: first_states[-1]])
    assert len(written["/joint_states"]) == 2 and len(written["/robot/rfsensor"]) == 2
    assert len(written["/tf"]) == len(written["/clock"]) == poses_before > 0 and len(written["/tf_static"]) == 1
