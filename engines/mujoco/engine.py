"""The MuJoCo engine: a project's models in one MuJoCo model, stepped tick by tick.

The model is built in memory (build.py) and compiled once per build. A tick is one MuJoCo step
in ``integrate()``: the held commands go in, MuJoCo finds contacts, solves and integrates; then
the engine keeps the acceleration-stage sensors and joint efforts of that step and computes
poses and velocities of the new state, so that everything read between ticks describes the state
now (with every joint in torque mode, as the first half of the next step: stepping.py). MuJoCo
finds contacts inside its step, so ``collide()`` only checks that the world may step.

Conventions are those of the ODE engine (docs/physics.md): joints in controller order with
OpenHRP's signs, the root pose is the root link's frame, velocities are world-frame [linear of
the frame origin, angular]. After every step the engine checks every coordinate and MuJoCo's own
bad-state warnings; a non-finite or exploding state raises SimulationError naming the model and
link, and the engine refuses to step until ``reset()`` (the last state read stays readable).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

import mujoco
import numpy as np

from hrpsim.bodyinfo import Body
from hrpsim.conventions import MAX_DISTANCE
from hrpsim.engines.base import MAX_ANGULAR_SPEED, MAX_LINEAR_SPEED, Engine, LinkStates, RobotState
from hrpsim.engines.checks import command_array, rotation, vector
from hrpsim.engines.mujoco.balls import Balls
from hrpsim.engines.mujoco.build import build_spec
from hrpsim.engines.mujoco.drives import Drives, add_rotor
from hrpsim.engines.mujoco.frames import offset_frames, pose_derived
from hrpsim.engines.mujoco.geometry import quaternion
from hrpsim.engines.mujoco.layout import ModelLayout
from hrpsim.engines.mujoco.rays import RayCaster
from hrpsim.engines.mujoco.sensors import SensorSet
from hrpsim.engines.mujoco.state_source import MujocoStateSource, body_velocity, joint_readings
from hrpsim.engines.mujoco.stepping import SplitStep
from hrpsim.engines.stability import gain_advice
from hrpsim.errors import ConfigError, NotFound, RequestError
from hrpsim.project import Project

MODEL_ERRORS = (ValueError, mujoco.FatalError)
BAD_STATE_WARNINGS = (
    mujoco.mjtWarning.mjWARN_BADQPOS,
    mujoco.mjtWarning.mjWARN_BADQVEL,
    mujoco.mjtWarning.mjWARN_BADQACC,
)

# What MuJoCo keeps of a state: positions, velocities, the time, controls, applied forces, active
# equalities and the solver's warm start (everything the next step reads that a step changes).
_PHYSICS = mujoco.mjtState.mjSTATE_INTEGRATION

log = logging.getLogger("hrpsim.simserver")
# MuJoCo's warnings go to our log, not to a MUJOCO_LOG.TXT in whatever folder the process runs in.
mujoco.set_mju_user_warning(lambda message: log.warning("MuJoCo: %s", message))


@dataclass
class _Model:
    """One model's MuJoCo indices: per link its body id, joint qpos and dof address (-1: none)."""

    layout: ModelLayout
    bodies: np.ndarray
    qpos: np.ndarray
    dofs: np.ndarray
    controller: np.ndarray  # controller order -> link index
    free_root: tuple[int, int] | None  # the root's free joint: (qpos address, dof address)
    root: int = 0  # the root link's body id
    joint_names: list[str] = field(default_factory=list)  # controller order
    joint_qpos: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=int))  # controller order, 0: none
    joint_dofs: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=int))
    jointless: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=int))  # controller indices
    joint_ref: np.ndarray | None = None  # MuJoCo's qpos0 of the controller's joints, when a file gives one (ref)
    balls: Balls | None = None  # a native MJCF model's ball joints
    shifted: bool = False  # some link frames are not their MuJoCo bodies' (frames.py)
    drives: Drives | None = None
    sensors: SensorSet | None = None
    source: MujocoStateSource | None = None  # made when a controller in process first reads the state


