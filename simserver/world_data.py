"""What the World tells about its models without changing anything: their list, a link's data, poses
for given joints, the world-state frame. Functions of the engine, for the World's operations."""

from __future__ import annotations

from typing import Any

import numpy as np

from hrpsim.engines.base import Engine
from hrpsim.errors import NotFound
from hrpsim.simserver.publisher import world_frame
from hrpsim.simserver.tick_record import TickRecord
from hrpsim.transforms import quaternion_matrix


def models(engine: Engine) -> dict[str, Any]:
    """Per model: static or not, its links, joints (controller order), drive modes and sensors."""
    out = {}
    for name in engine.model_names:
        body, static = engine.body(name), engine.is_static(name)
        out[name] = {
            "static": static,
            "links": [lk.name for lk in body.links],
            "joints": body.joint_names,
            "modes": None if static else engine.drive_modes(name),
            "sensors": [{"name": s.name, "type": s.type, "link": body.links[s.link].name} for s in body.sensors],
        }
    return out


def link_data(engine: Engine, robot: str, link: str) -> dict[str, Any]:
    """One link's world pose and velocity, its joint's value and rate (and torque, for a joint the
    controllers command)."""
    body = engine.body(robot)
    try:
        index = body.link_index(link)
    except KeyError as exc:
        raise NotFound(str(exc.args[0])) from None
    states = engine.link_states(robot)
    values, rates = engine.link_values(robot)
    out = {
        "position": states.positions[index],
        "rotation": quaternion_matrix(states.quaternions[index]),
        "linear_velocity": states.linear[index],
        "angular_velocity": states.angular[index],
        "joint_value": float(values[index]),
        "joint_velocity": float(rates[index]),
    }
    names = body.joint_names
    label = body.links[index].joint_label
    if not engine.is_static(robot) and body.links[index].joint_id >= 0 and label in names:
        out["joint_torque"] = float(engine.read(robot).tau[names.index(label)])
    return out


def link_poses(
    engine: Engine, robot: str, q: Any = None, root_position: Any = None, root_rotation: Any = None
) -> dict[str, Any]:
    """World poses of every link for the given joints/root (default: the current ones), without
    moving anything."""
    poses = engine.forward_kinematics(robot, q, root_position, root_rotation)
    return {
        "links": [lk.name for lk in engine.body(robot).links],
        "positions": np.array([pp for pp, _ in poses]),
        "rotations": np.array([rr for _, rr in poses]),
    }


def world_state(engine: Engine) -> dict[str, Any]:
    """The world-state stream's frame of the world now."""
    return world_frame(TickRecord(tick=engine.tick, time=engine.time, engine=engine))
