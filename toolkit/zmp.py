"""Zero moment point: from the model's dynamics, and from the force sensors' readings.

Both return the point (x, y, ``height``) of the horizontal plane z = ``height`` (world frame, m)
about which the contact wrench has no horizontal moment; ``None`` when the vertical force is too
small for one to exist (the robot is in the air).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from hrpsim.errors import NotFound
from hrpsim.toolkit.model_build import link_inertia

if TYPE_CHECKING:
    from hrpsim.toolkit.model import RobotModel

MIN_NORMAL_FORCE = 1e-6  # N: below this there is no support and no ZMP


def zmp_of_wrench(force: np.ndarray, moment: np.ndarray, height: float = 0.0) -> np.ndarray | None:
    """The ZMP of a contact wrench (world frame, ``moment`` about the world origin) on z = ``height``."""
    fz = float(force[2])
    if fz < MIN_NORMAL_FORCE:
        return None
    x = (height * force[0] - moment[1]) / fz
    y = (moment[0] + height * force[1]) / fz
    return np.array([x, y, height])


def model_zmp(model: RobotModel, ddq: Any = None, *, height: float = 0.0) -> np.ndarray | None:
    """The ZMP the model's motion needs: the wrench the ground must give the root so that the robot
    moves with accelerations ``ddq`` (nv; default zero: the static ZMP, under the centre of mass)."""
    if not model.free_root:
        raise NotFound(f"model {model.body.name!r} has a fixed root: it stands on no ground, so it has no ZMP")
    wrench = model.inverse_dynamics(np.zeros(model.nv) if ddq is None else ddq)[:6]
    root = model.root_pose
    force = root.rotation @ wrench[:3]
    moment = root.rotation @ wrench[3:] + np.cross(root.position, force)
    return zmp_of_wrench(force, moment, height)


def sensor_zmp(
    model: RobotModel, state: Any, *, sensors: list[str] | None = None, height: float = 0.0, feet: bool = True
) -> np.ndarray | None:
    """The ZMP from force sensor readings (``state``: a controller's; default: every force sensor).

    A reading is the force and moment ([fx, fy, fz, tx, ty, tz], sensor frame) the link carrying
    the sensor receives from below. With ``feet`` the weight of that link and what hangs from it
    (the foot, below an ankle sensor) is added, standing still: the ZMP of the whole robot.

    None too when every reading is exactly zero: no force has been measured yet (the engines'
    force sensors read zeros until a step has measured one, at the first ticks of a run)."""
    body = model.body
    names = sensors if sensors is not None else [s.name for s in body.sensors if s.type == "force"]
    readings = {name: np.asarray(state.sensor(name), float) for name in names}
    if not any(reading.any() for reading in readings.values()):
        return None
    force, moment = np.zeros(3), np.zeros(3)
    gravity = np.asarray(model.pin_model.gravity.linear, float)
    for name, reading in readings.items():
        pose = model.sensor_pose(name)
        f = pose.rotation @ reading[:3]
        force += f
        moment += pose.rotation @ reading[3:] + np.cross(pose.position, f)
        if feet:
            mass, centre = _beyond(model, _sensor_link(model, name))
            force -= mass * gravity
            moment -= np.cross(centre, mass * gravity)
    return zmp_of_wrench(force, moment, height)


def _sensor_link(model: RobotModel, name: str) -> int:
    for sensor in model.body.sensors:
        if sensor.name == name:
            return sensor.link
    raise NotFound(f"model {model.body.name!r} has no sensor named {name!r}")


def _beyond(model: RobotModel, index: int) -> tuple[float, np.ndarray]:
    """Mass and world centre of link ``index`` and every link below it."""
    body = model.body
    stack, mass, moment = [index], 0.0, np.zeros(3)
    while stack:
        i = stack.pop()
        inertia = link_inertia(body.links[i], body.name)
        pose = model.link_pose(body.links[i].name)
        mass += inertia.mass
        moment += inertia.mass * (pose.rotation @ inertia.lever + pose.position)
        stack.extend(body.children(i))
    return mass, moment / mass
