"""Extra joints (closed kinematic loops) as ODE constraints.

Which types work through pyode (which lacks ODE's piston and PU joints):

- ``ball`` and ``xyz`` (the point of link2 stays on the point of link1): an ODE ball joint;
- ``xy`` (the points coincide across the plane normal to the axis; free along the axis) and
  ``piston`` (free along and about the axis): a light intermediate body that slides along the
  axis on link1 (slider joint) and holds link2 by a ball joint (``xy``) or by a hinge about
  the axis (``piston``);
- ``hinge`` (only the rotation about the axis through the point is free): an ODE hinge joint
  anchored at link1's point, about link1's axis;
- ``fixed`` (the links keep the relative pose they start in): an ODE fixed joint;
- ``z`` (the points coincide along the axis only) has no ODE equivalent here: refused with an
  error naming the joint.

Points are in each link's frame; the axis is in link1's frame. As in Choreonoid's ODE simulator,
ODE takes link2's side of a joint (its anchor, its axis) where the starting pose puts it.
"""

from __future__ import annotations

import numpy as np
import ode

from hrpsim.bodyinfo import ExtraJoint
from hrpsim.engines.ode.model import OdeModel
from hrpsim.errors import ConfigError

SUPPORTED = ("ball", "xyz", "xy", "piston", "hinge", "fixed")
LINK_MASS = 1e-3  # kg of the intermediate body of xy/piston joints
LINK_RADIUS = 0.05  # m: gives it inertia enough that redundant planar loops stay well conditioned (ODE aborts on NaN)


def _world_point(model: OdeModel, link_name: str, point: np.ndarray, what: str) -> tuple[int, np.ndarray]:
    try:
        index = model.info.link_index(link_name)
    except KeyError:
        raise ConfigError(f"model {model.name!r}: {what} names no link {link_name!r}") from None
    p, r = model.link_origin(model.links[index])
    return index, p + r @ np.asarray(point, float)


def build_extra_joint(model: OdeModel, extra: ExtraJoint, world: ode.World) -> list[ode.Joint]:
    """The ODE joints (and intermediate body) that impose ``extra``; kept alive by the caller."""
    return build_joint_between(model, model, extra, world)


def build_joint_between(model1: OdeModel, model2: OdeModel, extra: ExtraJoint, world: ode.World) -> list[ode.Joint]:
    """``extra`` with its link1 in ``model1`` and its link2 in ``model2`` (the same model or two)."""
    what = f"extra joint {extra.name!r}"
    if extra.type not in SUPPORTED:
        raise ConfigError(
            f"model {model1.name!r}: {what} has type {extra.type!r}, which this simulator "
            f"cannot impose (supported: {', '.join(SUPPORTED)})"
        )
    i1, p1 = _world_point(model1, extra.link1, extra.point1, what)
    i2, _ = _world_point(model2, extra.link2, extra.point2, what)
    b1, b2 = model1.links[i1].body, model2.links[i2].body
    if b1 is None and b2 is None:
        return []
    b1 = b1 if b1 is not None else ode.environment
    b2 = b2 if b2 is not None else ode.environment
    anchor = tuple(float(v) for v in p1)
    if extra.type in ("ball", "xyz"):
        ball = ode.BallJoint(world)
        ball.attach(b2, b1)
        ball.setAnchor(anchor)
        return [ball]
    if extra.type == "fixed":
        weld = ode.FixedJoint(world)
        weld.attach(b1, b2)
        weld.setFixed()
        return [weld]
    _, r1 = model1.link_origin(model1.links[i1])
    axis = r1 @ np.asarray(extra.axis, float)
    axis = tuple(float(v) for v in axis / max(np.linalg.norm(axis), 1e-12))
    if extra.type == "hinge":
        hinge = ode.HingeJoint(world)
        hinge.attach(b1, b2)
        hinge.setAnchor(anchor)
        hinge.setAxis(axis)
        return [hinge]
    middle = ode.Body(world)
    mass = ode.Mass()
    mass.setSphereTotal(LINK_MASS, LINK_RADIUS)
    middle.setMass(mass)
    middle.setPosition(anchor)
    slider = ode.SliderJoint(world)
    slider.attach(middle, b1)
    slider.setAxis(axis)
    if extra.type == "xy":
        holder = ode.BallJoint(world)
        holder.attach(b2, middle)
        holder.setAnchor(anchor)
    else:
        holder = ode.HingeJoint(world)
        holder.attach(b2, middle)
        holder.setAnchor(anchor)
        holder.setAxis(axis)
    return [slider, holder, middle]
