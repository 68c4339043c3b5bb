"""A project's bodies -> one MuJoCo model, built in memory with ``mujoco.MjSpec``.

Each link is a MuJoCo body whose frame is the link frame (its centre of mass is the body's
inertial offset), nested like the BodyInfo tree and built at zero joint values: ``rotate`` is a
hinge, ``slide`` a slide joint, a ``free`` root a free joint, ``fixed`` no joint (welded to its
parent, or to the world at the root). Joint values are therefore MuJoCo's qpos directly, with
OpenHRP's signs. Rotor inertia x gearRatio^2 is the joint's ``armature``. A static model is
geoms welded to the world at the project's initial pose.

Only listed collision pairs collide (every geom's contype/conaffinity is 0 and each pair of geoms
is an explicit MuJoCo pair with the project's friction and restitution). Restitution e becomes
the contact's damping ratio zeta = -ln(e) / sqrt(pi^2 + ln(e)^2), the ratio at which a damped
spring contact gives back e of the impact speed.

Extra joints (closed loops) are equality constraints between sites: ``ball``/``xyz`` connect the
two points; ``xy``, ``z`` and ``piston`` put a light intermediate body on link1 with the joints
that free what the type leaves free (a slide along the axis; two slides across it; a slide and a
hinge along it) and connect (or, for ``piston``, weld) it to link2's point.

Without ``runtime`` (a model file for MuJoCo's own tools) geoms keep MuJoCo's default collision
filter and no drives are added. For a running engine each joint also gets a motor (torque drive), an inactive
joint equality (high-gain drive) and a rotor with a drag tendon (velocity drive); see drives.py.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import mujoco
import numpy as np

from hrpsim.bodyinfo import Body, ExtraJoint, Link
from hrpsim.conventions import MAX_DISTANCE, excluded_link_pairs
from hrpsim.engines.mujoco.geometry import add_shape, quaternion
from hrpsim.errors import ConfigError, RequestError
from hrpsim.kinematics import forward_kinematics, link_values
from hrpsim.project import CollisionPair, ModelConfig, Project, WorldConfig
from hrpsim.transforms import axis_angle_matrix

MIN_MASS = 1e-3  # kg given to massless links, as on ODE
MIN_INERTIA = 1e-7  # kg m^2: the least principal moment a link keeps, as on ODE
LOOP_BODY_MASS = 1e-3  # kg of the intermediate body of xy / z / piston loops
LOOP_BODY_INERTIA = 1e-6  # kg m^2: a 1 g sphere of 5 cm radius
IMPRATIO = 3.0  # friction 3x harder than normal contact: a box held by friction creeps 0.6 mm/s, not 2
SOLVER_TOLERANCE = 1e-12  # MuJoCo's 1e-8 lets the solver stop at once on a hard drive that needs no force any more
ROTOR_INERTIA = 1e10  # kg m^2 of a velocity drive's rotor: no joint's drag changes its speed
CONTACT_TIMECONST = 0.02  # s: MuJoCo's default contact stiffness
TORSION_FRICTION, ROLLING_FRICTION = 0.005, 0.0001  # unused with condim 3, MuJoCo's defaults
SETTINGS = {"solver": ("Newton", "CG", "PGS"), "cone": ("pyramidal", "elliptic"),
            "integrator": ("implicitfast", "implicit"), "iterations": int, "noslip_iterations": int,
            "impratio": float, "tolerance": float}


@dataclass
class ModelLayout:
    """Names of one model's MuJoCo elements, per link (link order); "" where there is none."""

    name: str
    info: Body
    config: ModelConfig
    static: bool
    initial_values: list[float]
    bodies: list[str] = field(default_factory=list)
    joints: list[str] = field(default_factory=list)
    geoms: list[list[str]] = field(default_factory=list)
    sensors: dict[str, str] = field(default_factory=dict)  # sensor name -> site name

    def where(self, index: int) -> str:
        return f"model {self.name!r} link {self.info.links[index].name!r}"


