"""Link poses from a root pose and joint values: what a client of the collision service sends.

The simulator already knows every link's pose and sends those; planners and tests that think in
joint values use :func:`link_poses` to turn them into the (n_links, 4, 4) array a query takes.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from hrpsim.bodyinfo import Body
from hrpsim.kinematics import forward_kinematics
from hrpsim.transforms import pose


def link_poses(body: Body, root: np.ndarray | None = None, joints: Mapping[str, float] | None = None) -> np.ndarray:
    """World poses (n_links, 4, 4) of every link; joints by name (a joint not named stays at 0; a
    mimic joint follows its master). ``root`` is the root link's world pose (4x4), as a project
    places a model; without it the root sits at its own offset in the file."""
    values = dict(joints or {})
    for link in body.links:
        if link.mimic is not None and link.joint_label not in values:
            master = values.get(link.mimic.joint, 0.0)
            values[link.joint_label] = link.mimic.multiplier * master + link.mimic.offset
    if root is None:
        root = pose(body.links[0].translation, body.links[0].rotation)
    root = np.asarray(root, dtype=np.float64)
    frames = forward_kinematics(
        body, root[:3, 3], root[:3, :3], [values.get(link.joint_label, 0.0) for link in body.links]
    )
    return np.array([pose(p, r) for p, r in frames]).reshape(len(body.links), 4, 4)
