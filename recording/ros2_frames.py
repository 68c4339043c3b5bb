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
from typing import Any

import numpy as np

from hrpsim.bodyinfo import Body, Sensor
from hrpsim.errors import RecordingError
from hrpsim.recording import schemas
from hrpsim.recording.sensor_messages import SCAN_IN_SENSOR
from hrpsim.sensor_mounts import sensor_label
from hrpsim.transforms import matrix_quaternion

MOVING_JOINTS = ("rotate", "slide", "free")  # URDF writes the others (fixed, crawler) as fixed


@dataclass(frozen=True)
class Transforms:
    """A TFMessage's transforms: each row of ``values`` (x y z qx qy qz qw) is ``frames``' child
    in its parent."""

    frames: tuple[tuple[str, str], ...]  # (parent, child)
    values: np.ndarray  # (n, 7)


@dataclass(frozen=True)
class _LinkTree:
    """A model's root in the world, then each of ``children`` (link indices) in its parent link."""

    frames: tuple[tuple[str, str], ...]
    children: np.ndarray
    parents: np.ndarray

    def transforms(self, tables: np.ndarray) -> np.ndarray:
        """(ticks, frames, 7) from the model's link poses in the world at each tick, (ticks,
        links, 7) x y z qx qy qz qw: all the ticks' links in one pass of each numpy call."""
        ticks = len(tables)
        values = np.empty((ticks, len(self.frames), 7))
        values[:, 0] = tables[:, 0]
        parents, children = tables[:, self.parents].reshape(-1, 7), tables[:, self.children].reshape(-1, 7)
        translations, rotations = relative(parents, children)
        values[:, 1:, :3] = translations.reshape(ticks, -1, 3)
        values[:, 1:, 3:] = rotations.reshape(ticks, -1, 4)
        return values


def quaternion_xyzw(rotation: np.ndarray) -> np.ndarray:
    w, x, y, z = matrix_quaternion(np.asarray(rotation, dtype=float))
    return np.array([x, y, z, w])


# The products below are numpy's elementwise products and sums, in the order the formulas
# write them, so the bag's numbers stay the same bit for bit; taken a whole table at a time,
# since a robot's 30 links make each numpy call cost its overhead, not its arithmetic.
# Hamilton product, column c (x y z w) = sum over terms k, left to right, of
# a[_PRODUCT_A[k]] * _PRODUCT_SIGN[k][c] * b[_PRODUCT_B[k][c]] (a negated product is exact):
#   x = aw bx + ax bw + ay bz - az by      y = aw by - ax bz + ay bw + az bx
#   z = aw bz + ax by - ay bx + az bw      w = aw bw - ax bx - ay by - az bz
_PRODUCT_A = np.repeat([3, 0, 1, 2], 4)
_PRODUCT_SIGN = np.array([[1, 1, 1, 1], [1, -1, 1, -1], [1, 1, -1, -1], [-1, 1, 1, -1]], dtype=float).ravel()
_PRODUCT_B = np.array([[0, 1, 2, 3], [3, 2, 1, 0], [2, 3, 0, 1], [1, 0, 3, 2]]).ravel()
_CONJUGATE = np.array([-1.0, -1.0, -1.0, 1.0])  # x y z w: a unit quaternion's inverse
# cross product, column c = a[_CROSS_A[c]] b[_CROSS_B[c]] - a[_CROSS_A[c + 3]] b[_CROSS_B[c + 3]], as np.cross
_CROSS_A = np.array([1, 2, 0, 2, 0, 1])
_CROSS_B = np.array([2, 0, 1, 1, 2, 0])


