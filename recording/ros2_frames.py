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
from hrpsim.sensor_mounts import sensor_label
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
    """Hamilton products of rows of x y z w quaternions, (n, 4) each."""
    ax, ay, az, aw = a.T
    bx, by, bz, bw = b.T
    return np.column_stack(
        [
            aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw,
            aw * bw - ax * bx - ay * by - az * bz,
        ]
    )


def _rotate(q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Rows of ``v`` (n, 3) turned by the rows of ``q`` (n, 4, x y z w)."""
    u, w = q[:, :3], q[:, 3:]
    return v + 2.0 * np.cross(u, np.cross(u, v) + w * v)


def relative(parent_poses: np.ndarray, child_poses: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each child's pose in its parent's frame, from both in the world: rows x y z qx qy qz qw
    (n, 7) in, translations (n, 3) and quaternions (n, 4) out."""
    inverse = parent_poses[:, 3:] * np.array([-1.0, -1.0, -1.0, 1.0])
    return _rotate(inverse, child_poses[:, :3] - parent_poses[:, :3]), _multiply(inverse, child_poses[:, 3:])


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
            if model in poses:
                out += self._tree(
                    model,
                    poses[model],
                    [
                        i
                        for i, lk in enumerate(self.bodies[model].links)
                        if lk.parent >= 0 and lk.joint_type in MOVING_JOINTS
                    ],
                )
        return out

    def static(self, poses: dict[str, np.ndarray]) -> list[Transform]:
        """/tf_static: fixed links and sensor frames of the robots, and the static models as they
        are in ``poses`` (the first tick's)."""
        out = list(self._fixed)
        for model in self.static_models:
            if model in poses:
                links = self.bodies[model].links
                out += self._tree(model, poses[model], [i for i, lk in enumerate(links) if lk.parent >= 0])
        return out

    def _tree(self, model: str, table: np.ndarray, children: list[int]) -> list[Transform]:
        """The root in the world, and each of ``children`` in its parent link."""
        links = self.bodies[model].links
        out = [Transform(schemas.WORLD_FRAME, self.frame(model, 0), table[0, :3], table[0, 3:])]
        parents = [links[i].parent for i in children]
        translations, rotations = relative(table[parents], table[children])
        for i, parent, t, q in zip(children, parents, translations, rotations, strict=True):
            out.append(Transform(self.frame(model, parent), self.frame(model, i), t, q))
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
