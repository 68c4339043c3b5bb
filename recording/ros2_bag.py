"""A recording's messages as a ROS 2 bag (rosbag2: MCAP storage, CDR, ``ros2msg`` schemas,
``metadata.yaml``), written with the ``rosbags`` library, and each model's URDF beside it.

Fed the messages of an hrpsim recording as they are (topic, log time, decoded JSON): by
``hrpsim export ros2`` from a file, or by the recording's writer process while a run is recorded
with ``--record-profile ros2``. docs/recording.md lists the topics.
"""

from __future__ import annotations

import base64
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
from rosbags.interfaces import Qos, QosDurability, QosHistory, QosLiveliness, QosReliability, QosTime

from hrpsim.bodyinfo import Body, Sensor
from hrpsim.errors import RecordingError
from hrpsim.recording import schemas
from hrpsim.recording.ros2_frames import FrameTree, Transform
from hrpsim.sensor_mounts import sensor_label

# our image kinds' RawImage encodings are ROS's too (rgb8, mono8, 32FC1)
ROS_TYPES = {
    "joints": "sensor_msgs/msg/JointState",
    "tf": "tf2_msgs/msg/TFMessage",
    "clock": "rosgraph_msgs/msg/Clock",
    "force": "geometry_msgs/msg/WrenchStamped",
    "imu": "sensor_msgs/msg/Imu",
    "scan": "sensor_msgs/msg/LaserScan",
    "image": "sensor_msgs/msg/Image",
}
UNKNOWN_COVARIANCE = np.zeros(9)
# /tf_static as tf2's static broadcaster offers it, so ``ros2 bag play`` serves it to late subscribers
_LATCHED = Qos(
    history=QosHistory.KEEP_LAST,
    depth=1,
    reliability=QosReliability.RELIABLE,
    durability=QosDurability.TRANSIENT_LOCAL,
    deadline=QosTime(sec=0, nsec=0),
    lifespan=QosTime(sec=0, nsec=0),
    liveliness=QosLiveliness.AUTOMATIC,
    liveliness_lease_duration=QosTime(sec=0, nsec=0),
    avoid_ros_namespace_conventions=False,
)
NO_DATA_COVARIANCE = np.array([-1.0, *[0.0] * 8])  # ROS: the first element -1 says "no such data"


def joint_states_topic(robot: str, robots: list[str]) -> str:
    """``/joint_states`` for a run's only robot, ``/ROBOT/joint_states`` for each of several."""
    return "/joint_states" if len(robots) == 1 else f"/{robot}/joint_states"


def _ros_sensor_topic(topic: str) -> str:
    """/robots/R/sensors/S[/KIND] -> /R/S[/KIND]."""
    parts = topic.split("/")
    return "/" + "/".join([parts[2], *parts[4:]])


