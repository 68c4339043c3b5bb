"""A project's bodies -> one MuJoCo model, built in memory with ``mujoco.MjSpec``.

Each link is a MuJoCo body whose frame is the link frame (its centre of mass is the body's
inertial offset), nested like the BodyInfo tree and built at zero joint values: ``rotate`` is a
hinge, ``slide`` a slide joint, a ``free`` root a free joint, ``fixed`` no joint (welded to its
parent, or to the world at the root). Joint values are therefore MuJoCo's qpos directly, with
OpenHRP's signs. Rotor inertia x gearRatio^2 is the joint's ``armature``. A static model is
geoms welded to the world at the project's initial pose.

Collision pairs are in contacts.py, extra joints (closed loops) in loops.py, the drives' elements
in drives.py; layout.py names each model's elements.

Without ``runtime`` (a model file for MuJoCo's own tools) geoms keep MuJoCo's default collision
filter and no drives are added.
"""

from __future__ import annotations

import math

import mujoco
import numpy as np

from hrpsim.bodyinfo import Body, Link
from hrpsim.conventions import MAX_DISTANCE
from hrpsim.engine_options import resolve
from hrpsim.engines.mujoco import OPTIONS
from hrpsim.engines.mujoco.balls import add_ball_motors
from hrpsim.engines.mujoco.contacts import add_pairs
from hrpsim.engines.mujoco.drives import add_drive_elements
from hrpsim.engines.mujoco.geometry import add_shape, quaternion
from hrpsim.engines.mujoco.layout import ModelLayout, element, set_inertia
from hrpsim.engines.mujoco.loops import add_loop
from hrpsim.engines.mujoco.native import add_native_model, is_native
from hrpsim.engines.mujoco.sensors import MEASURED
from hrpsim.errors import ConfigError, RequestError
from hrpsim.kinematics import forward_kinematics, link_values, starting_joints
from hrpsim.placement import root_placement
from hrpsim.project import ModelConfig, Project, WorldConfig

JOINT_ID = "joint_id"  # a written file's <numeric> MODEL/joint_id/JOINT: the joint's controller number
SENSOR_ID = "sensor_id"  # ... and MODEL/sensor_id/SENSOR: the sensor's number among those of its type
ENUMS = {  # settings that name one of MuJoCo's enum values
    "solver": (mujoco.mjtSolver, "mjSOL_"),
    "cone": (mujoco.mjtCone, "mjCONE_"),
    "integrator": (mujoco.mjtIntegrator, "mjINT_"),
}


def build_spec(
    project: Project, bodies: dict[str, Body], *, runtime: bool = True
) -> tuple[mujoco.MjSpec, dict[str, ModelLayout]]:
    """The MuJoCo spec of a project's world and each model's element names."""
    spec = mujoco.MjSpec()
    spec.modelname = "world"
    spec.compiler.degree = False
    spec.compiler.inertiafromgeom = mujoco.mjtInertiaFromGeom.mjINERTIAFROMGEOM_FALSE
    spec.compiler.balanceinertia = True  # raised moments may break the triangle inequality MuJoCo checks
    _options(spec, project)
    layouts: dict[str, ModelLayout] = {}
    controlled = {controller.robot for controller in project.controllers}
    for config in project.models:
        layout, position, rotation = _new_layout(bodies[config.name], config)
        if runtime and not layout.static and is_native(layout.info):
            add_native_model(
                spec,
                layout,
                position,
                rotation,
                controlled=config.name in controlled,
                joint_limits=project.world.joint_limits,
            )
        else:
            _add_model(spec, layout, position, rotation, project.world.joint_limits, runtime)
        if not layout.static:
            _add_sensor_sites(spec, layout)
        layouts[config.name] = layout
        if runtime and not layout.static:
            add_drive_elements(spec, layout)
            add_ball_motors(spec, layout.balls)
        if not layout.static and not (runtime and is_native(layout.info)):  # a native model has the file's own
            for extra in layout.info.extra_joints:
                add_loop(spec, layout, extra, runtime=runtime)
    for joint in project.extra_joints:  # the project's own loops, within a model or between two
        add_loop(
            spec,
            _layout(layouts, joint.model1, joint.name),
            joint.as_extra_joint(),
            _layout(layouts, joint.model2, joint.name),
        )
    add_pairs(spec, project, layouts)
    return spec, layouts


def _layout(layouts: dict[str, ModelLayout], model: str, joint: str) -> ModelLayout:
    if model not in layouts:
        raise ConfigError(f"extra_joints: {joint!r} names no model {model!r} (models: {', '.join(layouts)})")
    return layouts[model]


