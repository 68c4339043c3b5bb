"""Forward kinematics over a BodyInfo tree, independent of any physics engine.

Link frames follow hrpsim.bodyinfo: a link's frame is its parent's frame moved by the link's
``translation``/``rotation`` and then by its joint (a rotation about, or a slide along, the
joint axis expressed in the link frame).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from hrpsim.bodyinfo import Body, Link
from hrpsim.errors import RequestError
from hrpsim.transforms import axis_angle_matrix


def joint_motion(link: Link, q: float) -> tuple[np.ndarray, np.ndarray]:
    """(translation, rotation) a joint value adds in the link frame."""
    if link.joint_type == "rotate":
        return np.zeros(3), axis_angle_matrix(link.joint_axis, q)
    if link.joint_type == "slide":
        axis = np.asarray(link.joint_axis, float)
        return axis / max(np.linalg.norm(axis), 1e-12) * q, np.eye(3)
    return np.zeros(3), np.eye(3)


def link_values(body: Body, joints: Mapping[str, float] | None = None) -> list[float]:
    """Per link (link order) its joint value from a {joint name or link name: value} map; mimic
    joints follow their masters."""
    joints = dict(joints or {})
    known = {lk.joint_label for lk in body.links} | {lk.name for lk in body.links}
    unknown = sorted(set(joints) - known)
    if unknown:
        raise RequestError(f"body {body.name!r} has no joint named {', '.join(map(repr, unknown))}")
    values = [float(joints.get(lk.joint_label, joints.get(lk.name, 0.0))) for lk in body.links]
    follow_mimics(body, values)  # a mimic joint has no value of its own
    return values


def starting_joints(body: Body, joints: Mapping[str, float] | None = None) -> dict[str, float]:
    """A model's starting joint values: the project's ``joints:`` (by joint or link name) over the
    model file's own (a Choreonoid body's ``jointAngle``, kept in ``initial_joint_values``)."""
    given = dict(joints or {})
    initial = body.metadata.get("initial_joint_values") or {}
    merged = dict(given)
    for link in body.links:
        label = link.joint_label
        if label in initial and label not in given and link.name not in given:
            merged[label] = float(initial[label])
    return merged


def mimic_masters(body: Body) -> dict[int, int]:
    """{mimic link index: its master's link index} for every mimic joint whose master is known."""
    by_label = {lk.joint_label: i for i, lk in enumerate(body.links)}
    return {
        i: by_label[lk.mimic.joint]
        for i, lk in enumerate(body.links)
        if lk.mimic is not None and lk.mimic.joint in by_label
    }


def follow_mimics(body: Body, values: list[float] | np.ndarray, rates: list[float] | np.ndarray | None = None) -> None:
    """Per link values (and rates), in place: each mimic joint takes ``multiplier * master + offset``
    (its rate ``multiplier * master's rate``)."""
    for index, master in mimic_masters(body).items():
        mimic = body.links[index].mimic
        values[index] = mimic.multiplier * values[master] + mimic.offset
        if rates is not None:
            rates[index] = mimic.multiplier * rates[master]


def forward_kinematics(
    body: Body,
    root_position: np.ndarray,
    root_rotation: np.ndarray,
    values: list[float] | np.ndarray,
) -> list[tuple[np.ndarray, np.ndarray]]:
    """World (position, rotation) of every link's frame, in link order.

    The root link's frame is placed at ``root_position``/``root_rotation`` (the root's own
    ``translation``/``rotation`` are replaced by it); ``values`` holds one joint value per link.
    """
    poses: list[tuple[np.ndarray, np.ndarray]] = []
    for index, link in enumerate(body.links):
        if link.parent < 0:
            p, r = np.asarray(root_position, float).copy(), np.asarray(root_rotation, float).copy()
        else:
            pp, pr = poses[link.parent]
            p = pp + pr @ np.asarray(link.translation, float)
            r = pr @ np.asarray(link.rotation, float)
        dp, dr = joint_motion(link, float(values[index]))
        poses.append((p + r @ dp, r @ dr))
    return poses
