"""Mimic joints (URDF ``<mimic>``, COLLADA ``<formula>``) follow their master in ODE.

A mimic joint's value is ``multiplier * q_master + offset``. pyode has no gear constraint, so the
mimic's own joint motor is slaved to the master every step, as the high-gain drive does: its
target velocity brings the mimic onto the relation within one step
(``multiplier * dq_master + (multiplier * q_master + offset - q) / dt``) with a force limit large
enough to be rigid. The coupling is one way: the mimic follows the master, but the load on the
mimic reaches the master only through the links they share, not through the relation itself
(Gazebo's mimic-joint plugin behaves the same way).
"""

from __future__ import annotations

from dataclasses import dataclass

from hrpsim.engines.ode import params as odeparams
from hrpsim.engines.ode.model import LinkSim, OdeModel
from hrpsim.kinematics import mimic_masters

MIMIC_FMAX = 1e7  # N m (N): rigid for any load a model meets, bounded so ODE's LCP stays a box problem


@dataclass
class _Follower:
    mimic: LinkSim
    master: LinkSim
    multiplier: float
    offset: float


class MimicJoints:
    """The mimic joints of one model and the motor targets that keep them on their masters."""

    def __init__(self, model: OdeModel, timestep: float) -> None:
        self.model = model
        self.inv_dt = 1.0 / timestep
        self.followers = [
            _Follower(
                model.links[index],
                model.links[master],
                model.info.links[index].mimic.multiplier,
                model.info.links[index].mimic.offset,
            )
            for index, master in mimic_masters(model.info).items()
            if model.links[index].kind in ("hinge", "slider")
        ]
        for follower in self.followers:
            follower.mimic.joint.setParam(odeparams.FMAX, MIMIC_FMAX)

    def apply(self) -> None:
        """Set each mimic's motor target for the coming step (before the step)."""
        model = self.model
        for f in self.followers:
            target = f.multiplier * model.joint_value(f.master) + f.offset
            rate = f.multiplier * model.joint_rate(f.master)
            f.mimic.joint.setParam(odeparams.VEL, rate + (target - model.joint_value(f.mimic)) * self.inv_dt)
