"""Link poses from a root pose and joint values: what a client of the collision service sends.

The simulator already knows every link's pose and sends those; planners and tests that think in
joint values use :func:`link_poses` to turn them into the (n_links, 4, 4) array a query takes.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from hrpsim.bodyinfo import Body, Link
from hrpsim.transforms import axis_angle_matrix


def pose(translation: np.ndarray | list[float] = (0.0, 0.0, 0.0), rotation: np.ndarray | None = None) -> np.ndarray:
    """A 4x4 homogeneous transform."""
    out = np.eye(4)
    out[:3, 3] = np.asarray(translation, dtype=np.float64)
    if rotation is not None:
        out[:3, :3] = rotation
    return out


def _joint_motion(link: Link, q: float) -> np.ndarray:
    motion = np.eye(4)
    if link.joint_type == "rotate":
        motion[:3, :3] = axis_angle_matrix(link.joint_axis, q)
    elif link.joint_type == "slide":
        motion[:3, 3] = np.asarray(link.joint_axis, dtype=np.float64) * q
    return motion


def link_poses(
    body: Body, root: np.ndarray | None = None, joints: Mapping[str, float] | None = None
) -> np.ndarray:
    """World poses (n_links, 4, 4) of every link; joints by name (a joint not named stays at 0; a
    mimic joint follows its master). ``root`` is the root link's world pose (4x4), as a project
    places a model; without it the root sits at its own offset in the file."""
    values = dict(joints or {})
    for link in body.links:
        if link.mimic is not None and link.joint_label not in values:
            master = values.get(link.mimic.joint, 0.0)
            values[link.joint_label] = link.mimic.multiplier * master + link.mimic.offset
    poses = np.empty((len(body.links), 4, 4))
    for i, link in enumerate(body.links):
        if link.parent < 0 and root is not None:
            poses[i] = np.asarray(root, dtype=np.float64)
            continue
        offset = pose(link.translation, link.rotation)
        parent = np.eye(4) if link.parent < 0 else poses[link.parent]
        poses[i] = parent @ offset @ _joint_motion(link, values.get(link.joint_label, 0.0))
    return poses
