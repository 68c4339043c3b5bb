"""Link frames of a model built from its MJCF (native.py), where they differ from MuJoCo's bodies:
a link's frame sits at its joint, ``offset`` from its body's frame, and the massless links of a
body with several joints are posed from their parents by their joint values (a world-frame
velocity of the frame's origin and an angular velocity, as every engine reports them)."""

from __future__ import annotations

import numpy as np

from hrpsim.engines.mujoco.layout import ModelLayout
from hrpsim.kinematics import joint_motion


def offset_frames(
    layout: ModelLayout, positions: np.ndarray, rotations: np.ndarray, velocities: np.ndarray | None
) -> None:
    """Move each body's pose (and velocity: [linear, angular]) to its link's frame, in place."""
    offsets = np.asarray(layout.offsets, float)
    lever = np.einsum("nij,nj->ni", rotations, offsets)
    positions += lever
    if velocities is not None:
        velocities[:, :3] += np.cross(velocities[:, 3:], lever)


def pose_derived(
    layout: ModelLayout,
    values: np.ndarray,
    rates: np.ndarray,
    positions: np.ndarray,
    rotations: np.ndarray,
    velocities: np.ndarray | None,
) -> None:
    """Pose each derived link from its parent (link order: a parent comes first), in place."""
    for index in layout.derived:
        link = layout.info.links[index]
        parent = link.parent
        origin = positions[parent] + rotations[parent] @ np.asarray(link.translation, float)
        frame = rotations[parent] @ np.asarray(link.rotation, float)
        shift, turn = joint_motion(link, float(values[index]))
        positions[index] = origin + frame @ shift
        rotations[index] = frame @ turn
        if velocities is None:
            continue
        axis = frame @ np.asarray(link.joint_axis, float)
        axis = axis / max(float(np.linalg.norm(axis)), 1e-12)
        linear, angular = velocities[parent, :3], velocities[parent, 3:]
        velocities[index, :3] = linear + np.cross(angular, positions[index] - positions[parent])
        velocities[index, 3:] = angular
        if link.joint_type == "rotate":
            velocities[index, 3:] = angular + axis * rates[index]
        elif link.joint_type == "slide":
            velocities[index, :3] += axis * rates[index]