def element(model: str, *parts: str) -> str:
    """The MuJoCo name of a model's element (names are global in a MuJoCo model)."""
    return "/".join((model, *parts))


def build_spec(project: Project, bodies: dict[str, Body], *, runtime: bool = True
               ) -> tuple[mujoco.MjSpec, dict[str, ModelLayout]]:
    """The MuJoCo spec of a project's world and each model's element names."""
    spec = mujoco.MjSpec()
    spec.modelname = "world"
    spec.compiler.degree = False
    spec.compiler.inertiafromgeom = mujoco.mjtInertiaFromGeom.mjINERTIAFROMGEOM_FALSE
    spec.compiler.balanceinertia = True  # raised moments may break the triangle inequality MuJoCo checks
    _options(spec, project)
    layouts: dict[str, ModelLayout] = {}
    for config in project.models:
        layout = _add_model(spec, bodies[config.name], config, project.world.joint_limits, runtime)
        layouts[config.name] = layout
        if runtime and not layout.static:
            _add_drives(spec, layout)
        if not layout.static:
            for extra in layout.info.extra_joints:
                _add_loop(spec, layout, extra)
    _add_pairs(spec, project, layouts)
    return spec, layouts


def _options(spec: mujoco.MjSpec, project: Project) -> None:
    world = project.world
    if world.collision != "builtin":
        raise ConfigError(f"{project.path}: world.collision: {world.collision!r} is for the ODE engine; "
                          f"the mujoco engine finds its own contacts (remove world.collision)")
    spec.option.timestep = float(world.timestep)
    spec.option.gravity = [float(v) for v in world.gravity]
    spec.option.integrator = mujoco.mjtIntegrator.mjINT_IMPLICITFAST  # velocity drives are implicit dampers
    spec.option.impratio = IMPRATIO
    spec.option.tolerance = SOLVER_TOLERANCE
    for key, value in world.mujoco.items():
        _set_option(spec, project.path, key, value)


def _set_option(spec: mujoco.MjSpec, path: str, key: str, value: Any) -> None:
    kind = SETTINGS.get(key)
    if kind is None:
        raise ConfigError(f"{path}: world.mujoco.{key}: unknown setting (settings: {', '.join(SETTINGS)})")
    if isinstance(kind, tuple):
        if value not in kind:
            raise ConfigError(f"{path}: world.mujoco.{key}: {value!r} is not one of {', '.join(kind)}")
        enums = {"solver": (mujoco.mjtSolver, "mjSOL_"), "cone": (mujoco.mjtCone, "mjCONE_"),
                 "integrator": (mujoco.mjtIntegrator, "mjINT_")}
        enum, prefix = enums[key]
        setattr(spec.option, key, getattr(enum, prefix + value.upper()))
        return
    number = isinstance(value, int | float) and not isinstance(value, bool)
    if not number or value < 0 or (kind is int and value != int(value)):
        raise ConfigError(f"{path}: world.mujoco.{key}: expected a non-negative {kind.__name__}, got {value!r}")
    setattr(spec.option, key, kind(value))


def root_pose(config: ModelConfig) -> tuple[np.ndarray, np.ndarray]:
    rot = config.rotation
    return np.asarray(config.position, float), axis_angle_matrix(rot[:3], float(rot[3]))


def _add_model(spec: mujoco.MjSpec, info: Body, config: ModelConfig, joint_limits: bool,
               runtime: bool) -> ModelLayout:
    static = bool(config.static or info.static)
    try:
        initial = link_values(info, config.joints)
    except RequestError as exc:
        raise ConfigError(f"model {config.name!r}: joints: {exc}") from None
    layout = ModelLayout(config.name, info, config, static, initial)
    position, rotation = root_pose(config)
    if not np.linalg.norm(position) < MAX_DISTANCE:
        raise ConfigError(f"model {config.name!r}: position {config.position} is beyond {MAX_DISTANCE:g} m "
                          f"from the origin")
    poses = forward_kinematics(info, position, rotation, initial) if static else None
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
            _set_inertia(body, link, where)
        geoms = []
        for k, shape in enumerate(link.shapes):
            geom = add_shape(spec, body, shape, element(config.name, link.name, str(k)), static=static, where=where)
            if geom is not None:
                if runtime:
                    geom.contype = geom.conaffinity = 0  # only the project's pairs collide
                geoms.append(geom.name)
        layout.geoms.append(geoms)
    if not static:
        _add_sensor_sites(spec, layout)
    return layout


