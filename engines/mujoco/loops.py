"""Extra joints (closed kinematic loops) as MuJoCo equality constraints between sites.

- ``ball`` / ``xyz`` (the point of link2 stays on the point of link1): a connect constraint;
- ``hinge`` (only the rotation about the axis through the point is free): two connects, one at
  the point and one a span along the axis (as Choreonoid's own solver pins a hinge: the point, and
  the axis line through a second point);
- ``fixed`` (the links keep the relative pose they start in): a weld of two sites that coincide
  in the starting pose;
- ``xy`` (free along the axis), ``z`` (constrained along the axis only) and ``piston`` (free along
  and about the axis): a light intermediate body on link1 at the point, with the joints that free
  what the type leaves free (a slide along the axis; two slides across it; a slide and a hinge
  along it), connected (``piston``: welded) to link2's point.

Points are in each link's frame; the axis is in link1's frame. In a run, link2's side of a joint
(its point, a hinge's second point, a weld's frame) is where the starting pose puts link1's side,
as ODE takes it (and Choreonoid's ODE simulator); a written model file keeps the file's point2.
"""

from __future__ import annotations

import mujoco
import numpy as np

from hrpsim.bodyinfo import ExtraJoint
from hrpsim.engines.mujoco.geometry import quaternion
from hrpsim.engines.mujoco.layout import ModelLayout, element, helper_body
from hrpsim.errors import ConfigError
from hrpsim.kinematics import forward_kinematics
from hrpsim.placement import root_placement

HINGE_SPAN = 0.05  # m along a hinge's axis between its two connects (Choreonoid's solver uses the same)
TYPES = ("ball", "xyz", "hinge", "fixed", "xy", "z", "piston")


def add_loop(
    spec: mujoco.MjSpec,
    layout: ModelLayout,
    extra: ExtraJoint,
    other: ModelLayout | None = None,
    *,
    runtime: bool = True,
) -> None:
    """``extra`` with link1 in ``layout``'s model and link2 in ``other``'s (default: the same);
    ``runtime``: link2's side from the starting pose, else from the file's point2."""
    other = other or layout
    name = layout.name
    what = f"model {name!r}: extra joint {extra.name!r}"
    if extra.type not in TYPES:
        raise ConfigError(f"{what} has type {extra.type!r}, which no engine can impose")
    i1, i2 = _link_index(layout, extra.link1, what), _link_index(other, extra.link2, what)
    body1, body2 = spec.body(layout.bodies[i1]), spec.body(other.bodies[i2])
    site1, site2 = element(name, extra.name, "1"), element(name, extra.name, "2")
    point1, point2 = np.asarray(extra.point1, float), np.asarray(extra.point2, float)
    axis = np.asarray(extra.axis, float)
    axis = axis / max(np.linalg.norm(axis), 1e-12)
    origin, rotation = _starting_pose(layout, i1, other, i2)
    if runtime:
        point2 = origin + rotation @ point1
    if extra.type in ("ball", "xyz", "hinge"):
        body1.add_site(name=site1, pos=point1)
        body2.add_site(name=site2, pos=point2)
        _equality(spec, mujoco.mjtEq.mjEQ_CONNECT, site1, site2)
        if extra.type == "hinge":
            body1.add_site(name=f"{site1}b", pos=point1 + HINGE_SPAN * axis)
            body2.add_site(name=f"{site2}b", pos=point2 + HINGE_SPAN * rotation @ axis)
            _equality(spec, mujoco.mjtEq.mjEQ_CONNECT, f"{site1}b", f"{site2}b", suffix="axis")
        return
    if extra.type == "fixed":  # with link1's frame where the starting pose puts it
        body1.add_site(name=site1, pos=point1)
        body2.add_site(name=site2, pos=point2, quat=quaternion(rotation))
        _equality(spec, mujoco.mjtEq.mjEQ_WELD, site1, site2)
        return
    frame = _frame_along(axis)
    middle = helper_body(body1, element(name, extra.name), pos=point1, quat=quaternion(frame))
    slide, hinge = mujoco.mjtJoint.mjJNT_SLIDE, mujoco.mjtJoint.mjJNT_HINGE
    free = {
        "xy": [(slide, (0, 0, 1))],
        "z": [(slide, (1, 0, 0)), (slide, (0, 1, 0))],
        "piston": [(slide, (0, 0, 1)), (hinge, (0, 0, 1))],
    }[extra.type]
    for k, (kind, direction) in enumerate(free):
        middle.add_joint(name=element(name, extra.name, f"free{k}"), type=kind, axis=list(direction))
    middle.add_site(name=site1)
    rotation2 = rotation @ frame if extra.type == "piston" else np.eye(3)
    body2.add_site(name=site2, pos=point2, quat=quaternion(rotation2))
    kind = mujoco.mjtEq.mjEQ_WELD if extra.type == "piston" else mujoco.mjtEq.mjEQ_CONNECT
    _equality(spec, kind, site1, site2)


def _link_index(layout: ModelLayout, link: str, what: str) -> int:
    try:
        return layout.info.link_index(link)
    except KeyError:
        raise ConfigError(f"{what} names no link {link!r} in model {layout.name!r}") from None


def _starting_pose(layout1: ModelLayout, i1: int, layout2: ModelLayout, i2: int) -> tuple[np.ndarray, np.ndarray]:
    """Link1's frame in link2's frame in the starting pose (origin, rotation): what a weld keeps,
    where a hinge's axis lies on link2."""
    p1, r1 = _starting_poses(layout1)[i1]
    p2, r2 = _starting_poses(layout2)[i2]
    return r2.T @ (p1 - p2), r2.T @ r1


def _starting_poses(layout: ModelLayout) -> list[tuple[np.ndarray, np.ndarray]]:
    return forward_kinematics(layout.info, *root_placement(layout.config, layout.info), layout.initial_values)


def _equality(spec: mujoco.MjSpec, kind: mujoco.mjtEq, site1: str, site2: str, suffix: str = "") -> None:
    # A loop is a joint, not a spring: the stiffest time constant MuJoCo keeps stable (two time steps)
    # instead of its default 0.02 s, under which a loaded loop sags by millimetres.
    timeconst = 2.0 * spec.option.timestep
    name = site1.rsplit("/", 1)[0]
    spec.add_equality(
        name=f"{name}/{suffix}" if suffix else name,
        type=kind,
        objtype=mujoco.mjtObj.mjOBJ_SITE,
        name1=site1,
        name2=site2,
        solref=[timeconst, 1.0],
    )


def _frame_along(axis: np.ndarray) -> np.ndarray:
    """A rotation whose Z column is ``axis``."""
    helper = np.array([1.0, 0.0, 0.0]) if abs(axis[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    x = np.cross(helper, axis)
    x /= np.linalg.norm(x)
    return np.column_stack([x, np.cross(axis, x), axis])
