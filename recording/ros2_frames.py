"""The TF tree of a ROS 2 bag: each link relative to its parent link, as robot_state_publisher
would publish it from the exported URDF.

Frames are ``MODEL/LINK`` (the URDF's link names with the model as prefix, robot_state_publisher's
``frame_prefix``), under ``world``. On ``/tf``, every tick: each robot's root in ``world`` and each
link on a moving joint in its parent link. On ``/tf_static``, once: links on fixed joints (their
offset in the model, which is the URDF's), every link of a static model, and a frame per sensor
(``MODEL/SENSOR``, its pose on its link) for the sensors' messages.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hrpsim.bodyinfo import Body, Sensor
from hrpsim.recording import schemas
from hrpsim.recording.sensor_messages import SCAN_IN_SENSOR
from hrpsim.simserver.sensor_mounts import sensor_label
from hrpsim.transforms import matrix_quaternion

MOVING_JOINTS = ("rotate", "slide", "free")  # URDF writes the others (fixed, crawler) as fixed


@dataclass(frozen=True)
class Transform:
    """``child`` in ``parent``: translation (3,), quaternion (4,) x y z w."""

    parent: str
    child: str
    translation: np.ndarray
    rotation: np.ndarray


def quaternion_xyzw(rotation: np.ndarray) -> np.ndarray:
    w, x, y, z = matrix_quaternion(np.asarray(rotation, dtype=float))
    return np.array([x, y, z, w])


def _multiply(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Hamilton product of two x y z w quaternions."""
    ax, ay, az, aw = a
    bx, by, bz, bw = b
    return np.array(
        [
            aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw,
            aw * bw - ax * bx - ay * by - az * bz,
        ]
    )


def _rotate(q: np.ndarray, v: np.ndarray) -> np.ndarray:
    x, y, z, w = q
    u = np.array([x, y, z])
    return v + 2.0 * np.cross(u, np.cross(u, v) + w * v)


def relative(parent_pose: np.ndarray, child_pose: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The child's pose in its parent's frame, from both in the world (x y z qx qy qz qw each)."""
    inverse = parent_pose[3:] * np.array([-1.0, -1.0, -1.0, 1.0])
    return _rotate(inverse, child_pose[:3] - parent_pose[:3]), _multiply(inverse, child_pose[3:])


class FrameTree:
    """Which transforms of a set of models go on /tf and which on /tf_static."""

    def __init__(self, bodies: dict[str, Body], robots: list[str]) -> None:
        self.bodies = bodies
        self.robots = [r for r in robots if r in bodies]
        self.static_models = [m for m in bodies if m not in self.robots]
        self.sensor_frames: dict[tuple[str, str], str] = {}  # (model, sensor label) -> frame
        self._fixed: list[Transform] = []
        for model in self.robots:
            self._fixed += self._fixed_links(model) + self._sensors(model)

    def frame(self, model: str, link_index: int) -> str:
        return schemas.frame_id(model, self.bodies[model].links[link_index].name)

    def moving(self, poses: dict[str, np.ndarray]) -> list[Transform]:
        """/tf of one tick from every robot's link poses in the world ((links, 7) x y z qx qy qz qw)."""
        out = []
        for model in self.robots:
            table = poses.get(model)
            if table is None:
                continue
            for index, link in enumerate(self.bodies[model].links):
                if link.parent < 0:
                    out.append(Transform(schemas.WORLD_FRAME, self.frame(model, index), table[0][:3], table[0][3:]))
                elif link.joint_type in MOVING_JOINTS:
                    t, q = relative(table[link.parent], table[index])
                    out.append(Transform(self.frame(model, link.parent), self.frame(model, index), t, q))
        return out

    def static(self, poses: dict[str, np.ndarray]) -> list[Transform]:
        """/tf_static: fixed links and sensor frames of the robots, and the static models as they
        are in ``poses`` (the first tick's)."""
        out = list(self._fixed)
        for model in self.static_models:
            table = poses.get(model)
            if table is None:
                continue
            for index, link in enumerate(self.bodies[model].links):
                if link.parent < 0:
                    out.append(Transform(schemas.WORLD_FRAME, self.frame(model, index), table[0][:3], table[0][3:]))
                else:
                    t, q = relative(table[link.parent], table[index])
                    out.append(Transform(self.frame(model, link.parent), self.frame(model, index), t, q))
        return out

    def _fixed_links(self, model: str) -> list[Transform]:
        links = self.bodies[model].links
        return [
            Transform(
                self.frame(model, link.parent),
                self.frame(model, index),
                np.asarray(link.translation, dtype=float),
                quaternion_xyzw(link.rotation),
            )
            for index, link in enumerate(links)
            if link.parent >= 0 and link.joint_type not in MOVING_JOINTS
        ]

    def _sensors(self, model: str) -> list[Transform]:
        out = []
        for sensor in self.bodies[model].sensors:
            label = sensor_label(sensor)
            frame = schemas.frame_id(model, label)
            self.sensor_frames[(model, label)] = frame
            rotation = _sensor_rotation(sensor)
            translation = np.asarray(sensor.translation, dtype=float)
            out.append(Transform(self.frame(model, sensor.link), frame, translation, quaternion_xyzw(rotation)))
        return out


def _sensor_rotation(sensor: Sensor) -> np.ndarray:
    """A range sensor's frame is its scan's (beams in its xy plane from +x towards +y, as
    sensor_msgs/LaserScan wants); any other sensor's is the sensor's own."""
    rotation = np.asarray(sensor.rotation, dtype=float)
    return rotation @ SCAN_IN_SENSOR if sensor.type == "range" else rotation