def _multiply(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Hamilton products of rows of x y z w quaternions, (n, 4) each."""
    terms = (a[:, _PRODUCT_A] * _PRODUCT_SIGN * b[:, _PRODUCT_B]).reshape(-1, 4, 4)
    return terms[:, 0] + terms[:, 1] + terms[:, 2] + terms[:, 3]


def _cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Cross products of rows, (n, 3) each."""
    products = a[:, _CROSS_A] * b[:, _CROSS_B]
    return products[:, :3] - products[:, 3:]


def _rotate(q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Rows of ``v`` (n, 3) turned by the rows of ``q`` (n, 4, x y z w)."""
    u, w = q[:, :3], q[:, 3:]
    return v + 2.0 * _cross(u, _cross(u, v) + w * v)


def relative(parent_poses: np.ndarray, child_poses: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each child's pose in its parent's frame, from both in the world: rows x y z qx qy qz qw
    (n, 7) in, translations (n, 3) and quaternions (n, 4) out."""
    inverse = parent_poses[:, 3:] * _CONJUGATE
    return _rotate(inverse, child_poses[:, :3] - parent_poses[:, :3]), _multiply(inverse, child_poses[:, 3:])


class FrameTree:
    """Which transforms of a set of models go on /tf and which on /tf_static."""

    def __init__(self, bodies: dict[str, Body], robots: list[str]) -> None:
        self.bodies = bodies
        self.robots = [r for r in robots if r in bodies]
        self.static_models = [m for m in bodies if m not in self.robots]
        self.sensor_frames: dict[tuple[str, str], str] = {}  # (model, sensor label) -> frame
        # each robot's fixed links, then its sensors' frames
        self._fixed = _joined([part for m in self.robots for part in (self._fixed_links(m), self._sensors(m))])
        # worked out once: /tf has the same frames every tick, only the numbers change
        self._moving = {model: self._link_tree(model, moving_only=True) for model in self.robots}

    def frame(self, model: str, link_index: int) -> str:
        return schemas.frame_id(model, self.bodies[model].links[link_index].name)

    def moving_models(self, poses: dict[str, np.ndarray]) -> tuple[str, ...]:
        """The robots of a tick's link poses, which /tf holds, each (links, 7) as its body."""
        models = tuple(model for model in self.robots if model in poses)
        for model in models:
            if poses[model].shape != (len(self.bodies[model].links), 7):
                raise RecordingError(
                    f"{model}: link poses of shape {poses[model].shape} for {len(self.bodies[model].links)} links"
                )
        return models

    def moving_frames(self, models: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
        """The (parent, child) frames of /tf for ``models``, in the order of ``moving``'s values."""
        return tuple(frame for model in models for frame in self._moving[model].frames)

    def moving(self, models: tuple[str, ...], poses: list[dict[str, np.ndarray]]) -> np.ndarray:
        """/tf of several ticks, (ticks, frames, 7) x y z qx qy qz qw, from each tick's link poses in
        the world ((links, 7) per model, ``models`` in each)."""
        if not models:
            return np.zeros((len(poses), 0, 7))
        return np.concatenate(
            [self._moving[model].transforms(np.stack([tick[model] for tick in poses])) for model in models], axis=1
        )

    def static(self, poses: dict[str, np.ndarray]) -> Transforms:
        """/tf_static: fixed links and sensor frames of the robots, and the static models as they
        are in ``poses`` (the first tick's)."""
        trees = []
        for model in self.static_models:
            if model in poses:
                tree = self._link_tree(model, moving_only=False)
                trees.append(Transforms(tree.frames, tree.transforms(poses[model][np.newaxis])[0]))
        return _joined([self._fixed, *trees])

    def _link_tree(self, model: str, *, moving_only: bool) -> _LinkTree:
        links = self.bodies[model].links
        children = [
            i for i, lk in enumerate(links) if lk.parent >= 0 and (lk.joint_type in MOVING_JOINTS or not moving_only)
        ]
        parents = [links[i].parent for i in children]
        frames = [(schemas.WORLD_FRAME, self.frame(model, 0))]
        frames += [(self.frame(model, p), self.frame(model, c)) for c, p in zip(children, parents, strict=True)]
        return _LinkTree(tuple(frames), np.array(children, dtype=np.intp), np.array(parents, dtype=np.intp))

    def _fixed_links(self, model: str) -> Transforms:
        links = self.bodies[model].links
        fixed = [i for i, lk in enumerate(links) if lk.parent >= 0 and lk.joint_type not in MOVING_JOINTS]
        frames = tuple((self.frame(model, links[i].parent), self.frame(model, i)) for i in fixed)
        return Transforms(frames, _rows([(links[i].translation, links[i].rotation) for i in fixed]))

    def _sensors(self, model: str) -> Transforms:
        frames, mounts = [], []
        for sensor in self.bodies[model].sensors:
            label = sensor_label(sensor)
            frame = schemas.frame_id(model, label)
            self.sensor_frames[(model, label)] = frame
            frames.append((self.frame(model, sensor.link), frame))
            mounts.append((sensor.translation, _sensor_rotation(sensor)))
        return Transforms(tuple(frames), _rows(mounts))


def _rows(mounts: list[tuple[Any, Any]]) -> np.ndarray:
    """(translation, rotation matrix) pairs as rows x y z qx qy qz qw."""
    rows = [np.concatenate([np.asarray(t, dtype=float), quaternion_xyzw(r)]) for t, r in mounts]
    return np.array(rows, dtype=float).reshape(-1, 7)


def _joined(parts: list[Transforms]) -> Transforms:
    if len(parts) == 1:
        return parts[0]
    frames = tuple(frame for part in parts for frame in part.frames)
    return Transforms(frames, np.concatenate([part.values for part in parts]) if parts else np.zeros((0, 7)))


def _sensor_rotation(sensor: Sensor) -> np.ndarray:
    """A range sensor's frame is its scan's (beams in its xy plane from +x towards +y, as
    sensor_msgs/LaserScan wants); any other sensor's is the sensor's own."""
    rotation = np.asarray(sensor.rotation, dtype=float)
    return rotation @ SCAN_IN_SENSOR if sensor.type == "range" else rotation
