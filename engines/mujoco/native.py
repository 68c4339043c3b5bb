"""An MJCF robot built from its own file: the model as MuJoCo read it (``Body.metadata["mjcf"]``,
modelloader/mjcf_native.py) attached under the model's name, so that everything the file says is
simulated (tendons, equalities, ball joints, joint damping, stiffness and armature, MuJoCo's own
actuators while no controller drives the robot), while the controller's arrays stay BodyInfo's.

What hrpsim decides, as for every model: where the robot stands (the project's placement, the
masses the project may rescale), what collides (the project's pairs, with their friction: the
file's geoms collide only through them), joint limits (``world.joint_limits``), the drives and the
sensors (hrpsim's own sites at the BodyInfo sensors), and the world's settings (``<option>``:
time step, gravity, solver, and a fluid medium the file may give, are the project's world's). The
file's own sensors, keyframes, contact pairs, lights, cameras and world geoms (the environment,
loaded apart) are left out.

A link's frame sits at its joint, a MuJoCo body's where the file puts it: ``layout.offsets`` holds
each link's frame in its body's; the massless links of a body with several joints
(``layout.derived``) are posed from their parents. A ball joint's three BodyInfo hinges are one
MuJoCo ball joint (``layout.balls``).
"""

from __future__ import annotations

from typing import Any

import mujoco
import numpy as np

from hrpsim.bodyinfo import Body
from hrpsim.engines.mujoco.geometry import quaternion
from hrpsim.engines.mujoco.layout import ModelLayout, element, set_inertia
from hrpsim.errors import ConfigError

WORLD = "world"  # the MuJoCo world body: a model's root link when several bodies hang from it


def is_native(info: Body) -> bool:
    """Whether the model carries its MJCF (an MJCF robot read by this version of the reader)."""
    return "mjcf" in info.metadata


def add_native_model(
    spec: mujoco.MjSpec,
    layout: ModelLayout,
    position: np.ndarray,
    rotation: np.ndarray,
    *,
    controlled: bool,
    joint_limits: bool,
) -> None:
    """Attach the model's MJCF to ``spec`` under ``layout.name``, filling ``layout``; ``controlled``:
    a controller drives it, so the file's actuators are left out."""
    info, name = layout.info, layout.name
    document = info.metadata["mjcf"]
    try:
        child = mujoco.MjSpec.from_string(document["xml"], assets=dict(document["assets"]))
    except ValueError as exc:
        raise ConfigError(f"model {name!r}: MuJoCo cannot read the MJCF this model carries: {exc}") from None
    _leave_out(child, controlled)
    for setting in dir(spec.option):  # the world's settings are the project's: the file's give way
        if not setting.startswith("_"):
            setattr(child.option, setting, getattr(spec.option, setting))
    links = document["links"]
    _fill_layout(layout, child, links)
    for index, (body, *_rest) in enumerate(links):
        if body and body != WORLD:
            set_inertia(child.body(body), info.links[index], layout.where(index), layout.offsets[index])
    if not joint_limits:
        for joint in child.joints:
            joint.limited = mujoco.mjtLimited.mjLIMITED_FALSE
    prefix = f"{name}/"
    if links[0][0] == WORLD:  # several bodies under the world: the model's own root, where the project puts it
        root = spec.worldbody.add_body(name=layout.bodies[0], pos=position, quat=quaternion(rotation))
        spec.attach(child, prefix=prefix, frame=root.add_frame())
    else:
        spec.attach(child, prefix=prefix, frame=spec.worldbody.add_frame())
        top = spec.body(layout.bodies[0])
        top.pos, top.quat = position, quaternion(rotation)


def _leave_out(child: mujoco.MjSpec, controlled: bool) -> None:
    """What the project decides instead of the file (module docstring)."""
    world = child.worldbody
    for element_list in (world.geoms, world.sites, world.lights, world.cameras):
        for item in list(element_list):
            child.delete(item)
    for item in [*child.sensors, *child.keys, *child.pairs, *(child.actuators if controlled else [])]:
        child.delete(item)
    # the masses are the BodyInfo's (set below): the file's rules for them must not apply again
    child.compiler.inertiafromgeom = mujoco.mjtInertiaFromGeom.mjINERTIAFROMGEOM_FALSE


def _fill_layout(layout: ModelLayout, child: mujoco.MjSpec, links: list[list[Any]]) -> None:
    name = layout.name
    owner = ""
    bodies: list[str] = []
    for body, *_rest in reversed(links):  # a derived link's body is the next own link's
        owner = body or owner
        bodies.append(owner)
    bodies.reverse()
    balls: dict[str, list[int]] = {}
    for index, (body, joint, axis, *offset) in enumerate(links):
        layout.bodies.append(element(name, bodies[index]))
        layout.offsets.append(np.array(offset, float))
        if not body:
            layout.derived.append(index)
        if axis >= 0:
            balls.setdefault(element(name, joint), []).append(index)
        layout.joints.append(element(name, joint) if joint and axis < 0 else "")
        geoms = []
        if body and body != WORLD:
            for k, geom in enumerate(child.body(body).geoms):
                if geom.contype or geom.conaffinity:
                    geom.name = geom.name or f"{layout.info.links[index].name}/{k}"
                    geoms.append(element(name, geom.name))
                    geom.contype = geom.conaffinity = 0  # only the project's pairs collide
        layout.geoms.append(geoms)
    if layout.info.links[0].joint_type == "free":
        layout.joints[0] = element(name, child.body(links[0][0]).joints[0].name)
    layout.balls = list(balls.items())
