"""What of an MJCF model BodyInfo cannot hold, sorted three ways:

- **refused** (a problem naming file, line and element) when no engine could run the model as
  hrpsim holds models: deformable flexes, mocap bodies, a free joint on any body but the root;
- **MuJoCo's only** (``Body.metadata["mujoco_only"]``, each located the same way) when the MuJoCo
  engine simulates it from the file's own elements (engines/mujoco/native.py) and ODE cannot:
  tendons, equalities other than those a BodyInfo extra joint holds (an active connect, an active
  weld holding the pose the file draws), actuators on anything but a hinge or slide joint;
- **named in a warning** when it is a setting BodyInfo has no field for: joint damping, stiffness
  and friction loss (simulated on MuJoCo, left out on ODE), other sensor kinds, cameras, lights,
  explicit contact pairs, inactive equalities (left out on ODE, carried inactive on MuJoCo).
"""

from __future__ import annotations

from hrpsim.modelloader.mjcf_parts import holds_drawn_pose, pose_the_file_draws, sensor_type_of
from hrpsim.modelloader.mjcf_source import MjcfSource
from hrpsim.sensor_types import called

TENDON_TAGS = ("fixed", "spatial")
EQUALITY_TAGS = ("connect", "weld", "joint", "tendon", "flex", "distance")
ACTUATOR_TAGS = ("general", "motor", "position", "velocity", "intvelocity", "damper", "cylinder", "muscle", "adhesion")
USE_MUJOCO = "ODE cannot simulate it; use engine: mujoco"


class MujocoOnly:
    """The located elements only the MuJoCo engine simulates (``Body.metadata["mujoco_only"]``)."""

    def __init__(self, source: MjcfSource) -> None:
        self.source = source
        self.items: list[str] = []

    def add(self, tags: tuple[str, ...], name: str, nth: int, what: str) -> None:
        element = self.source.element(tags, name, nth)
        label = f"<{tags[0]}{f' name={name!r}' if name else ''}>"
        where = self.source.problems.locate(element) if element is not None else f"{self.source.path}: {label}"
        self.items.append(f"{where}: {what}: {USE_MUJOCO}")


def check_model(source: MjcfSource) -> MujocoOnly:
    """Refuse what no engine runs (into ``source.problems``); the elements only MuJoCo simulates."""
    only = MujocoOnly(source)
    _tendons(source, only)
    _refuse_unheld(source)
    _equalities(source, only)
    _actuators(source, only)
    _warn_joint_settings(source)
    _warn_left_out(source)
    return only


def _tendons(source: MjcfSource, only: MujocoOnly) -> None:
    m, wrap = source.model, source.mujoco.mjtWrap
    for t in range(m.ntendon):
        first = int(m.tendon_adr[t])
        fixed = all(int(m.wrap_type[w]) == wrap.mjWRAP_JOINT for w in range(first, first + int(m.tendon_num[t])))
        what = "a fixed tendon (joints coupled)" if fixed else "a spatial tendon (a path pulled through sites)"
        only.add(TENDON_TAGS, source.name("tendon", t), t, what)


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


def _equalities(source: MjcfSource, only: MujocoOnly) -> None:
    m, eq = source.model, source.mujoco.mjtEq
    start = pose_the_file_draws(source)
    for e in range(m.neq):
        kind = eq(int(m.eq_type[e])).name.removeprefix("mjEQ_").lower()
        name = source.name("equality", e)
        if not m.eq_active0[e]:
            source.problems.warn(
                source.element(EQUALITY_TAGS, name, e),
                f"an inactive {kind} equality: left out on ODE (a BodyInfo extra joint always holds), "
                "carried inactive on MuJoCo",
            )
        elif kind not in ("connect", "weld"):
            only.add(EQUALITY_TAGS, name, e, f"a {kind} equality (no BodyInfo extra joint holds it)")
        elif not holds_drawn_pose(source, e, start):
            only.add(
                EQUALITY_TAGS,
                name,
                e,
                f"a {kind} whose target is not the pose the file draws "
                "(a BodyInfo extra joint holds the starting pose)",
            )


def _actuators(source: MjcfSource, only: MujocoOnly) -> None:
    m, trn, joints = source.model, source.mujoco.mjtTrn, source.mujoco.mjtJoint
    for a in range(m.nu):
        name = source.name("actuator", a)
        if m.actuator_trntype[a] != trn.mjTRN_JOINT:
            what = trn(int(m.actuator_trntype[a])).name.removeprefix("mjTRN_").lower()
            only.add(ACTUATOR_TAGS, name, a, f"an actuator acting on a {what} (BodyInfo's actuators drive joints)")
        elif m.jnt_type[m.actuator_trnid[a][0]] == joints.mjJNT_BALL:
            only.add(ACTUATOR_TAGS, name, a, "an actuator on a ball joint (read as three hinges, it has no one joint)")


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
                f"joint {setting} of {len(named)} joint(s) ({_listed(named)}) has no BodyInfo field: "
                "simulated on the mujoco engine (which builds the model from this file), left out on ODE",
            )


def _warn_left_out(source: MjcfSource) -> None:
    m, mj = source.model, source.mujoco
    sensors = []
    for s in range(m.nsensor):
        element, kind = sensor_type_of(mj, int(m.sensor_type[s]))
        on_site = m.sensor_objtype[s] == mj.mjtObj.mjOBJ_SITE and m.site_bodyid[m.sensor_objid[s]] > 0
        if kind is None or not on_site:
            sensors.append(f"{source.name('sensor', s) or f'#{s}'} ({element})")
    held = ", ".join(called("mjcf"))
    counted = [
        (sensors, f"sensor(s) of kinds BodyInfo lacks (it holds {held} on a body's site)"),
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