class MujocoEngine(Engine):
    name = "mujoco"
    casts_rays = True

    def __init__(self, project: Project, bodies: dict[str, Body], **_options: Any) -> None:
        self.project, self.bodies = project, bodies
        self.timestep = float(project.world.timestep)
        self._rays = RayCaster()
        self._build()

    def _build(self) -> None:
        spec, layouts = build_spec(self.project, self.bodies)
        self.spec = spec  # kept: velocity drives are added to it when a joint first needs one
        try:
            self.m = spec.compile()
        except MODEL_ERRORS as exc:
            raise ConfigError(f"{self.project.path}: MuJoCo refuses the model: {exc}") from None
        self.d = mujoco.MjData(self.m)
        self.models = {name: self._index(layout) for name, layout in layouts.items()}
        for model in self.models.values():
            self._place_initial(model)
        mujoco.mj_forward(self.m, self.d)
        for name, model in self.models.items():
            if not model.layout.static:
                self._attach_drives(name, model)
        mujoco.mj_forward(self.m, self.d)  # again: the drives' hold constraints are now (in)active
        self._robots = [name for name, model in self.models.items() if not model.layout.static]
        self._geom_links = self._geom_link_names()
        self._moving = [self.models[name] for name in self._robots]
        self._dof_limit = self._speed_limits()
        self._half_step = self.timestep / 2.0
        self._object_velocity = np.empty(6)
        self._on_new_data()
        self._drives_changed()
        self._external: dict[tuple[str, int], tuple[np.ndarray, np.ndarray]] = {}
        self.start()

    def _index(self, layout: ModelLayout) -> _Model:
        m, obj = self.m, mujoco.mjtObj
        bodies = np.array([mujoco.mj_name2id(m, obj.mjOBJ_BODY, b) for b in layout.bodies], dtype=int)
        joints = [mujoco.mj_name2id(m, obj.mjOBJ_JOINT, j) if j else -1 for j in layout.joints]
        qpos = np.array([m.jnt_qposadr[j] if j >= 0 else -1 for j in joints], dtype=int)
        dofs = np.array([m.jnt_dofadr[j] if j >= 0 else -1 for j in joints], dtype=int)
        free = None
        if joints and joints[0] >= 0 and m.jnt_type[joints[0]] == mujoco.mjtJoint.mjJNT_FREE:
            free = (int(qpos[0]), int(dofs[0]))
            qpos[0] = dofs[0] = -1
        controller = np.array([layout.info.link_index(lk.name) for lk in layout.info.joints], dtype=int)
        model = _Model(layout, bodies, qpos, dofs, controller, free, int(bodies[0]), layout.info.joint_names)
        model.joint_qpos, model.joint_dofs = np.maximum(qpos[controller], 0), np.maximum(dofs[controller], 0)
        model.jointless = np.flatnonzero(qpos[controller] < 0)
        ref = np.where(qpos[controller] >= 0, m.qpos0[model.joint_qpos], 0.0)
        model.joint_ref = ref if np.any(ref) else None  # hrpsim's zero is the pose the file draws
        if layout.balls:
            model.balls = Balls(m, layout.balls, {int(link): k for k, link in enumerate(controller)})
        model.shifted = bool(layout.derived) or bool(np.any(layout.offsets))
        return model

    def _geom_link_names(self) -> dict[int, str]:
        """MuJoCo geom id -> ``MODEL/LINK`` (the contact points' names)."""
        names = {}
        for name, model in self.models.items():
            for index, geoms in enumerate(model.layout.geoms):
                for geom in geoms:
                    geom_id = mujoco.mj_name2id(self.m, mujoco.mjtObj.mjOBJ_GEOM, geom)
                    if geom_id >= 0:
                        names[geom_id] = f"{name}/{model.layout.info.links[index].name}"
        return names

    def contact_points(self) -> list[dict[str, Any]]:
        """MuJoCo's contacts of the current state (found again: the step found those of the last one).
        Its normal points from geom1 to geom2 and its distance is negative in penetration."""
        self._stepping.find_contacts()
        out = []
        for contact in self.d.contact[: self.d.ncon]:
            a = self._geom_links.get(int(contact.geom1))
            b = self._geom_links.get(int(contact.geom2))
            if a is None or b is None:
                continue  # a helper geom of a drive or a loop
            out.append(
                {
                    "a": a,
                    "b": b,
                    "position": [float(v) for v in contact.pos],
                    "normal": [-float(v) for v in contact.frame[:3]],
                    "depth": -float(contact.dist),
                }
            )
        return out

    def cast_rays(
        self, model: str, link: str, origin: np.ndarray, directions: np.ndarray, max_distance: float
    ) -> np.ndarray:
        entry = self._model(model)
        body = int(entry.bodies[entry.layout.info.link_index(link)])
        return self._rays.distances(self.m, self.d, origin, directions, max_distance, body)

    def _place_initial(self, model: _Model) -> None:
        values = model.layout.initial_values
        for index, adr in enumerate(model.qpos):
            if adr >= 0:
                self.d.qpos[adr] = values[index] + self.m.qpos0[adr]
        if model.balls:
            model.balls.place(self.d.qpos, self.d.qvel, np.asarray(values, float), None)
        if model.free_root is not None:
            adr = model.free_root[0]
            self.d.qpos[adr : adr + 3] = self.m.body_pos[model.bodies[0]]
            self.d.qpos[adr + 3 : adr + 7] = self.m.body_quat[model.bodies[0]]

    def _attach_drives(self, name: str, model: _Model) -> None:
        layout, links = model.layout, model.layout.info.links
        joints = [layout.joints[i] if model.qpos[i] >= 0 else "" for i in model.controller]
        limits = [min(abs(links[i].torque_lower), abs(links[i].torque_upper)) for i in model.controller]
        initial = np.array([layout.initial_values[i] for i in model.controller])
        model.drives = Drives(
            self.m, self.d, name, layout.info.joint_names, joints, initial, limits, layout.config.drive
        )
        if model.balls:
            refused = model.balls.refused_mode(
                layout.info.joint_names, dict(zip(layout.info.joint_names, model.drives.modes, strict=True))
            )
            if refused:
                raise ConfigError(f"model {name!r}: drive: {refused}")
        model.sensors = SensorSet(self.m, self.d, layout.info, layout.sensors)

    def _add_rotors(self, joints: list[str]) -> None:
        """Give these joints their velocity drive's rotor: recompile the model keeping the state,
        then index it again and let new drives and sensors carry on from the old ones."""
        for joint in joints:
            add_rotor(self.spec, joint)
        self.m, self.d = self.spec.recompile(self.m, self.d)
        self._on_new_data()
        old = self.models
        self.models = {name: self._index(model.layout) for name, model in old.items()}
        for name, model in self.models.items():
            if model.layout.static:
                continue
            self._attach_drives(name, model)
            model.drives.take_over(old[name].drives)
            model.sensors.after_step[:] = old[name].sensors.after_step
        self._moving = [self.models[name] for name in self._robots]
        self._dof_limit = self._speed_limits()
        self._drives_changed()
        mujoco.mj_forward(self.m, self.d)

    def _on_new_data(self) -> None:
        """Views and helpers of a new MjData (a build or a recompile)."""
        # Views of the arrays read every tick, kept: each attribute of an MjData makes a new array.
        self._rotations = self.d.xmat.reshape(-1, 3, 3)  # each body's rotation matrix
        self._qpos, self._qvel, self._xpos = self.d.qpos, self.d.qvel, self.d.xpos
        self._stepping = SplitStep(self.m, self.d)

    def _drives_changed(self) -> None:
        """Drive modes changed: whether the next ticks' commands change the controls only."""
        self._controls_only = not any(model.drives.sets_constraints for model in self._moving)
        self._stepping.invalidate()

    def _speed_limits(self) -> np.ndarray:
        limits = np.full(self.m.nv, MAX_ANGULAR_SPEED)
        for j in range(self.m.njnt):
            adr, kind = self.m.jnt_dofadr[j], self.m.jnt_type[j]
            if kind == mujoco.mjtJoint.mjJNT_SLIDE:
                limits[adr] = MAX_LINEAR_SPEED
            elif kind == mujoco.mjtJoint.mjJNT_FREE:
                limits[adr : adr + 3] = MAX_LINEAR_SPEED
        return limits

    # --- models ---

    @property
    def robots(self) -> list[str]:
        return list(self._robots)

    def _model(self, name: str) -> _Model:
        model = self.models.get(name)
        if model is None:
            raise NotFound(f"no model named {name!r} in this world (models: {', '.join(self.models)})")
        return model

    def _robot(self, name: str) -> _Model:
        self.require_robot(name)
        return self.models[name]

    # --- the tick ---

    def _collide(self) -> None:
        """Nothing to do: the contacts were found at the end of the last step."""

    def _integrate(self) -> None:
        for model in self._moving:
            model.drives.apply()
            if model.balls:
                model.balls.drive(self._qpos, self.d.ctrl, model.drives.torque, model.drives.effort)
        if self._external:
            self._apply_external()
        self._stepping.step()
        for model in self._moving:
            model.drives.record_effort()
            model.sensors.snapshot()
        self.tick += 1
        self.time = self.tick * self.timestep
        self._guard()
        self._stepping.after_step(controls_only=self._controls_only)

    def _guard(self) -> None:
        # MuJoCo restarts its clock when it resets a bad state (after the first step the clock cannot
        # tell); otherwise check the numbers ourselves. On the hot path one dot product each: a sum
        # of squares under the square of a bound puts every coordinate under it and NaN fails the
        # comparison (MuJoCo resets coordinates beyond 1e10 itself, so the squares do not overflow);
        # otherwise the exact bounds, per dof for speeds. (The array's own dot: np.dot's dispatch
        # costs half as much again on arrays this small.)
        qpos, qvel = self._qpos, self._qvel
        clock_kept = self.tick > 1 and abs(self.d.time - self.time) < self._half_step
        if clock_kept and qpos.dot(qpos) < MAX_DISTANCE**2 and qvel.dot(qvel) < MAX_LINEAR_SPEED**2:
            return
        if (
            clock_kept
            and np.abs(qpos).max(initial=0.0) < MAX_DISTANCE
            and (np.abs(qvel).max(initial=0.0) < MAX_LINEAR_SPEED or (np.abs(qvel) < self._dof_limit).all())
        ):
            return
        body = self._bad_body()
        if body is None:
            return
        self.fail(self._where(body), "positions, speeds or accelerations" + self._gain_advice(body))

    def _bad_body(self) -> int | None:
        """The MuJoCo body of the first bad coordinate, if any."""
        m, d = self.m, self.d
        for warning in BAD_STATE_WARNINGS:  # MuJoCo met it in the step and reset its data
            if d.warning[warning].number:
                index = int(d.warning[warning].lastinfo)
                if warning == mujoco.mjtWarning.mjWARN_BADQPOS:
                    return int(m.jnt_bodyid[int(np.searchsorted(m.jnt_qposadr, index, side="right") - 1)])
                return int(m.dof_bodyid[index])
        bad_speed = np.flatnonzero(~(np.abs(d.qvel) < self._dof_limit))  # NaN fails the comparison too
        if bad_speed.size:
            return int(m.dof_bodyid[int(bad_speed[0])])
        bad_position = np.flatnonzero(~(np.abs(d.qpos) < MAX_DISTANCE))
        if bad_position.size:
            return int(m.jnt_bodyid[int(np.searchsorted(m.jnt_qposadr, int(bad_position[0]), side="right") - 1)])
        return None

    def _gain_advice(self, body: int) -> str:
        for model in self.models.values():
            hits = np.flatnonzero(model.bodies == body)
            if hits.size and model.drives is not None:
                return gain_advice(self, model.layout.name, int(hits[0]))
        return ""

    def _where(self, body: int) -> str:
        for model in self.models.values():
            hits = np.flatnonzero(model.bodies == body)
            if hits.size:  # a body's own link is the last of its links
                return model.layout.where(int(hits[-1]))
        return f"MuJoCo body {mujoco.mj_id2name(self.m, mujoco.mjtObj.mjOBJ_BODY, body)!r}"

    def _apply_external(self) -> None:
        for (robot, index), (force, torque) in self._external.items():
            model = self.models[robot]
            body = model.bodies[index]
            # MuJoCo applies xfrc at the centre of mass; the force acts at the link origin.
            origin = self._link_frames(model)[0][index] if model.shifted else self.d.xpos[body]
            lever = origin - self.d.xipos[body]
            self.d.xfrc_applied[body, :3] = force
            self.d.xfrc_applied[body, 3:] = torque + np.cross(lever, force)

    # --- state and commands ---

    def _measure(self, robot: str) -> RobotState:
        model = self.models.get(robot)
        if model is None or model.drives is None:  # not a robot: the error that says so
            model = self._robot(robot)
        body = model.root
        q, dq = self._qpos[model.joint_qpos], self._qvel[model.joint_dofs]  # copies (indexed by arrays)
        joint_readings(model, self._qpos, self._qvel, q, dq)
        return RobotState(
            time=self.time,
            tick=self.tick,
            q=q,
            dq=dq,
            tau=model.drives.applied(),
            root_position=self._xpos[body].copy(),
            root_rotation=self._rotations[body].copy(),
            root_velocity=self._velocity(body),
            sensors=model.sensors.read(),
        )

    def root_pose(self, model_name: str) -> tuple[np.ndarray, np.ndarray]:
        body = self._model(model_name).bodies[0]
        return self.d.xpos[body].copy(), self.d.xmat[body].reshape(3, 3).copy()

    def root_height(self, model_name: str) -> float:
        return float(self._xpos[self._model(model_name).root, 2])

    def _velocity(self, body: int) -> np.ndarray:
        """[linear of the body frame's origin, angular], world frame."""
        out = np.empty(6)
        body_velocity(self.m, self.d, body, self._object_velocity, out)
        return out

    def state_source(self, robot: str) -> MujocoStateSource:
        model = self.models.get(robot)
        if model is None or model.drives is None:  # not a robot: the error that says so
            model = self._robot(robot)
        if model.source is None:  # (a recompile indexes the models again: their sources start afresh)
            model.source = MujocoStateSource(self, robot, model)
        return model.source

    def _joint_names(self, robot: str) -> list[str]:
        return self._robot(robot).joint_names

    def _command(
        self,
        robot: str,
        torque: np.ndarray | None,
        q_ref: np.ndarray | None,
        dq_ref: np.ndarray | None,
        modes: dict[str, str] | None,
    ) -> None:
        model = self.models[robot]
        if modes is not None:
            refused = model.balls.refused_mode(model.joint_names, modes) if model.balls else ""
            if refused:
                raise RequestError(f"{robot}.modes: {refused}")
            missing = model.drives.without_rotor(modes)
            if missing:
                self._add_rotors([model.drives.mujoco_joints[i] for i in missing])
                model = self.models[robot]
            model.drives.set_modes(modes)
            self._drives_changed()
        model.drives.set_arrays(torque, q_ref, dq_ref)

    def drive_modes(self, robot: str) -> list[str]:
        return list(self._robot(robot).drives.modes)

    def link_states(self, model_name: str) -> LinkStates:
        model = self._model(model_name)
        bodies = model.bodies
        velocities = (
            np.array([self._velocity(b) for b in bodies]) if not model.layout.static else np.zeros((len(bodies), 6))
        )
        if not model.shifted:
            return LinkStates(
                self.d.xpos[bodies].copy(), self.d.xquat[bodies].copy(), velocities[:, :3], velocities[:, 3:]
            )
        positions, rotations = self._link_frames(model, velocities)
        quaternions = np.empty((len(bodies), 4))
        for k, frame in enumerate(rotations):
            mujoco.mju_mat2Quat(quaternions[k], frame.ravel())
        return LinkStates(positions, quaternions, velocities[:, :3], velocities[:, 3:])

    def _link_frames(self, model: _Model, velocities: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Positions and rotations of the link frames of a model whose links are not all its bodies'
        (and their velocities, in place)."""
        positions, rotations = self.d.xpos[model.bodies], self._rotations[model.bodies]  # copies
        offset_frames(model.layout, positions, rotations, velocities)
        if model.layout.derived:
            values, rates = self.link_values(model.layout.name)
            pose_derived(model.layout, values, rates, positions, rotations, velocities)
        return positions, rotations

    def link_positions(self, model_name: str) -> np.ndarray:
        model = self._model(model_name)
        if model.shifted:
            return self._link_frames(model)[0]
        return self.d.xpos[model.bodies]  # a copy (indexed by an array)

    def link_values(self, model_name: str) -> tuple[np.ndarray, np.ndarray]:
        model = self._model(model_name)
        qpos = np.maximum(model.qpos, 0)
        values = np.where(model.qpos >= 0, self.d.qpos[qpos] - self.m.qpos0[qpos], 0.0)
        rates = np.where(model.dofs >= 0, self.d.qvel[np.maximum(model.dofs, 0)], 0.0)
        if model.balls:
            model.balls.link_values(self.d.qpos, self.d.qvel, values, rates)
        return values, rates

    def set_external_force(self, robot: str, link: str, force: Any, torque: Any = (0.0, 0.0, 0.0)) -> None:
        """A force (at the link origin) and torque, world frame, applied every tick until set to zero."""
        model = self._robot(robot)
        try:
            index = model.layout.info.link_index(link)
        except KeyError:
            raise NotFound(f"model {robot!r} has no link {link!r}") from None
        f = vector(f"{robot}.{link}.force", force, 3)
        t = vector(f"{robot}.{link}.torque", torque, 3)
        if not np.any(f) and not np.any(t):
            self._external.pop((robot, index), None)
            self.d.xfrc_applied[model.bodies[index]] = 0.0
        else:
            self._external[(robot, index)] = (f, t)

    def set_link_data(
        self,
        robot: str,
        *,
        q: Any = None,
        dq: Any = None,
        root_position: Any = None,
        root_rotation: Any = None,
        root_velocity: Any = None,
    ) -> None:
        model = self._robot(robot)
        names = model.joint_names
        q_arr, dq_arr = command_array(robot, "q", q, names), command_array(robot, "dq", dq, names)
        p = None if root_position is None else vector(f"{robot}.root_position", root_position, 3)
        if p is not None and np.linalg.norm(p) >= MAX_DISTANCE:
            raise RequestError(f"{robot}.root_position: {p.tolist()} is beyond {MAX_DISTANCE:g} m from the origin")
        r = None if root_rotation is None else rotation(f"{robot}.root_rotation", root_rotation)
        v = None if root_velocity is None else vector(f"{robot}.root_velocity", root_velocity, 6)
        for adrs, values, target in ((model.qpos, q_arr, self.d.qpos), (model.dofs, dq_arr, self.d.qvel)):
            if values is not None:
                adr = adrs[model.controller]
                target[adr[adr >= 0]] = values[adr >= 0] + (
                    self.m.qpos0[adr[adr >= 0]] if target is self.d.qpos else 0.0
                )
        if model.balls and (q_arr is not None or dq_arr is not None):
            self._place_balls(model, q_arr, dq_arr)
        self._place_root(model, p, r, v)
        if q_arr is not None:
            model.drives.set_arrays(None, q_arr, None)
        mujoco.mj_forward(self.m, self.d)
        self._stepping.invalidate()
        model.sensors.snapshot()
        self.forget_reading(robot)

    def _place_balls(self, model: _Model, q: np.ndarray | None, dq: np.ndarray | None) -> None:
        """Ball joints at the angles and rates given for their hinges (controller order)."""
        values, rates = self.link_values(model.layout.name)
        for given, target in ((q, values), (dq, rates)):
            if given is not None:
                target[model.controller] = given
        model.balls.place(
            self.d.qpos, self.d.qvel, values if q is not None else None, rates if dq is not None else None
        )

    def _place_root(self, model: _Model, p: np.ndarray | None, r: np.ndarray | None, v: np.ndarray | None) -> None:
        body = model.bodies[0]
        if model.free_root is None:  # a fixed root: move where the model is welded to the world
            position, quat = self._welded(model)
            self._weld(model, position if p is None else p, quat if r is None else quaternion(r))
            return
        qadr, dadr = model.free_root
        if p is not None:
            self.d.qpos[qadr : qadr + 3] = p
        if r is not None:
            self.d.qpos[qadr + 3 : qadr + 7] = quaternion(r)
        if v is not None:
            rotation = self.d.xmat[body].reshape(3, 3) if r is None else r
            self.d.qvel[dadr : dadr + 3] = v[:3]
            self.d.qvel[dadr + 3 : dadr + 6] = rotation.T @ v[3:]  # MuJoCo keeps a free body's spin in its frame

    # --- snapshots ---

    def _get_state(self) -> dict[str, Any]:
        physics = np.empty(mujoco.mj_stateSize(self.m, _PHYSICS))
        mujoco.mj_getState(self.m, self.d, physics, _PHYSICS)
        robots = {}
        for name in self._robots:
            model = self.models[name]
            drives = model.drives
            robots[name] = {
                "modes": list(drives.modes),
                "commands": np.array([drives.torque, drives.q_ref, drives.dq_ref]),
                "effort": drives.effort.copy(),
                "after_step": model.sensors.after_step.copy(),
                "welded": None if model.free_root is not None else self._welded(model),
            }
        return {
            "physics": physics,
            "joints": self._mujoco_joints(),
            "robots": robots,
            "external": {key: (f.copy(), t.copy()) for key, (f, t) in self._external.items()},
        }

    def _set_state(self, data: dict[str, Any]) -> None:
        self._take_layout(data["joints"])
        for name, saved in data["robots"].items():
            model = self.models[name]
            model.drives.set_modes(dict(zip(model.joint_names, saved["modes"], strict=True)))
            model.drives.set_arrays(*saved["commands"])
            model.drives.effort[:] = saved["effort"]
            model.sensors.after_step[:] = saved["after_step"]
            if saved["welded"] is not None:
                self._weld(model, *saved["welded"])
        self._external = data["external"]
        mujoco.mj_setState(self.m, self.d, data["physics"], _PHYSICS)
        self._drives_changed()
        self._stepping.after_step(controls_only=self._controls_only)  # what a tick leaves for reading

    def _mujoco_joints(self) -> list[str]:
        """Every MuJoCo joint's name in id order: the layout of the physics state (rotors included)."""
        return [mujoco.mj_id2name(self.m, mujoco.mjtObj.mjOBJ_JOINT, j) or "" for j in range(self.m.njnt)]

    def _take_layout(self, joints: list[str]) -> None:
        """Give the model the velocity drives' rotors the state was taken with, so that its physics
        state has the same layout (a rotor added since: the model is built again first)."""
        have = self._mujoco_joints()
        if have == joints:
            return
        if not set(have) <= set(joints):
            self._build()
            have = self._mujoco_joints()
        rotors = [j.removesuffix("/rotor") for j in joints if j.endswith("/rotor") and j not in have]
        if rotors:
            self._add_rotors(rotors)
        if self._mujoco_joints() != joints:
            raise RequestError(
                f"set_state: the state's MuJoCo model has joints {joints}, this one {self._mujoco_joints()}"
            )

    def _welded(self, model: _Model) -> tuple[np.ndarray, np.ndarray]:
        """Where a fixed root is welded to the world (set_link_data moves it)."""
        return self.m.body_pos[model.root].copy(), self.m.body_quat[model.root].copy()

    def _weld(self, model: _Model, position: np.ndarray, quat: np.ndarray) -> None:
        welded = self.spec.body(model.layout.bodies[0])  # in the spec too, for a recompile
        self.m.body_pos[model.root] = welded.pos = position
        self.m.body_quat[model.root] = welded.quat = quat

    # --- life ---

    def reset(self) -> None:
        self._build()

    def rebuild(self, project: Project, bodies: dict[str, Body]) -> None:
        missing = [m.name for m in project.models if m.name not in bodies]
        if missing:
            raise ConfigError(f"{project.path}: no body loaded for model(s) {', '.join(missing)}")
        self.project, self.bodies, self.timestep = project, bodies, float(project.world.timestep)
        self._build()

    def release(self) -> None:
        self.close()
        self.models, self._moving, self._external = {}, [], {}
