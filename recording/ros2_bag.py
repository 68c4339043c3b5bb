"""A recording's messages as a ROS 2 bag (rosbag2: MCAP storage, CDR, ``ros2msg`` schemas,
``metadata.yaml``), written with the ``rosbags`` library, and each model's URDF beside it. The
messages of every tick are CDR from templates (recording/ros2_cdr.py), the bytes rosbags would
serialize for them; scans and images are rosbags messages.

Fed the messages of an hrpsim recording as they are (topic, log time, decoded JSON): by
``hrpsim export ros2`` from a file, or by the recording's writer process while a run is recorded
with ``--record-profile ros2`` (which hands over the link poses as the simulator sent them, not
their JSON). docs/recording.md lists the topics.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
from rosbags.interfaces import Qos, QosDurability, QosHistory, QosLiveliness, QosReliability, QosTime

from hrpsim.bodyinfo import Body, Sensor
from hrpsim.errors import RecordingError
from hrpsim.recording import ros2_cdr, schemas
from hrpsim.recording.ros2_frames import FrameTree
from hrpsim.sensor_mounts import sensor_label
from hrpsim.sensor_types import SENSOR_TYPES, Ros2Message

# The messages of the bag's own topics and of range and vision readings; the readings engines
# measure go in the message their type's descriptor names (hrpsim/sensor_types.py).
# Our image kinds' RawImage encodings are ROS's too (rgb8, mono8, 32FC1).
ROS_TYPES = {
    "joints": "sensor_msgs/msg/JointState",
    "tf": "tf2_msgs/msg/TFMessage",
    "clock": "rosgraph_msgs/msg/Clock",
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
# messages made together (64 ticks of the sample humanoid): numpy's cost per call, which was most
# of the time per message, is paid once per batch
BATCH_MESSAGES = 512


def joint_states_topic(robot: str, robots: list[str]) -> str:
    """``/joint_states`` for a run's only robot, ``/ROBOT/joint_states`` for each of several."""
    return "/joint_states" if len(robots) == 1 else f"/{robot}/joint_states"


def _ros_sensor_topic(topic: str) -> str:
    """/robots/R/sensors/S[/KIND] -> /R/S[/KIND]."""
    parts = topic.split("/")
    return "/" + "/".join([parts[2], *parts[4:]])