def _add_joint(body: mujoco.MjsBody, link: Link, index: int, layout: ModelLayout, joint_limits: bool,
               where: str) -> str:
    kind = link.joint_type
    if kind == "crawler":
        raise ConfigError(f"{where}: crawler joints (driven contact surfaces) have no MuJoCo form; "
                          f"run this model with world.engine: ode")
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
    joint = body.add_joint(name=name, type=joint_type, axis=axis / max(np.linalg.norm(axis), 1e-12),
                           armature=float(link.reflected_inertia))
    lo, hi = float(link.q_lower), float(link.q_upper)
    if joint_limits and math.isfinite(lo) and math.isfinite(hi) and lo <= hi:
        joint.limited = mujoco.mjtLimited.mjLIMITED_TRUE
        joint.range = [lo, hi]
    else:
        joint.limited = mujoco.mjtLimited.mjLIMITED_FALSE
    return name


def _set_inertia(body: mujoco.MjsBody, link: Link, where: str) -> None:
    mass = float(link.mass)
    if not math.isfinite(mass) or mass <= 0.0:
        mass = MIN_MASS
    inertia = np.asarray(link.inertia, float)
    inertia = (inertia + inertia.T) / 2.0
    if not np.all(np.isfinite(inertia)):
        raise ConfigError(f"{where}: inertia is not finite")
    values, vectors = np.linalg.eigh(inertia)
    values = np.maximum(values, MIN_INERTIA)
    inertia = vectors @ np.diag(values) @ vectors.T
    body.mass = mass
    body.ipos = np.asarray(link.com, float)
    body.fullinertia = [inertia[0, 0], inertia[1, 1], inertia[2, 2], inertia[0, 1], inertia[0, 2], inertia[1, 2]]
    body.explicitinertial = True


def _add_sensor_sites(spec: mujoco.MjSpec, layout: ModelLayout) -> None:
    kinds = {"force": (mujoco.mjtSensor.mjSENS_FORCE, mujoco.mjtSensor.mjSENS_TORQUE),
             "gyro": (mujoco.mjtSensor.mjSENS_GYRO,), "accel": (mujoco.mjtSensor.mjSENS_ACCELEROMETER,)}
    for sensor in layout.info.sensors:
        if sensor.type not in kinds:
            continue  # range and vision sensors have no values on any engine yet
        site = element(layout.name, "sensor", sensor.name)
        spec.body(layout.bodies[sensor.link]).add_site(name=site, pos=np.asarray(sensor.translation, float),
                                                       quat=quaternion(np.asarray(sensor.rotation, float)))
        layout.sensors[sensor.name] = site
        for k, kind in enumerate(kinds[sensor.type]):
            spec.add_sensor(name=f"{site}/{k}", type=kind, objtype=mujoco.mjtObj.mjOBJ_SITE, objname=site)


def _add_drives(spec: mujoco.MjSpec, layout: ModelLayout) -> None:
    velocity = _velocity_joints(layout)
    for joint in layout.joints:
        if not joint or (joint == layout.joints[0] and layout.info.links[0].joint_type == "free"):
            continue
        spec.add_actuator(name=joint, trntype=mujoco.mjtTrn.mjTRN_JOINT, target=joint,
                          gaintype=mujoco.mjtGain.mjGAIN_FIXED, biastype=mujoco.mjtBias.mjBIAS_NONE,
                          gainprm=[1.0] + [0.0] * 9, ctrllimited=mujoco.mjtLimited.mjLIMITED_FALSE,
                          forcelimited=mujoco.mjtLimited.mjLIMITED_FALSE)
        spec.add_equality(name=f"{joint}/hold", type=mujoco.mjtEq.mjEQ_JOINT, name1=joint, active=False,
                          objtype=mujoco.mjtObj.mjOBJ_JOINT)
        if joint in velocity:
            add_rotor(spec, joint)


