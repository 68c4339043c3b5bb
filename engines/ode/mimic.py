"""Mimic joints (URDF ``<mimic>``, COLLADA ``<formula>``) follow their master in ODE.

A mimic joint keeps ``q = multiplier * q_master + offset``. ODE has no joint-space gear constraint,
but a gear pair is a contact (:mod:`hrpsim.engines.ode.gear`), so each mimic is held by a *gear
contact*, made afresh every step: a contact joint between the two bodies whose relative motion the
master and the mimic make, at the point P and along the direction n where that relative velocity
reads ``c (dq - multiplier dq_master)``. Its one friction direction is n with no force limit (a
two-sided row), its target velocity takes the relation's error out within the step
(``-c (q - multiplier q_master - offset) / dt``), and its normal's row, at right angles to every
motion the two joints give P and given way by a large CFM, never pushes.

ODE solves that row with every other (the links' joints, the floor's contacts), so the coupling is
implicit and two-way: the master feels the mimic's load, times the multiplier, as through gears,
and nothing lags a step. Where no gear contact fits (master and mimic neither siblings nor one
carrying the other, parallel sibling sliders, coaxial sibling hinges; or, for a step, a pose that
leaves the contact too oblique) the mimic's own motor follows the master one way instead: target
velocity ``multiplier dq_master - error / dt``, force limit MIMIC_FMAX. docs/physics.md (Mimic
joints) says why that can go unstable under load and the gear contact cannot.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import ode

from hrpsim.engines.ode import params as odeparams
from hrpsim.engines.ode.gear import ZERO, JointMotion, dot, gear_bodies, gear_mesh, minus, times
from hrpsim.engines.ode.model import LinkSim, OdeModel
from hrpsim.kinematics import mimic_masters

log = logging.getLogger("hrpsim.simserver")

MIMIC_FMAX = 1e7  # N m (N): the one-way motor's limit, rigid for any load, bounded for ODE's LCP
GEAR_FLAGS = odeparams.CONTACT_FDIR1 | odeparams.CONTACT_MOTION1 | odeparams.CONTACT_MU2 | odeparams.CONTACT_SOFT_CFM
NORMAL_CFM = 1.0  # (m/s)/N: the gear contact's normal row gives way to any push (it is never meant to act)


@dataclass
class _Follower:
    mimic: LinkSim
    master: LinkSim
    multiplier: float
    offset: float
    bodies: tuple[ode.Body, ode.Body | None] | None = None  # the gear contact's; None: the one-way motor
    signs: tuple[float, float] = (1.0, 1.0)  # mimic, master: +1 moves the first body against the second
    one_way: bool = False  # held by its motor at least once (said in the log)


class MimicJoints:
    """The mimic joints of one model and the constraints that keep them on their masters."""

    def __init__(self, model: OdeModel, world: ode.World, timestep: float) -> None:
        self.model = model
        self.world = world
        self.inv_dt = 1.0 / timestep
        self.group = ode.JointGroup()  # this step's gear contacts
        self.followers = [
            self._follower(index, master)
            for index, master in mimic_masters(model.info).items()
            if model.links[index].kind in ("hinge", "slider") and model.links[master].kind in ("hinge", "slider")
        ]

    def _follower(self, index: int, master: int) -> _Follower:
        model = self.model
        link = model.info.links[index]
        follower = _Follower(model.links[index], model.links[master], link.mimic.multiplier, link.mimic.offset)
        found = gear_bodies(model.info.links, index, master)
        if found is not None:
            first, second, follower.signs = found
            follower.bodies = (model.links[first].body, model.links[second].body if second >= 0 else None)
        return follower

    def apply(self) -> None:
        """Make this step's gear contacts, or set the one-way motors' targets (before the step)."""
        model = self.model
        self.group.empty()
        for f in self.followers:
            error = model.joint_value(f.mimic) - (f.multiplier * model.joint_value(f.master) + f.offset)
            if f.bodies is not None and self._gear(f, error):
                f.mimic.joint.setParam(odeparams.FMAX, 0.0)
                continue
            if not f.one_way:
                f.one_way = True
                self._say_one_way(f)
            f.mimic.joint.setParam(odeparams.FMAX, MIMIC_FMAX)
            f.mimic.joint.setParam(odeparams.VEL, f.multiplier * model.joint_rate(f.master) - error * self.inv_dt)

    def _say_one_way(self, f: _Follower) -> None:
        """Once per mimic: it is held one way (the first time no gear contact fits)."""
        why = (
            "no two links are moved against each other by those two joints alone"
            if f.bodies is None
            else "no gear contact fits their motions in this pose (sliders on parallel axes and hinges on one "
            "axis show only one combination of the two rates)"
        )
        log.info(
            "%s: mimic joint %r follows %r one way, by its motor: %s (docs/physics.md, Mimic joints)",
            self.model.where(f.mimic.index),
            f.mimic.link.joint_label,
            f.master.link.joint_label,
            why,
        )

    def _gear(self, f: _Follower, error: float) -> bool:
        """Make the gear contact that holds ``f`` this step; False where this pose admits none."""
        body1, body2 = f.bodies
        mimic, master = _motion(f.mimic, f.signs[0]), _motion(f.master, f.signs[1])

        def scale() -> float:  # a length of the mechanism: the bodies' distance or the anchors', the larger
            span = minus(body1.getPosition(), body2.getPosition()) if body2 is not None else ZERO
            anchors = minus(mimic.anchor, master.anchor)
            return max(dot(span, span), dot(anchors, anchors)) ** 0.5

        mesh = gear_mesh(mimic, master, f.multiplier, scale)
        if mesh is None:
            return False
        contact = ode.Contact()
        contact.setMode(GEAR_FLAGS)
        contact.setMu(ode.Infinity)
        contact.setMu2(0.0)
        contact.setSoftCFM(NORMAL_CFM)
        contact.setContactGeomParams(mesh.point, mesh.normal, 0.0)
        contact.setFDir1(mesh.direction)
        contact.setMotion1(-mesh.leverage * error * self.inv_dt)
        ode.ContactJoint(self.world, self.group, contact).attach(body1, body2)
        return True


def _motion(sim: LinkSim, sign: float) -> JointMotion:
    """The joint's unit motion as ODE has it now (hinge: axis and anchor; slider: axis)."""
    axis = times(sign, sim.joint.getAxis())
    if sim.kind == "slider":
        return JointMotion(ZERO, sim.body.getPosition(), axis)
    return JointMotion(axis, sim.joint.getAnchor(), ZERO)