class Ros2Bag:
    """One bag folder: ``take`` each recorded message in file order, ``close`` at the end."""

    def __init__(self, path: str | Path, bodies: dict[str, Body], robots: list[str]) -> None:
        from rosbags.rosbag2 import StoragePlugin, Writer
        from rosbags.typesys import Stores, get_typestore

        self.path = Path(path)
        if self.path.exists():
            raise RecordingError(f"{self.path}: the bag folder exists already; remove it or name another")
        self.store = get_typestore(Stores.ROS2_JAZZY)
        self.types = self.store.types
        self.bodies, self.robots = bodies, robots
        self.tree = FrameTree(bodies, robots)
        self.joints = {r: bodies[r].joint_names for r in robots}
        self.imus = {r: _imu_pairs(bodies[r]) for r in robots}
        self.sensor_kinds = {(r, s.name): s.type for r in robots for s in bodies[r].sensors}
        self.ranges = {(r, sensor_label(s)): s for r in robots for s in bodies[r].sensors if s.type == "range"}
        self.writer = Writer(self.path, version=8, storage_plugin=StoragePlugin.MCAP)
        self.writer.open()
        self.connections: dict[str, Any] = {}
        self.static_sent = False
        self.messages = 0

    # --- feeding ---

    def take(self, topic: str, log_time: int, message: dict[str, Any]) -> None:
        parts = topic.split("/")
        if topic == schemas.TF_TOPIC:
            self._tf(log_time, message)
        elif len(parts) == 4 and parts[1] == "robots" and topic == schemas.state_topic(parts[2]):
            self._state(parts[2], log_time, message)
        elif len(parts) > 4 and parts[1] == "robots" and parts[3] == "sensors":
            self._sensor(topic, parts[2], parts[4], log_time, message)

    def close(self) -> None:
        self.writer.close()

    # --- messages ---

    def _write(self, topic: str, kind: str, log_time: int, message: Any) -> None:
        connection = self.connections.get(topic)
        if connection is None:
            qos = [_LATCHED] if topic == "/tf_static" else []
            connection = self.connections[topic] = self.writer.add_connection(
                topic, ROS_TYPES[kind], typestore=self.store, offered_qos_profiles=qos
            )
        self.writer.write(connection, log_time, self.store.serialize_cdr(message, ROS_TYPES[kind]))
        self.messages += 1

    def _header(self, log_time: int, frame: str) -> Any:
        sec, nanosec = divmod(log_time, 1_000_000_000)
        stamp = self.types["builtin_interfaces/msg/Time"](sec=sec, nanosec=nanosec)
        return self.types["std_msgs/msg/Header"](stamp=stamp, frame_id=frame)

    def _vector(self, v: Any) -> Any:
        return self.types["geometry_msgs/msg/Vector3"](x=float(v[0]), y=float(v[1]), z=float(v[2]))

    def _tf(self, log_time: int, message: dict[str, Any]) -> None:
        poses = _poses(message)
        if not self.static_sent:
            self._write("/tf_static", "tf", log_time, self._tf_message(log_time, self.tree.static(poses)))
            self.static_sent = True
        self._write("/tf", "tf", log_time, self._tf_message(log_time, self.tree.moving(poses)))
        self._write(
            "/clock", "clock", log_time, self.types["rosgraph_msgs/msg/Clock"](clock=self._header(log_time, "").stamp)
        )

    def _tf_message(self, log_time: int, transforms: list[Transform]) -> Any:
        stamped = self.types["geometry_msgs/msg/TransformStamped"]
        transform = self.types["geometry_msgs/msg/Transform"]
        quaternion = self.types["geometry_msgs/msg/Quaternion"]
        return self.types["tf2_msgs/msg/TFMessage"](
            transforms=[
                stamped(
                    header=self._header(log_time, t.parent),
                    child_frame_id=t.child,
                    transform=transform(
                        translation=self._vector(t.translation),
                        rotation=quaternion(*(float(c) for c in t.rotation)),
                    ),
                )
                for t in transforms
            ]
        )

    def _state(self, robot: str, log_time: int, state: dict[str, Any]) -> None:
        if robot not in self.joints:
            return
        joint_state = self.types["sensor_msgs/msg/JointState"](
            header=self._header(log_time, ""),
            name=list(self.joints[robot]),
            position=_floats(state["q"]),
            velocity=_floats(state["dq"]),
            effort=_floats(state["tau"]),
        )
        self._write(joint_states_topic(robot, self.robots), "joints", log_time, joint_state)
        readings = state.get("sensors") or {}
        for name, reading in readings.items():
            if self.sensor_kinds.get((robot, name)) == "force" and len(reading) == 6:
                self._write(f"/{robot}/{name}", "force", log_time, self._wrench(robot, name, log_time, reading))
        for link, pair in self.imus[robot].items():
            if any(s.name in readings for s in pair.values()):
                self._write(f"/{robot}/imu/{link}", "imu", log_time, self._imu(robot, pair, log_time, readings))

    def _wrench(self, robot: str, name: str, log_time: int, reading: list[float]) -> Any:
        wrench = self.types["geometry_msgs/msg/Wrench"](
            force=self._vector(reading[:3]), torque=self._vector(reading[3:])
        )
        return self.types["geometry_msgs/msg/WrenchStamped"](
            header=self._header(log_time, schemas.frame_id(robot, name)), wrench=wrench
        )

    def _imu(self, robot: str, pair: dict[str, Sensor], log_time: int, readings: dict[str, Any]) -> Any:
        """A gyro and an accelerometer on one link, in the gyro's frame (the accelerometer's
        reading turned into it); no orientation."""
        frame_sensor = pair.get("gyro") or pair["accel"]
        values, covariances = {}, {}
        for kind in ("gyro", "accel"):
            sensor = pair.get(kind)
            reading = readings.get(sensor.name) if sensor is not None else None
            if reading is None or len(reading) != 3:
                values[kind], covariances[kind] = np.zeros(3), NO_DATA_COVARIANCE
                continue
            turn = np.asarray(frame_sensor.rotation, float).T @ np.asarray(sensor.rotation, float)
            values[kind], covariances[kind] = turn @ np.asarray(reading, float), UNKNOWN_COVARIANCE
        return self.types["sensor_msgs/msg/Imu"](
            header=self._header(log_time, schemas.frame_id(robot, frame_sensor.name)),
            orientation=self.types["geometry_msgs/msg/Quaternion"](x=0.0, y=0.0, z=0.0, w=1.0),
            orientation_covariance=NO_DATA_COVARIANCE,
            angular_velocity=self._vector(values["gyro"]),
            angular_velocity_covariance=covariances["gyro"],
            linear_acceleration=self._vector(values["accel"]),
            linear_acceleration_covariance=covariances["accel"],
        )

    def _sensor(self, topic: str, robot: str, label: str, log_time: int, message: dict[str, Any]) -> None:
        frame = self.tree.sensor_frames.get((robot, label), message.get("frame_id", ""))
        stamp = message.get("timestamp", {})
        taken = int(stamp.get("sec", 0)) * 1_000_000_000 + int(stamp.get("nsec", 0))
        if "ranges" in message:
            self._write(_ros_sensor_topic(topic), "scan", log_time, self._scan(robot, label, frame, taken, message))
        elif "encoding" in message:
            image = self.types["sensor_msgs/msg/Image"](
                header=self._header(taken, frame),
                height=int(message["height"]),
                width=int(message["width"]),
                encoding=message["encoding"],
                is_bigendian=0,
                step=int(message["step"]),
                data=np.frombuffer(base64.b64decode(message["data"]), dtype=np.uint8),
            )
            self._write(_ros_sensor_topic(topic), "image", log_time, image)

    def _scan(self, robot: str, label: str, frame: str, taken: int, message: dict[str, Any]) -> Any:
        ranges = np.asarray([np.nan if r is None else r for r in message["ranges"]], dtype=np.float32)
        start, end = float(message["start_angle"]), float(message["end_angle"])
        sensor = self.ranges.get((robot, label))
        range_max = float(sensor.params.get("maxDistance", np.inf)) if sensor is not None else float(np.nanmax(ranges))
        return self.types["sensor_msgs/msg/LaserScan"](
            header=self._header(taken, frame),
            angle_min=start,
            angle_max=end,
            angle_increment=(end - start) / max(1, len(ranges) - 1),
            time_increment=0.0,
            scan_time=0.0,
            range_min=0.0,
            range_max=range_max,
            ranges=ranges,
            intensities=np.zeros(0, dtype=np.float32),
        )


