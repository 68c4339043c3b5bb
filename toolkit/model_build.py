"""A BodyInfo tree -> a Pinocchio model, in memory, with the simulator's conventions.

Every ``rotate``/``slide`` link becomes a Pinocchio joint named by its joint label whose frame is
the link frame (BodyInfo puts a link's frame at its joint); a ``free`` root becomes a free flyer;
``fixed`` links are welded to the joint they hang from (their mass joins it) and keep a frame of
their own. Mass properties are the engines' (hrpsim.conventions.simulated_mass: a massless link
weighs 1 g, no principal moment is below 1e-7 kg m^2) and rotor inertia x gearRatio^2 is the joint's
armature, so the model's dynamics are the engines'. Sensors become frames named after them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pinocchio as pin

from hrpsim.bodyinfo import Body, Link
from hrpsim.conventions import simulated_mass
from hrpsim.errors import ConfigError

MOVING_JOINTS = ("rotate", "slide")


@dataclass
class BuiltModel:
    """The Pinocchio model and where each of the body's pieces went."""

    model: pin.Model
    free_root: bool
    link_frames: list[int]  # Pinocchio frame id of every link (link order)
    joint_ids: list[int]  # Pinocchio joint id of every link (0: welded to the world)
    sensor_frames: dict[str, int] = field(default_factory=dict)
    # a fixed root: joints and frames hanging from the world, with their placement relative to the root
    root_children: list[tuple[str, int, pin.SE3]] = field(default_factory=list)
    # links welded to the world (a fixed root's): Pinocchio leaves the world's mass out, so it is kept here
    welded: list[tuple[pin.Inertia, pin.SE3]] = field(default_factory=list)


def build_model(body: Body) -> BuiltModel:
    """The Pinocchio model of ``body`` (root at the origin; a fixed root is placed later)."""
    model = pin.Model()
    model.name = body.name
    root = body.root
    free_root = root.joint_type == "free"
    if root.joint_type not in ("free", "fixed"):
        raise ConfigError(f"model {body.name!r}: a root joint of type {root.joint_type!r} is not supported")
    link_frames: list[int] = []
    joint_ids: list[int] = []
    # each link's (Pinocchio joint it moves with, its frame's placement in that joint's frame)
    attach: list[tuple[int, pin.SE3]] = []
    built = BuiltModel(model, free_root, link_frames, joint_ids)
    for index, link in enumerate(body.links):
        if index == 0:
            parent_joint, placement = 0, pin.SE3.Identity()
        else:
            parent_joint, above = attach[link.parent]
            placement = above * pin.SE3(np.asarray(link.rotation, float), np.asarray(link.translation, float))
        if index == 0 and free_root:
            joint = model.addJoint(0, pin.JointModelFreeFlyer(), placement, link.joint_label)
            attach.append((joint, pin.SE3.Identity()))
        elif link.joint_type in MOVING_JOINTS:
            joint = _add_joint(model, body, link, parent_joint, placement)
            attach.append((joint, pin.SE3.Identity()))
            if parent_joint == 0:
                built.root_children.append(("joint", joint, placement))
        elif link.joint_type == "fixed" or index == 0:
            joint = parent_joint
            attach.append((joint, placement))
        else:
            raise ConfigError(
                f"model {body.name!r} link {link.name!r}: {link.joint_type!r} joints have no rigid-body model"
            )
        joint_ids.append(joint)
        joint_frame, frame_placement = attach[index]
        frame = model.addFrame(pin.Frame(link.name, joint_frame, frame_placement, pin.FrameType.BODY))
        link_frames.append(frame)
        if joint_frame == 0:
            built.root_children.append(("frame", frame, frame_placement))
            built.welded.append((link_inertia(link, body.name), frame_placement))
        else:
            model.appendBodyToJoint(joint_frame, link_inertia(link, body.name), frame_placement)
    for sensor in body.sensors:
        joint, above = attach[sensor.link]
        placement = above * pin.SE3(np.asarray(sensor.rotation, float), np.asarray(sensor.translation, float))
        frame = model.addFrame(pin.Frame(sensor.name, joint, placement, pin.FrameType.SENSOR))
        built.sensor_frames[sensor.name] = frame
        if joint == 0:
            built.root_children.append(("frame", frame, placement))
    return built


def _add_joint(model: pin.Model, body: Body, link: Link, parent: int, placement: pin.SE3) -> int:
    axis = np.asarray(link.joint_axis, float)
    norm = float(np.linalg.norm(axis))
    if not norm > 0.0:
        raise ConfigError(f"model {body.name!r} joint {link.joint_label!r}: the joint axis is zero")
    axis = axis / norm
    if link.joint_type == "rotate":
        joint_model = pin.JointModelRevoluteUnaligned(axis)
    else:
        joint_model = pin.JointModelPrismaticUnaligned(axis)
    joint = model.addJoint(parent, joint_model, placement, link.joint_label)
    index_q, index_v = model.joints[joint].idx_q, model.joints[joint].idx_v
    model.lowerPositionLimit[index_q] = _finite_or(link.q_lower, -np.inf)
    model.upperPositionLimit[index_q] = _finite_or(link.q_upper, np.inf)
    model.armature[index_v] = link.reflected_inertia
    return joint


def _finite_or(value: float, default: float) -> float:
    return float(value) if math.isfinite(value) else default


def link_inertia(link: Link, model: str) -> pin.Inertia:
    """The link's spatial inertia about its frame, as the engines simulate it (the engines' error,
    naming model and link, for an inertia that is not finite)."""
    mass, inertia = simulated_mass(link, f"model {model!r} link {link.name!r}")
    return pin.Inertia(mass, np.asarray(link.com, float), inertia)


def place_root(built: BuiltModel, position: np.ndarray, rotation: np.ndarray) -> tuple[float, np.ndarray]:
    """Put a fixed root at this world pose: what hangs from the world moves with it. Returns the
    mass welded to the world and its centre (world frame)."""
    base = pin.SE3(np.asarray(rotation, float), np.asarray(position, float))
    model = built.model
    for kind, index, placement in built.root_children:
        if kind == "joint":
            model.jointPlacements[index] = base * placement
        else:
            frame = model.frames[index]
            frame.placement = base * placement
            model.frames[index] = frame
    mass = sum(inertia.mass for inertia, _ in built.welded)
    moment = sum(
        ((base * placement).act(inertia.lever) * inertia.mass for inertia, placement in built.welded), np.zeros(3)
    )
    return mass, moment / mass if mass > 0 else np.zeros(3)
