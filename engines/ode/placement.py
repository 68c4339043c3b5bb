"""Setting a model's configuration by hand (OpenHRP's setCharacterAllLinkData): joint values and
rates and the root's pose and velocity become every link body's pose and velocity in ODE."""

from __future__ import annotations

import numpy as np

from hrpsim.engines.ode.geometry import ode_rotation
from hrpsim.engines.ode.model import OdeModel
from hrpsim.kinematics import follow_mimics, forward_kinematics


def current_link_values(model: OdeModel) -> tuple[np.ndarray, np.ndarray]:
    """Per link (link order) its joint value and rate now."""
    values = np.array([model.joint_value(sim) for sim in model.links])
    rates = np.array([model.joint_rate(sim) for sim in model.links])
    return values, rates


def place(
    model: OdeModel,
    values: np.ndarray,
    rates: np.ndarray,
    root_position: np.ndarray,
    root_rotation: np.ndarray,
    root_linear: np.ndarray,
    root_angular: np.ndarray,
) -> None:
    """Move every link body to the configuration given per link (values, rates) and root state;
    mimic joints take their masters' values whatever was given for them."""
    follow_mimics(model.info, values, rates)
    poses = forward_kinematics(model.info, root_position, root_rotation, values)
    velocities: list[tuple[np.ndarray, np.ndarray]] = []
    for index, sim in enumerate(model.links):
        p, r = poses[index]
        link = sim.link
        if link.parent < 0:
            v, w = np.asarray(root_linear, float), np.asarray(root_angular, float)
        else:
            vp, wp = velocities[link.parent]
            v = vp + np.cross(wp, p - poses[link.parent][0])
            w = wp.copy()
        axis = r @ sim.axis
        if link.joint_type == "rotate":
            w = w + axis * rates[index]
        elif link.joint_type == "slide":
            v = v + axis * rates[index]
        velocities.append((v, w))
        if sim.body is None:
            continue
        lever = r @ sim.com
        sim.body.setRotation(ode_rotation(r))
        sim.body.setPosition(tuple(float(x) for x in p + lever))
        sim.body.setLinearVel(tuple(float(x) for x in v + np.cross(w, lever)))
        sim.body.setAngularVel(tuple(float(x) for x in w))
    model.sync_turns(values)