def _velocity_joints(layout: ModelLayout) -> set[str]:
    """MuJoCo names of the joints the project starts in velocity mode."""
    drive = layout.config.drive
    labels = [lk.joint_label for lk in layout.info.links]
    chosen = labels if drive == "velocity" else [] if isinstance(drive, str) else \
        [name for name, mode in drive.items() if mode == "velocity"]
    return {element(layout.name, label) for label in chosen}


def add_rotor(spec: mujoco.MjSpec, joint: str) -> None:
    """The velocity drive's rotor: a separate, immensely heavy wheel turning at dq_ref, which drags
    the joint along through a tendon friction of at most the torque limit (0: no drag). Only joints
    that use the velocity drive get one, because 29 idle rotors cost sample1 a sixth of its speed."""
    rotor = _light_body(spec.worldbody, f"{joint}/rotor")
    rotor.add_joint(name=f"{joint}/rotor", type=mujoco.mjtJoint.mjJNT_HINGE, axis=[0.0, 0.0, 1.0],
                    armature=ROTOR_INERTIA)
    drag = spec.add_tendon(name=f"{joint}/drag", frictionloss=0.0)
    drag.wrap_joint(joint, 1.0)
    drag.wrap_joint(f"{joint}/rotor", -1.0)


def _add_loop(spec: mujoco.MjSpec, layout: ModelLayout, extra: ExtraJoint) -> None:
    info, name = layout.info, layout.name
    what = f"model {name!r}: extra joint {extra.name!r}"
    if extra.type not in ("ball", "xyz", "xy", "z", "piston"):
        raise ConfigError(f"{what} has type {extra.type!r}, which no engine can impose")
    indices = []
    for link in (extra.link1, extra.link2):
        try:
            indices.append(info.link_index(link))
        except KeyError:
            raise ConfigError(f"{what} names no link {link!r}") from None
    i1, i2 = indices
    body1, body2 = spec.body(layout.bodies[i1]), spec.body(layout.bodies[i2])
    site1, site2 = element(name, extra.name, "1"), element(name, extra.name, "2")
    point1 = np.asarray(extra.point1, float)
    if extra.type in ("ball", "xyz"):
        body1.add_site(name=site1, pos=point1)
        body2.add_site(name=site2, pos=np.asarray(extra.point2, float))
        _equality(spec, mujoco.mjtEq.mjEQ_CONNECT, site1, site2)
        return
    axis = np.asarray(extra.axis, float)
    frame = _frame_along(axis / max(np.linalg.norm(axis), 1e-12))
    middle = _light_body(body1, element(name, extra.name), pos=point1, quat=quaternion(frame))
    slide, hinge = mujoco.mjtJoint.mjJNT_SLIDE, mujoco.mjtJoint.mjJNT_HINGE
    free = {"xy": [(slide, (0, 0, 1))], "z": [(slide, (1, 0, 0)), (slide, (0, 1, 0))],
            "piston": [(slide, (0, 0, 1)), (hinge, (0, 0, 1))]}[extra.type]
    for k, (kind, direction) in enumerate(free):
        middle.add_joint(name=element(name, extra.name, f"free{k}"), type=kind, axis=list(direction))
    middle.add_site(name=site1)
    rotation2 = np.eye(3)
    if extra.type == "piston":  # a weld aligns the frames: give link2's site the middle's orientation now
        poses = forward_kinematics(info, *root_pose(layout.config), layout.initial_values)
        rotation2 = poses[i2][1].T @ poses[i1][1] @ frame
    body2.add_site(name=site2, pos=np.asarray(extra.point2, float), quat=quaternion(rotation2))
    kind = mujoco.mjtEq.mjEQ_WELD if extra.type == "piston" else mujoco.mjtEq.mjEQ_CONNECT
    _equality(spec, kind, site1, site2)


