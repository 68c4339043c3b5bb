"""What of an MJCF model BodyInfo cannot hold: refused (a problem naming file, line and element)
when leaving it out would change what the model is (tendons, flexes, mocap bodies, welds and other
equalities, actuators on anything but a joint), named in a warning when it is a simulation or
display setting BodyInfo has no field for (joint damping, stiffness and friction loss, other
sensor kinds, cameras, lights, explicit contact pairs)."""

from __future__ import annotations

from hrpsim.modelloader.mjcf_parts import SENSOR_KINDS
from hrpsim.modelloader.mjcf_source import MjcfSource

TENDON_TAGS = ("fixed", "spatial")
EQUALITY_TAGS = ("connect", "weld", "joint", "tendon", "flex", "distance")
ACTUATOR_TAGS = ("general", "motor", "position", "velocity", "intvelocity", "damper", "cylinder", "muscle", "adhesion")
SENSOR_TAGS = ("sensor",)  # a sensor's own tag varies; located by name


def check_model(source: MjcfSource) -> None:
    _refuse_tendons(source)
    _refuse_unheld(source)
    _refuse_equalities(source)
    _refuse_actuators(source)
    _warn_joint_settings(source)
    _warn_left_out(source)


def _refuse_tendons(source: MjcfSource) -> None:
    for t in range(source.model.ntendon):
        source.refuse(
            TENDON_TAGS,
            source.name("tendon", t),
            t,
            "tendons have no BodyInfo form (a fixed tendon couples joints, a spatial one pulls along "
            "a path): remove the tendon and what uses it, or drive the joints one by one",
        )


def _refuse_unheld(source: MjcfSource) -> None:
    m = source.model
    for f in range(m.nflex):
        source.refuse(("flex", "flexcomp"), source.name("flex", f), f, "deformable flexes have no BodyInfo form")
    for b in range(1, m.nbody):
        if m.body_mocapid[b] >= 0:
            source.refuse(
                ("body",),
                source.name("body", b),
                b - 1,
                "a mocap body (moved by the program, not by physics) has no BodyInfo form; "
                "make it an ordinary body or a separate static model",
            )


def _refuse_equalities(source: MjcfSource) -> None:
    m, eq = source.model, source.mujoco.mjtEq
    for e in range(m.neq):
        kind = eq(int(m.eq_type[e])).name.removeprefix("mjEQ_").lower()
        if kind != "connect":
            source.refuse(
                EQUALITY_TAGS,
                source.name("equality", e),
                e,
                f"a {kind} equality has no BodyInfo extra joint (a connect is a ball extra joint); "
                "replace it by a connect or remove it",
            )
        elif not m.eq_active0[e]:
            source.refuse(
                ("connect",),
                source.name("equality", e),
                e,
                "an inactive connect has no BodyInfo form (extra joints always hold): remove it or make it active",
            )


def _refuse_actuators(source: MjcfSource) -> None:
    m, trn, joints = source.model, source.mujoco.mjtTrn, source.mujoco.mjtJoint
    for a in range(m.nu):
        name = source.name("actuator", a)
        if m.actuator_trntype[a] != trn.mjTRN_JOINT:
            what = trn(int(m.actuator_trntype[a])).name.removeprefix("mjTRN_").lower()
            source.refuse(
                ACTUATOR_TAGS,
                name,
                a,
                f"an actuator acting on a {what} has no BodyInfo form (its actuators drive joints): "
                "give it a joint, or remove it",
            )
        elif m.jnt_type[m.actuator_trnid[a][0]] == joints.mjJNT_BALL:
            source.refuse(ACTUATOR_TAGS, name, a, "an actuator on a ball joint (read as three hinges) has no one joint")


def _warn_joint_settings(source: MjcfSource) -> None:
    m = source.model
    settings = {
        "damping": lambda j: m.dof_damping[m.jnt_dofadr[j]],
        "stiffness": lambda j: m.jnt_stiffness[j],
        "frictionloss": lambda j: m.dof_frictionloss[m.jnt_dofadr[j]],
    }
    for setting, value in settings.items():
        named = [source.name("joint", j) or f"#{j}" for j in range(m.njnt) if value(j) != 0.0]
        if named:
            source.problems.warn(
                None,
                f"joint {setting} of {len(named)} joint(s) ({_listed(named)}) has no BodyInfo field: left out "
                "(a controller or the project's drive gives the joints their behaviour)",
            )


def _warn_left_out(source: MjcfSource) -> None:
    m, mj = source.model, source.mujoco
    sensors = []
    for s in range(m.nsensor):
        kind = mj.mjtSensor(int(m.sensor_type[s])).name.removeprefix("mjSENS_")
        on_site = m.sensor_objtype[s] == mj.mjtObj.mjOBJ_SITE and m.site_bodyid[m.sensor_objid[s]] > 0
        if kind not in SENSOR_KINDS or not on_site:
            sensors.append(f"{source.name('sensor', s) or f'#{s}'} ({kind.lower()})")
    counted = [
        (sensors, "sensor(s) of kinds BodyInfo lacks (it holds force, torque, gyro, accelerometer on a body's site)"),
        ([source.name("camera", c) or f"#{c}" for c in range(m.ncam)], "camera(s): add vision sensors in hrpsim"),
        ([source.name("light", i) or f"#{i}" for i in range(m.nlight)], "light(s): the viewer lights the scene"),
        ([source.name("pair", p) or f"#{p}" for p in range(m.npair)], "contact pair(s): give the project collisions"),
        ([source.name("skin", k) or f"#{k}" for k in range(m.nskin)], "skin(s): drawn only by MuJoCo"),
    ]
    world = [source.name("geom", g) or f"#{g}" for g in range(m.ngeom) if m.geom_bodyid[g] == 0]
    counted.append((world, "world geom(s), the environment: load it with the loader option world: true"))
    for names, what in counted:
        if names:
            source.problems.warn(None, f"left out: {len(names)} {what}: {_listed(names)}")


def _listed(names: list[str], most: int = 8) -> str:
    shown = ", ".join(names[:most])
    return shown + (f" and {len(names) - most} more" if len(names) > most else "")