class Ros2Bag:
    """One bag folder: ``take`` each recorded message in file order, ``close`` at the end.

    The messages of the ticks are made BATCH_MESSAGES at a time, each topic's with one numpy call
    per step for the whole batch, and written in the order they came."""

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
        self.topics = {r: _RobotTopics(r, bodies[r], robots) for r in robots}
        self.ranges = {(r, sensor_label(s)): s for r in robots for s in bodies[r].sensors if s.type == "range"}
        self.clock = ros2_cdr.clock()
        self.tf_templates: dict[tuple[tuple[str, str], ...], ros2_cdr.Template] = {}
        self.writer = Writer(self.path, version=8, storage_plugin=StoragePlugin.MCAP)
        self.writer.open()
        self.connections: dict[str, Any] = {}
        self.static_sent = False
        self.messages = 0
        self._pending: list[tuple[str, str, int, _Batch, int]] = []  # topic, kind, log time, its batch and row
        self._batches: dict[tuple[str, ros2_cdr.Template], _Batch] = {}

    # --- feeding ---

    def take(self, topic: str, log_time: int, message: dict[str, Any]) -> None:
        parts = topic.split("/")
        if topic == schemas.TF_TOPIC:
            self.take_poses(log_time, _poses(message))
        elif len(parts) == 4 and parts[1] == "robots" and topic == schemas.state_topic(parts[2]):
            self._state(parts[2], log_time, message)
        elif len(parts) > 4 and parts[1] == "robots" and parts[3] == "sensors":
            self._sensor(topic, parts[2], parts[4], log_time, message)

    def take_link_poses(self, log_time: int, value: list[Any]) -> None:
        """A tick's link poses as the simulator hands them to the writer process (recording/writer.py,
        ``_LinkPoses.take``): [time, [[model, positions, quaternions w x y z] ...]], raw float64."""
        poses: dict[str, np.ndarray] = {}
        for model, positions, quaternions in value[1]:
            p = np.frombuffer(positions, dtype=np.float64).reshape(-1, 3)
            wxyz = np.frombuffer(quaternions, dtype=np.float64).reshape(-1, 4)
            poses[model] = np.hstack([p, wxyz[:, 1:], wxyz[:, :1]])
        self.take_poses(log_time, poses)

    def take_poses(self, log_time: int, poses: dict[str, np.ndarray]) -> None:
        """A tick's link poses in the world, (links, 7) x y z qx qy qz qw per model: /tf (and
        /tf_static the first time) and /clock."""
        if not self.static_sent:
            static = self.tree.static(poses)
            self._queue(
                "/tf_static", ROS_TYPES["tf"], log_time, self._tf_template(static.frames), static.values.ravel()
            )
            self.static_sent = True
        models = self.tree.moving_models(poses)
        template = self._tf_template(self.tree.moving_frames(models))
        self._queue("/tf", ROS_TYPES["tf"], log_time, template, poses, partial(self._tf_values, models))
        self._queue("/clock", ROS_TYPES["clock"], log_time, self.clock, None)

    def close(self) -> None:
        try:
            self._flush()
        finally:
            self.writer.close()

    # --- messages ---

    def _queue(
        self,
        topic: str,
        msgtype: str,
        log_time: int,
        template: ros2_cdr.Template,
        row: Any,
        values: Callable[[list[Any]], np.ndarray] | None = None,
    ) -> None:
        """A message to make with the others of its topic at the end of the batch: its template
        and its row of values (or what ``values`` turns into them)."""
        batch = self._batches.get((topic, template))
        if batch is None:
            batch = self._batches[(topic, template)] = _Batch(template, values)
        self._pending.append((topic, msgtype, log_time, batch, batch.add(log_time, row)))
        if len(self._pending) >= BATCH_MESSAGES:
            self._flush()

    def _flush(self) -> None:
        pending, self._pending, self._batches = self._pending, [], {}  # a batch that fails is dropped
        made: dict[_Batch, list[bytes]] = {}
        for topic, msgtype, log_time, batch, row in pending:
            if batch not in made:
                made[batch] = batch.messages()
            self._write(topic, msgtype, log_time, made[batch][row])

    def _write(self, topic: str, msgtype: str, log_time: int, data: bytes) -> None:
        connection = self.connections.get(topic)
        if connection is None:
            qos = [_LATCHED] if topic == "/tf_static" else []
            connection = self.connections[topic] = self.writer.add_connection(
                topic, msgtype, typestore=self.store, offered_qos_profiles=qos
            )
        self.writer.write(connection, log_time, data)
        self.messages += 1

    def _tf_template(self, frames: tuple[tuple[str, str], ...]) -> ros2_cdr.Template:
        template = self.tf_templates.get(frames)
        if template is None:
            template = self.tf_templates[frames] = ros2_cdr.tf_message(frames)
        return template

    def _tf_values(self, models: tuple[str, ...], poses: list[dict[str, np.ndarray]]) -> np.ndarray:
        return self.tree.moving(models, poses).reshape(len(poses), -1)

    def _state(self, robot: str, log_time: int, state: dict[str, Any]) -> None:
        topics = self.topics.get(robot)
        if topics is None:
            return
        q, dq, tau = state["q"], state["dq"], state["tau"]
        joints = np.array(q + dq + tau, dtype=np.float64)  # here, so that a bad state fails its own take
        template = topics.joint_state((len(q), len(dq), len(tau)))
        self._queue(topics.joint_states, ROS_TYPES["joints"], log_time, template, joints)
        readings = state.get("sensors") or {}
        per_sensor = [topics.per_sensor[name] for name in readings if name in topics.per_sensor]
        for message in [*per_sensor, *topics.per_link]:
            values = message.values(readings)
            if values is not None:
                self._queue(message.topic, message.type, log_time, message.template, values)

    def _serialized(self, message: Any, kind: str) -> bytes:
        return self.store.serialize_cdr(message, ROS_TYPES[kind])

    def _header(self, stamp_ns: int, frame: str) -> Any:
        sec, nanosec = divmod(stamp_ns, 1_000_000_000)
        stamp = self.types["builtin_interfaces/msg/Time"](sec=sec, nanosec=nanosec)
        return self.types["std_msgs/msg/Header"](stamp=stamp, frame_id=frame)

    def _sensor(self, topic: str, robot: str, label: str, log_time: int, message: dict[str, Any]) -> None:
        """A scan or an image, a few a second: a rosbags message, written after the batch so far
        (the batch holds no image)."""
        frame = self.tree.sensor_frames.get((robot, label), message.get("frame_id", ""))
        stamp = message.get("timestamp", {})
        taken = int(stamp.get("sec", 0)) * 1_000_000_000 + int(stamp.get("nsec", 0))
        if "ranges" in message:
            scan = self._serialized(self._scan(robot, label, frame, taken, message), "scan")
            self._flush()
            self._write(_ros_sensor_topic(topic), ROS_TYPES["scan"], log_time, scan)
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
            data = self._serialized(image, "image")
            self._flush()
            self._write(_ros_sensor_topic(topic), ROS_TYPES["image"], log_time, data)

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


class _Batch:
    """One topic's messages of a batch, of one template: their stamps and rows of values, made
    together. ``values``, if given, turns the rows into values then (the link poses into /tf)."""

    def __init__(self, template: ros2_cdr.Template, values: Callable[[list[Any]], np.ndarray] | None) -> None:
        self.template, self.values = template, values
        self.stamps: list[int] = []
        self.rows: list[Any] = []

    def add(self, stamp: int, row: Any) -> int:
        self.stamps.append(stamp)
        self.rows.append(row)
        return len(self.rows) - 1

    def messages(self) -> list[bytes]:
        if not self.template.values:
            return self.template.fill(self.stamps)
        return self.template.fill(self.stamps, self.values(self.rows) if self.values else self.rows)