def _light_body(parent: mujoco.MjsBody, name: str, **placement: Any) -> mujoco.MjsBody:
    """A 1 g helper body (a loop's intermediate, a drive's rotor)."""
    body = parent.add_body(name=name, **placement)
    body.mass, body.ipos, body.explicitinertial = LOOP_BODY_MASS, [0.0, 0.0, 0.0], True
    body.fullinertia = [LOOP_BODY_INERTIA] * 3 + [0.0] * 3
    return body


def _equality(spec: mujoco.MjSpec, kind: mujoco.mjtEq, site1: str, site2: str) -> None:
    spec.add_equality(name=site1.rsplit("/", 1)[0], type=kind, objtype=mujoco.mjtObj.mjOBJ_SITE,
                      name1=site1, name2=site2)


def _frame_along(axis: np.ndarray) -> np.ndarray:
    """A rotation whose Z column is ``axis``."""
    helper = np.array([1.0, 0.0, 0.0]) if abs(axis[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    x = np.cross(helper, axis)
    x /= np.linalg.norm(x)
    return np.column_stack([x, np.cross(axis, x), axis])


def restitution_damping(restitution: float) -> float:
    """The damping ratio of a spring contact that returns ``restitution`` of the impact speed."""
    if restitution <= 0.0:
        return 1.0
    log_e = math.log(min(restitution, 1.0 - 1e-9))
    return -log_e / math.sqrt(math.pi**2 + log_e**2)


def _add_pairs(spec: mujoco.MjSpec, project: Project, layouts: dict[str, ModelLayout]) -> None:
    pairs = project.collisions or [CollisionPair(a, b) for i, a in enumerate(layouts) for b in list(layouts)[i + 1:]]
    for pair in pairs:
        _check_surface(project.path, pair)
        a, b = layouts.get(pair.a), layouts.get(pair.b)
        if a is None or b is None or (a.static and b.static):
            continue
        friction = [float(pair.friction)] * 2 + [TORSION_FRICTION, ROLLING_FRICTION, ROLLING_FRICTION]
        solref = [CONTACT_TIMECONST, restitution_damping(float(pair.restitution))]
        for g1, g2 in _geom_pairs(a, b):
            spec.add_pair(geomname1=g1, geomname2=g2, condim=3, friction=friction, solref=solref)


def _check_surface(path: str, pair: CollisionPair) -> None:
    name = f"collisions: pair {pair.a}/{pair.b}"
    if pair.soft_erp is not None or pair.soft_cfm is not None:
        raise ConfigError(f"{path}: {name}: soft_erp/soft_cfm are ODE contact parameters with no mujoco "
                          f"equivalent; remove them or use world.engine: ode")
    if pair.sliding_friction is not None and pair.sliding_friction != pair.friction:
        raise ConfigError(f"{path}: {name}: MuJoCo has one friction coefficient, so sliding_friction "
                          f"({pair.sliding_friction}) cannot differ from friction ({pair.friction}) there")


def _geom_pairs(a: ModelLayout, b: ModelLayout) -> list[tuple[str, str]]:
    if a is not b:
        return [(g1, g2) for geoms1 in a.geoms for g1 in geoms1 for geoms2 in b.geoms for g2 in geoms2]
    links = a.info.links
    excluded = excluded_link_pairs(a.info)
    out = []
    for i in range(len(links)):
        for j in range(i + 1, len(links)):
            if (i, j) not in excluded:
                out += [(g1, g2) for g1 in a.geoms[i] for g2 in a.geoms[j]]
    return out


def write_mjcf(body: Body, path: str) -> str:
    """``body`` as an MJCF file (root at the origin; a free root gets a free joint); returns the path."""
    config = ModelConfig(name=body.name or "model", file=body.source, static=body.static)
    project = Project(path=path, world=WorldConfig(), models=[config], collisions=[])
    spec, _ = build_spec(project, {config.name: body}, runtime=False)
    spec.modelname = config.name
    spec.compile()  # MuJoCo checks what it will be asked to load
    with open(path, "w", encoding="utf-8") as out:
        out.write(spec.to_xml())
    return path
