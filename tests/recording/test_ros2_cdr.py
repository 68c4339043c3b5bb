"""The CDR templates of a ROS 2 bag's per-tick messages (recording/ros2_cdr.py) against the
rosbags library's own serialization of the same message: the same bytes, for frame ids and names
of every length modulo 8 (CDR's padding), empty sequences, NaN and None, stamps past 2**31 ns,
several messages made at once."""

from __future__ import annotations

import numpy as np
import pytest
from rosbags.typesys import Stores, get_typestore

from hrpsim.recording import ros2_cdr
from hrpsim.sensor_types import IMU, WRENCH_STAMPED

STORE = get_typestore(Stores.ROS2_JAZZY)
TYPES = STORE.types
FRAMES = ["", "a", "ab", "abc", "abcd", "robot/WAIST", "robot/RLEG_HIP_R", "robot/RLEG_HIP_P", "rob/ü"]
STAMPS = [0, 2_000_000, 2_147_483_649, 16_000_000_001, 1_234_567_890_123_456_789]


def _rows(n: int) -> np.ndarray:
    """A row of n numbers per stamp: all sizes and signs, a -0.0 and a NaN among them."""
    rows = np.random.default_rng(n).normal(size=(len(STAMPS), n)) * 10.0 ** np.arange(-6, n - 6)
    rows[:, ::5] = -0.0
    rows[:, 3::7] = np.nan
    return rows


def _rosbags(message: object) -> bytes:
    return bytes(STORE.serialize_cdr(message, message.__msgtype__))


def _header(stamp: int, frame: str) -> object:
    sec, nanosec = divmod(stamp, 1_000_000_000)
    time = TYPES["builtin_interfaces/msg/Time"](sec=sec, nanosec=nanosec)
    return TYPES["std_msgs/msg/Header"](stamp=time, frame_id=frame)


def _vector(v: np.ndarray) -> object:
    return TYPES["geometry_msgs/msg/Vector3"](x=v[0], y=v[1], z=v[2])


@pytest.mark.parametrize("frame", FRAMES)
def test_wrenches_are_rosbags_bytes(frame: str) -> None:
    rows = _rows(6)
    expected = [
        TYPES["geometry_msgs/msg/WrenchStamped"](
            header=_header(stamp, frame),
            wrench=TYPES["geometry_msgs/msg/Wrench"](force=_vector(row[:3]), torque=_vector(row[3:])),
        )
        for stamp, row in zip(STAMPS, rows, strict=True)
    ]
    assert WRENCH_STAMPED.type == "geometry_msgs/msg/WrenchStamped"
    assert ros2_cdr.stamped(frame, WRENCH_STAMPED.values).fill(STAMPS, rows) == [_rosbags(m) for m in expected]


@pytest.mark.parametrize("frame", FRAMES)
def test_imus_are_rosbags_bytes(frame: str) -> None:
    rows = _rows(IMU.values)
    expected = [
        TYPES["sensor_msgs/msg/Imu"](
            header=_header(stamp, frame),
            orientation=TYPES["geometry_msgs/msg/Quaternion"](x=v[0], y=v[1], z=v[2], w=v[3]),
            orientation_covariance=v[4:13],
            angular_velocity=_vector(v[13:16]),
            angular_velocity_covariance=v[16:25],
            linear_acceleration=_vector(v[25:28]),
            linear_acceleration_covariance=v[28:37],
        )
        for stamp, v in zip(STAMPS, rows, strict=True)
    ]
    assert IMU.type == "sensor_msgs/msg/Imu"
    assert ros2_cdr.stamped(frame, IMU.values).fill(STAMPS, rows) == [_rosbags(m) for m in expected]


def test_clocks_are_rosbags_bytes() -> None:
    expected = [TYPES["rosgraph_msgs/msg/Clock"](clock=_header(stamp, "").stamp) for stamp in STAMPS]
    assert ros2_cdr.clock().fill(STAMPS) == [_rosbags(m) for m in expected]


@pytest.mark.parametrize("names", [[], ["a"], FRAMES[1:4], FRAMES])
@pytest.mark.parametrize("lengths", [(0, 0, 0), (3, 3, 3), (9, 0, 9), (1, 2, 5)])
def test_joint_states_are_rosbags_bytes(names: list[str], lengths: tuple[int, int, int]) -> None:
    rows = _rows(sum(lengths))
    expected = []
    for stamp, row in zip(STAMPS, rows, strict=True):
        q, dq, tau = np.split(row, np.cumsum(lengths)[:2])
        expected.append(
            TYPES["sensor_msgs/msg/JointState"](
                header=_header(stamp, ""), name=names, position=q, velocity=dq, effort=tau
            )
        )
    assert ros2_cdr.joint_state(names, lengths).fill(STAMPS, rows) == [_rosbags(m) for m in expected]


@pytest.mark.parametrize("count", [0, 1, 2, len(FRAMES)])
def test_tf_messages_are_rosbags_bytes(count: int) -> None:
    frames = [(FRAMES[k - 1], FRAMES[k]) for k in range(count)]
    rows = _rows(ros2_cdr.TRANSFORM_VALUES * count)
    expected = []
    for stamp, row in zip(STAMPS, rows, strict=True):
        transforms = [
            TYPES["geometry_msgs/msg/TransformStamped"](
                header=_header(stamp, parent),
                child_frame_id=child,
                transform=TYPES["geometry_msgs/msg/Transform"](
                    translation=_vector(v[:3]),
                    rotation=TYPES["geometry_msgs/msg/Quaternion"](x=v[3], y=v[4], z=v[5], w=v[6]),
                ),
            )
            for (parent, child), v in zip(frames, row.reshape(-1, ros2_cdr.TRANSFORM_VALUES), strict=True)
        ]
        expected.append(TYPES["tf2_msgs/msg/TFMessage"](transforms=transforms))
    assert ros2_cdr.tf_message(frames).fill(STAMPS, rows) == [_rosbags(m) for m in expected]


def test_a_none_among_the_values_is_nan() -> None:
    """A recorded state's JSON has null where the simulator had NaN."""
    template = ros2_cdr.joint_state(["a", "b"], (2, 2, 2))
    nan = float("nan")
    assert template.fill([7], [[0.5, None, 1.0, 2.0, None, -3.0]]) == template.fill(
        [7], [[0.5, nan, 1.0, 2.0, nan, -3.0]]
    )


def test_rows_of_another_length_are_an_error() -> None:
    template = ros2_cdr.stamped("robot/rfsensor", WRENCH_STAMPED.values)
    with pytest.raises(ValueError, match=r"\(2, 5\) for 2 messages of 6"):
        template.fill([0, 1], [[1.0] * 5, [2.0] * 5])