def _floats(values: list[Any]) -> np.ndarray:
    return np.array([np.nan if v is None else v for v in values], dtype=np.float64)


def _poses(message: dict[str, Any]) -> dict[str, np.ndarray]:
    """A recorded foxglove.FrameTransforms as (links, 7) x y z qx qy qz qw per model, in link order."""
    rows: dict[str, list[list[float]]] = {}
    for tf in message["transforms"]:
        model = tf["child_frame_id"].partition("/")[0]
        t, r = tf["translation"], tf["rotation"]
        rows.setdefault(model, []).append([t["x"], t["y"], t["z"], r["x"], r["y"], r["z"], r["w"]])
    return {model: np.array(table, dtype=np.float64) for model, table in rows.items()}


def _imu_pairs(body: Body) -> dict[str, dict[str, Sensor]]:
    """Per link name, the first gyro and accelerometer on it."""
    pairs: dict[str, dict[str, Sensor]] = {}
    for sensor in body.sensors:
        if sensor.type in ("gyro", "accel"):
            pairs.setdefault(body.links[sensor.link].name, {}).setdefault(sensor.type, sensor)
    return pairs


def iter_recorded(recording: Any) -> Iterator[tuple[str, int, dict[str, Any]]]:
    """The messages a bag is made of, from a recording, in file order."""
    robots = recording.robots
    states = {schemas.state_topic(r) for r in robots}
    sensors = tuple(f"/robots/{r}/sensors/" for r in robots)
    topics = [t for t in recording.channels if t == schemas.TF_TOPIC or t in states or t.startswith(sensors)]
    yield from recording.messages(topics)