class _RobotTopics:
    """A robot's per-state topics, their frames and templates, worked out once."""

    def __init__(self, robot: str, body: Body, robots: list[str]) -> None:
        self.joint_states = joint_states_topic(robot, robots)
        self.joint_names = tuple(body.joint_names)
        self.joint_templates: dict[tuple[int, int, int], ros2_cdr.Template] = {}
        self.per_sensor, self.per_link = _reading_messages(robot, body)

    def joint_state(self, lengths: tuple[int, int, int]) -> ros2_cdr.Template:
        """The JointState template for positions, velocities and efforts of these lengths."""
        template = self.joint_templates.get(lengths)
        if template is None:
            template = self.joint_templates[lengths] = ros2_cdr.joint_state(self.joint_names, lengths)
        return template


class _ReadingMessage:
    """A message of readings engines measure, as their types' descriptors say (hrpsim.sensor_types:
    Ros2Message): one sensor's in its own frame, or a link's sensors' in the frame of the first
    slot's sensor, the others' readings turned into it."""

    def __init__(self, robot: str, topic: str, message: Ros2Message, frame: Sensor, fills: dict[str, Sensor]) -> None:
        self.topic, self.type, self.slots = topic, message.type, message.slots
        self.template = ros2_cdr.stamped(schemas.frame_id(robot, frame.name), message.values)
        self.per_sensor = not message.per_link
        into_frame = np.asarray(frame.rotation, float).T
        # slot -> (its sensor's name, the turn of its reading into the frame's axes; None: its own frame)
        self.fills = {
            slot: (sensor.name, None if self.per_sensor else into_frame @ np.asarray(sensor.rotation, float))
            for slot, sensor in fills.items()
        }

    def values(self, readings: dict[str, Any]) -> np.ndarray | None:
        """The message's float64 values, or None if no sensor of it has a reading (a sensor's own
        message: if its reading is not of its slot's size)."""
        if not any(name in readings for name, _ in self.fills.values()):
            return None
        parts: list[Any] = []
        for slot in self.slots:
            name, turn = self.fills.get(slot.name, ("", None))
            reading = readings.get(name)
            if reading is not None and len(reading) == slot.size:
                value = np.asarray(reading, dtype=np.float64)
                parts.append(value if turn is None else np.concatenate([turn @ v for v in value.reshape(-1, 3)]))
                covariance = UNKNOWN_COVARIANCE
            elif self.per_sensor:
                return None
            else:
                parts.append(np.array(slot.absent or np.zeros(slot.size), dtype=np.float64))
                covariance = NO_DATA_COVARIANCE
            if slot.covariance:
                parts.append(covariance)
        return np.concatenate(parts)


def _reading_messages(robot: str, body: Body) -> tuple[dict[str, _ReadingMessage], list[_ReadingMessage]]:
    """A robot's messages of readings: per sensor name (a name given twice is its last sensor's),
    and per link (for each slot, the first sensor on the link that fills it)."""
    by_name = {s.name: s for s in body.sensors}
    per_sensor: dict[str, _ReadingMessage] = {}
    on_links: dict[tuple[str, Ros2Message], dict[str, Sensor]] = {}
    for sensor in body.sensors:
        kind = SENSOR_TYPES.get(sensor.type)
        encoding = kind.ros2 if kind is not None else None
        if encoding is None:
            continue
        message = encoding.message
        if message.per_link:
            on_links.setdefault((body.links[sensor.link].name, message), {}).setdefault(encoding.slot, sensor)
        elif by_name[sensor.name] is sensor:
            topic = f"/{robot}/{sensor.name}"
            per_sensor[sensor.name] = _ReadingMessage(robot, topic, message, sensor, {encoding.slot: sensor})
    per_link = []
    for (link, message), fills in on_links.items():
        frame = next(fills[slot.name] for slot in message.slots if slot.name in fills)
        per_link.append(_ReadingMessage(robot, f"/{robot}/{message.per_link}/{link}", message, frame, fills))
    return per_sensor, per_link


def _poses(message: dict[str, Any]) -> dict[str, np.ndarray]:
    """A recorded foxglove.FrameTransforms as (links, 7) x y z qx qy qz qw per model, in link order."""
    rows: dict[str, list[list[float]]] = {}
    for tf in message["transforms"]:
        model = tf["child_frame_id"].partition("/")[0]
        t, r = tf["translation"], tf["rotation"]
        rows.setdefault(model, []).append([t["x"], t["y"], t["z"], r["x"], r["y"], r["z"], r["w"]])
    return {model: np.array(table, dtype=np.float64) for model, table in rows.items()}


def iter_recorded(recording: Any) -> Iterator[tuple[str, int, dict[str, Any]]]:
    """The messages a bag is made of, from a recording, in file order."""
    robots = recording.robots
    states = {schemas.state_topic(r) for r in robots}
    sensors = tuple(f"/robots/{r}/sensors/" for r in robots)
    topics = [t for t in recording.channels if t == schemas.TF_TOPIC or t in states or t.startswith(sensors)]
    yield from recording.messages(topics)
