"""Why a link exploded, when a joint's gains are the likely cause: the advice every engine adds to its
"non-finite or exploding state" error.

A controller's explicit PD law on a joint of effective inertia I, its torque held for h seconds,
explodes beyond D = 2 I / h or P = 4 I / h^2 - 2 D / h (hrpsim.pd_stability). The engine knows the
joint that moves the exploding link, the links it carries and its rotor inertia, and its own step; it
does not know the controller's gains, so it says what they must stay under, and how to get there.
"""

from __future__ import annotations

import numpy as np

from hrpsim.bodyinfo import Body
from hrpsim.engines.base import Engine
from hrpsim.kinematics import forward_kinematics, link_values, starting_joints
from hrpsim.pd_stability import max_damping, max_stiffness

_UNITS = {"rotate": ("kg m^2", "N m s/rad", "N m/rad"), "slide": ("kg", "N s/m", "N/m")}


def driving_joint(body: Body, link: int) -> int | None:
    """The link itself or its nearest ancestor with a rotate or slide joint (None: only the root moves it)."""
    while link >= 0:
        if body.links[link].joint_type in _UNITS:
            return link
        link = body.links[link].parent
    return None


def subtree(body: Body, link: int) -> list[int]:
    inside = {link}
    for index, candidate in enumerate(body.links):  # parents come before their children
        if candidate.parent in inside:
            inside.add(index)
    return sorted(inside)


def joint_inertia(body: Body, joint: int) -> tuple[float, float]:
    """(links, rotor): the inertia about (rotate) or mass along (slide) the joint of the links it
    carries, with everything else held, at the model's starting pose (an exploded state's poses mean
    nothing); and its reflected rotor inertia."""
    link = body.links[joint]
    poses = forward_kinematics(body, np.zeros(3), np.eye(3), link_values(body, starting_joints(body)))
    origin, rotation = poses[joint]
    axis = rotation @ (np.asarray(link.joint_axis, float) / max(np.linalg.norm(link.joint_axis), 1e-12))
    total = 0.0
    for index in subtree(body, joint):
        moved = body.links[index]
        if link.joint_type == "slide":
            total += moved.mass
            continue
        position, r = poses[index]
        lever = np.cross(axis, position + r @ np.asarray(moved.com, float) - origin)
        total += float(axis @ (r @ np.asarray(moved.inertia, float) @ r.T) @ axis) + moved.mass * float(lever @ lever)
    return total, float(link.reflected_inertia)


def gain_advice(engine: Engine, robot: str, link: int) -> str:
    """A sentence on the joint that moves ``link`` in torque mode: its inertia and the gains an explicit
    PD law on it must stay under at this step; empty where no torque-mode joint moves the link."""
    body = engine.body(robot)
    joint = driving_joint(body, link)
    if joint is None or body.links[joint].joint_id < 0:
        return ""
    name = body.links[joint].joint_label
    modes = engine.drive_modes(robot)
    names = body.joint_names
    if name not in names or modes[names.index(name)] != "torque":
        return ""
    links, rotor = joint_inertia(body, joint)
    inertia, h = links + rotor, engine.timestep
    unit, damping_unit, stiffness_unit = _UNITS[body.links[joint].joint_type]
    shrink = "D's in proportion, P's with its square"
    return (
        f"; joint {name!r}, in torque mode, moves about {inertia:.3g} {unit} (links {links:.3g}, rotor "
        f"{rotor:.3g}): a PD law on it, its torque held for a step of h = {h:g} s, is stable only with "
        f"D < 2 I / h = {max_damping(inertia, h):.3g} {damping_unit} and P < 4 I / h^2 - 2 D / h "
        f"(= {max_stiffness(inertia, h):.3g} {stiffness_unit} at D = 0), bounds that shrink with a "
        f"controller period longer than the step ({shrink}): lower those gains or the step, or leave "
        "them to examples/controllers/hold_pose.py, which takes them from the robot's model "
        "(docs/physics.md, Stable PD gains)"
    )
