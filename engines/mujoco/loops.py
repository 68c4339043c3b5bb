"""Extra joints (closed kinematic loops) as MuJoCo equality constraints between sites.

- ``ball`` / ``xyz`` (the point of link2 stays on the point of link1): a connect constraint;
- ``xy`` (free along the axis), ``z`` (constrained along the axis only) and ``piston`` (free along
  and about the axis): a light intermediate body on link1 at the point, with the joints that free
  what the type leaves free (a slide along the axis; two slides across it; a slide and a hinge
  along it), connected (``piston``: welded) to link2's point.

Points are in each link's frame; the axis is in link1's frame.
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


def add_loop(spec: mujoco.MjSpec, layout: ModelLayout, extra: ExtraJoint) -> None:
    info, name = layout.info, layout.name
    what = f"model {name!r}: extra joint {extra.name!r}"
    if extra.type not in ("ball", "xyz", "xy", "z", "piston"):
        raise ConfigError(f"{what} has type {extra.type!r}, which no engine can impose")
    indices = []
    for link in (extra.link1, extra.link2):
        try:
            indices.append(info.link_index(link))
        except KeyError:
            raise ConfigError(f"{what} names no link {link!r}") from None
    i1, i2 = indices
    body1, body2 = spec.body(layout.bodies[i1]), spec.body(layout.bodies[i2])
    site1, site2 = element(name, extra.name, "1"), element(name, extra.name, "2")
    point1 = np.asarray(extra.point1, float)
    if extra.type in ("ball", "xyz"):
        body1.add_site(name=site1, pos=point1)
        body2.add_site(name=site2, pos=np.asarray(extra.point2, float))
        _equality(spec, mujoco.mjtEq.mjEQ_CONNECT, site1, site2)
        return
    axis = np.asarray(extra.axis, float)
    frame = _frame_along(axis / max(np.linalg.norm(axis), 1e-12))
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
    rotation2 = np.eye(3)
    if extra.type == "piston":  # a weld aligns the frames: give link2's site the middle's orientation now
        poses = forward_kinematics(info, *root_placement(layout.config, info), layout.initial_values)
        rotation2 = poses[i2][1].T @ poses[i1][1] @ frame
    body2.add_site(name=site2, pos=np.asarray(extra.point2, float), quat=quaternion(rotation2))
    kind = mujoco.mjtEq.mjEQ_WELD if extra.type == "piston" else mujoco.mjtEq.mjEQ_CONNECT
    _equality(spec, kind, site1, site2)


def _equality(spec: mujoco.MjSpec, kind: mujoco.mjtEq, site1: str, site2: str) -> None:
    # A loop is a joint, not a spring: the stiffest time constant MuJoCo keeps stable (two time steps)
    # instead of its default 0.02 s, under which a loaded loop sags by millimetres.
    timeconst = 2.0 * spec.option.timestep
    spec.add_equality(
        name=site1.rsplit("/", 1)[0],
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
