"""How far a closed loop (an extra joint) has opened, from the two links' poses.

The engines close a loop where the starting pose puts it, as Choreonoid's ODE simulator does:
link2's side of the joint (its point, its axis, a fixed joint's frame) is where link1's side lies
on link2 in the starting pose (docs/physics.md, *Extra joints*). A loop's **gap** is how far
link1's point has moved from there, in the directions the joint holds (m); its **angle** is how
far the directions it holds have turned apart (rad):

| type | gap | angle |
|---|---|---|
| ``ball``, ``xyz`` | the whole distance | - |
| ``hinge`` | the whole distance | between link1's axis and link2's |
| ``fixed`` | the whole distance | the relative rotation |
| ``xy`` | across the axis | - |
| ``piston`` | across the axis | between link1's axis and link2's |
| ``z`` | along the axis | - |

Points are in each link's frame, the axis in link1's.
"""

from __future__ import annotations

import math

import numpy as np

from hrpsim.bodyinfo import ExtraJoint

Pose = tuple[np.ndarray, np.ndarray]  # (origin, rotation) of a link frame in the world


class LoopWatch:
    """One extra joint, with link2's side of it where the starting pose puts it."""

    def __init__(self, extra: ExtraJoint, start1: Pose, start2: Pose) -> None:
        self.kind = extra.type
        self.point1 = np.asarray(extra.point1, float)
        axis = np.asarray(extra.axis, float)
        self.axis = axis / max(float(np.linalg.norm(axis)), 1e-12)
        (o1, r1), (o2, r2) = start1, start2
        self.held_rotation = r2.T @ r1  # link1's frame in link2's at the start
        self.held_point = r2.T @ (o1 + r1 @ self.point1 - o2)

    def gap(self, pose1: Pose, pose2: Pose) -> tuple[float, float]:
        """(gap m, angle rad) of the loop with its links at these poses."""
        (o1, r1), (o2, r2) = pose1, pose2
        gap = o1 + r1 @ self.point1 - (o2 + r2 @ self.held_point)
        if self.kind == "fixed":
            return float(np.linalg.norm(gap)), _rotation_angle((r2 @ self.held_rotation).T @ r1)
        axis1 = r1 @ self.axis
        along = float(gap @ axis1)
        if self.kind in ("xy", "piston"):
            gap = gap - axis1 * along
        distance = abs(along) if self.kind == "z" else float(np.linalg.norm(gap))
        angle = 0.0
        if self.kind in ("hinge", "piston"):
            angle = math.acos(max(-1.0, min(1.0, float(axis1 @ (r2 @ self.held_rotation @ self.axis)))))
        return distance, angle


def _rotation_angle(rotation: np.ndarray) -> float:
    return math.acos(max(-1.0, min(1.0, (float(np.trace(rotation)) - 1.0) / 2.0)))