def _options(spec: mujoco.MjSpec, project: Project) -> None:
    world = project.world
    if world.collision != "builtin":
        raise ConfigError(
            f"{project.path}: world.collision: {world.collision!r} is for the ODE engine; "
            f"the mujoco engine finds its own contacts (remove world.collision)"
        )
    spec.option.timestep = float(world.timestep)
    spec.option.gravity = [float(v) for v in world.gravity]
    settings = resolve("world.mujoco", world.engine_settings.get("mujoco"), OPTIONS, where=project.path)
    for key, value in vars(settings).items():
        if key in ENUMS:
            enum, prefix = ENUMS[key]
            value = getattr(enum, prefix + value.upper())
        setattr(spec.option, key, value)


def _new_layout(info: Body, config: ModelConfig) -> tuple[ModelLayout, np.ndarray, np.ndarray]:
    """The model's layout (empty) and where its root starts."""
    try:
        initial = link_values(info, starting_joints(info, config.joints))
    except RequestError as exc:
        raise ConfigError(f"model {config.name!r}: joints: {exc}") from None
    layout = ModelLayout(config.name, info, config, bool(config.static or info.static), initial)
    position, rotation = root_placement(config, info)
    if not np.linalg.norm(position) < MAX_DISTANCE:
        raise ConfigError(
            f"model {config.name!r}: position {config.position} is beyond {MAX_DISTANCE:g} m from the origin"
        )
    return layout, position, rotation


def _add_model(
    spec: mujoco.MjSpec,
    layout: ModelLayout,
    position: np.ndarray,
    rotation: np.ndarray,
    joint_limits: bool,
    runtime: bool,
) -> None:
    """The model built from its BodyInfo, link by link."""
    info, config, static = layout.info, layout.config, layout.static
    poses = forward_kinematics(info, position, rotation, layout.initial_values) if static else None
    for index, link in enumerate(info.links):
        where = layout.where(index)
        if static:
            parent, pos, rot = spec.worldbody, poses[index][0], poses[index][1]
        elif index == 0:
            parent, pos, rot = spec.worldbody, position, rotation
        else:
            parent = spec.body(layout.bodies[link.parent])
            pos, rot = np.asarray(link.translation, float), np.asarray(link.rotation, float)
        name = element(config.name, link.name)
        body = parent.add_body(name=name, pos=pos, quat=quaternion(rot))
        layout.bodies.append(name)
        layout.joints.append("" if static else _add_joint(body, link, index, layout, joint_limits, where))
        if not static:
            set_inertia(body, link, where)
        geoms = []
        for k, shape in enumerate(link.shapes):
            geom = add_shape(spec, body, shape, element(config.name, link.name, str(k)), static=static, where=where)
            if geom is not None:
                if runtime:
                    geom.contype = geom.conaffinity = 0  # only the project's pairs collide
                geoms.append(geom.name)
        layout.geoms.append(geoms)
        layout.offsets.append(np.zeros(3))
    if runtime and not static:
        _add_mimics(spec, layout)


def _add_mimics(spec: mujoco.MjSpec, layout: ModelLayout) -> None:
    """Each mimic joint (URDF ``<mimic>``, COLLADA formulas) held on its master by a joint equality,
    q = multiplier * q_master + offset, as stiff as a drive's hold: both ways, unlike ODE's motor."""
    info = layout.info
    for index, link in enumerate(info.links):
        if link.mimic is None or not layout.joints[index]:
            continue
        master = next((i for i, lk in enumerate(info.links) if lk.joint_label == link.mimic.joint), None)
        if master is None or not layout.joints[master]:
            raise ConfigError(f"{layout.where(index)}: mimics {link.mimic.joint!r}, which is no joint of the model")
        equality = spec.add_equality(
            name=f"{layout.joints[index]}/mimic",
            type=mujoco.mjtEq.mjEQ_JOINT,
            objtype=mujoco.mjtObj.mjOBJ_JOINT,
            name1=layout.joints[index],
            name2=layout.joints[master],
            data=[float(link.mimic.offset), float(link.mimic.multiplier)] + [0.0] * 10,
        )
        equality.solref = [2.0 * spec.option.timestep, 1.0]


def _add_joint(
    body: mujoco.MjsBody, link: Link, index: int, layout: ModelLayout, joint_limits: bool, where: str
) -> str:
    kind = link.joint_type
    if kind == "crawler":
        raise ConfigError(
            f"{where}: crawler joints (driven contact surfaces) have no MuJoCo form; "
            f"run this model with world.engine: ode"
        )
    if kind == "free":
        if index != 0:
            raise ConfigError(f"{where}: a free joint below the root has no MuJoCo form (only a root may be free)")
        name = element(layout.name, link.name)
        body.add_freejoint(name=name)
        return name
    if kind not in ("rotate", "slide"):
        return ""  # fixed: welded to its parent (or to the world at the root)
    name = element(layout.name, link.joint_label)
    axis = np.asarray(link.joint_axis, float)
    joint_type = mujoco.mjtJoint.mjJNT_HINGE if kind == "rotate" else mujoco.mjtJoint.mjJNT_SLIDE
    joint = body.add_joint(
        name=name, type=joint_type, axis=axis / max(np.linalg.norm(axis), 1e-12), armature=float(link.reflected_inertia)
    )
    lo, hi = float(link.q_lower), float(link.q_upper)
    if joint_limits and math.isfinite(lo) and math.isfinite(hi) and lo <= hi:
        joint.limited = mujoco.mjtLimited.mjLIMITED_TRUE
        joint.range = [lo, hi]
    else:
        joint.limited = mujoco.mjtLimited.mjLIMITED_FALSE
    return name


def _add_sensor_sites(spec: mujoco.MjSpec, layout: ModelLayout) -> None:
    for sensor in layout.info.sensors:
        measured = MEASURED.get(sensor.type)
        if measured is None:
            continue  # range and vision sensors are the simulator's, not the engine's
        site = element(layout.name, "sensor", sensor.name)
        position = layout.offsets[sensor.link] + np.asarray(sensor.translation, float)
        spec.body(layout.bodies[sensor.link]).add_site(
            name=site, pos=position, quat=quaternion(np.asarray(sensor.rotation, float))
        )
        layout.sensors[sensor.name] = site
        for k, kind in enumerate(measured.elements):
            spec.add_sensor(name=f"{site}/{k}", type=kind, objtype=mujoco.mjtObj.mjOBJ_SITE, objname=site)


def _add_file_parts(spec: mujoco.MjSpec, layout: ModelLayout) -> None:
    """What only a model file carries: the body's actuators (a motor with the joint's gear ratio),
    its joints' controller numbers and its collision exclusions."""
    info = layout.info
    _add_numbers(spec, layout)
    for actuator in info.actuators:
        link = next((lk for lk in info.links if lk.joint_label == actuator.joint), None)
        if link is None or link.joint_type not in ("rotate", "slide") or layout.static:
            continue
        motor = spec.add_actuator(
            name=element(layout.name, actuator.name or actuator.joint),
            trntype=mujoco.mjtTrn.mjTRN_JOINT,
            target=element(layout.name, actuator.joint),
            gear=[float(link.gear_ratio), 0.0, 0.0, 0.0, 0.0, 0.0],
        )
        ctrl = actuator.params.get("ctrlrange")
        if ctrl is not None:
            motor.ctrllimited = mujoco.mjtLimited.mjLIMITED_TRUE
            motor.ctrlrange = [float(ctrl[0]), float(ctrl[1])]
    for first, second in info.collision_exclusions:
        spec.add_exclude(bodyname1=element(layout.name, first), bodyname2=element(layout.name, second))


def _add_numbers(spec: mujoco.MjSpec, layout: ModelLayout) -> None:
    """Each joint's controller number and each sensor's number as a ``<numeric>`` (``MODEL/joint_id/
    JOINT``, ``MODEL/sensor_id/SENSOR``): MJCF numbers them in the file's order, a model file may
    number them otherwise (SR1's legs come first)."""
    if layout.static:
        return
    for link in layout.info.links:
        if link.joint_type in ("rotate", "slide"):
            _limit_torque(spec.joint(element(layout.name, link.joint_label)), link)
            spec.add_numeric(name=element(layout.name, JOINT_ID, link.joint_label), data=[float(link.joint_id)])
    for sensor in layout.info.sensors:
        if sensor.name in layout.sensors:
            spec.add_numeric(name=element(layout.name, SENSOR_ID, sensor.name), data=[float(sensor.id)])


def _limit_torque(joint: mujoco.MjsJoint, link: Link) -> None:
    """The joint's torque limits as MuJoCo's actuator force range at the joint (written files only:
    a run drives joints itself and bounds their torque there)."""
    low, high = float(link.torque_lower), float(link.torque_upper)
    if math.isfinite(low) and math.isfinite(high) and low <= high:
        joint.actfrclimited = mujoco.mjtLimited.mjLIMITED_TRUE
        joint.actfrcrange = [low, high]


def write_mjcf(body: Body, path: str) -> str:
    """``body`` as an MJCF file (root at the origin; a free root gets a free joint); returns the path."""
    config = ModelConfig(name=body.name or "model", file=body.source, static=body.static)
    project = Project(path=path, world=WorldConfig(joint_limits=True), models=[config], collisions=[])
    spec, layouts = build_spec(project, {config.name: body}, runtime=False)
    spec.modelname = config.name
    _add_file_parts(spec, layouts[config.name])
    spec.compile()  # MuJoCo checks what it will be asked to load
    with open(path, "w", encoding="utf-8") as out:
        out.write(spec.to_xml())
    return path
