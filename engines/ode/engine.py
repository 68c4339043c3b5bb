"""The ODE engine: a project's models in ODE, stepped tick by tick, behind engines/base.Engine.

``OdeEngine(project, bodies)`` builds it; ``collide()`` makes this tick's contacts (the part that
does not depend on commands, run while controllers think), ``integrate()`` applies commands,
steps ODE and advances time; ``step()`` is both. ``read(robot)`` and ``apply(robot, command)``
are what the controller hub uses. Before every collision pass the world checks that no body's
velocity is non-finite or exploding, because ODE aborts the whole process on such states; it
raises :class:`SimulationError` naming the model and link and refuses to go on (``failed``)
until ``reset()``, while the last state read stays readable.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import numpy as np
import ode

from hrpsim.bodyinfo import Body
from hrpsim.conventions import MAX_DISTANCE
from hrpsim.engines.base import MAX_ANGULAR_SPEED, MAX_LINEAR_SPEED, Engine, LinkStates, RobotState
from hrpsim.engines.checks import command_array, rotation, vector
from hrpsim.engines.ode.body_table import ROW
from hrpsim.engines.ode.contacts import ContactGenerator
from hrpsim.engines.ode.drives import Drives
from hrpsim.engines.ode.einsum import einsum
from hrpsim.engines.ode.extrajoints import build_extra_joint, build_joint_between
from hrpsim.engines.ode.libode import LIBODE
from hrpsim.engines.ode.model import OdeModel
from hrpsim.engines.ode.placement import current_link_values, place
from hrpsim.engines.ode.sensors import OdeSensors
from hrpsim.engines.ode.service_link import Waiting
from hrpsim.engines.stability import gain_advice
from hrpsim.errors import ConfigError, NotFound, RequestError
from hrpsim.placement import root_placement
from hrpsim.project import Project

CONTACT_SURFACE_LAYER = 1e-4  # m of allowed penetration: keeps resting contacts from chattering
_GUARD_LIMITS = np.array([MAX_DISTANCE**2, MAX_LINEAR_SPEED**2, MAX_ANGULAR_SPEED**2])
# Per column of a gathered body row (engines/ode/body_table.py): each component of the motion
# over its limit, the rotation and quaternion columns weighted 0. The guard's sum runs over whole
# contiguous rows, which costs less than slicing the motion out of them; a non-finite rotation
# still makes the sum NaN, which sends it to the per-body test.
_ROW_WEIGHTS = np.concatenate([np.repeat(1.0 / _GUARD_LIMITS, 3), np.zeros(ROW - 9)])

log = logging.getLogger("hrpsim.simserver")


class OdeEngine(Engine):
    name = "ode"

    def __init__(self, project: Project, bodies: dict[str, Body], *, nameserver: str | None = None) -> None:
        self.project = project
        self.bodies = bodies
        self.nameserver = nameserver  # where to find the collision service (world.collision: service)
        self.contacts: ContactGenerator | None = None
        self._waiting = Waiting()  # what a tick does while it waits for the collision service
        self.timestep = float(project.world.timestep)
        self._build()

    @property
    def robots(self) -> list[str]:
        return self._robots

    def _build(self) -> None:
        cfg, settings = self.project.world, self.settings()
        _refuse_mujoco_only(self.project, self.bodies)
        self.ode_world = ode.World()
        self.ode_world.setGravity(tuple(cfg.gravity))
        self.ode_world.setERP(settings.erp)
        self.ode_world.setCFM(settings.cfm)
        self.ode_world.setContactSurfaceLayer(CONTACT_SURFACE_LAYER)
        self._quick = settings.solver == "quickstep"
        if self._quick:
            self.ode_world.setQuickStepNumIterations(settings.quickstep_iterations)
        self.space = ode.HashSpace()
        self.models: dict[str, OdeModel] = {}
        self.drives: dict[str, Drives] = {}
        self.sensors: dict[str, OdeSensors] = {}
        self._extra: list[Any] = []
        limits = cfg.joint_limits
        gravity = np.asarray(cfg.gravity, float)
        for mc in self.project.models:
            position = root_placement(mc, self.bodies[mc.name])[0]
            if not np.linalg.norm(position) < MAX_DISTANCE:
                raise ConfigError(
                    f"{self.project.path}: model {mc.name!r}: position {list(position)} is beyond "
                    f"{MAX_DISTANCE:g} m from the origin, where ODE's collision space fails"
                )
            model = OdeModel(mc.name, self.bodies[mc.name], mc, self.ode_world, self.space, joint_limits=limits)
            self.models[mc.name] = model
            if model.static:
                continue
            self.drives[mc.name] = Drives(model, self.ode_world, self.timestep, settings.cfm)
            self.sensors[mc.name] = OdeSensors(model, self.timestep, gravity)
            for extra in model.info.extra_joints:
                self._extra.extend(build_extra_joint(model, extra, self.ode_world))
        for joint in self.project.extra_joints:  # loops the project closes, within a model or between two
            self._extra.extend(
                build_joint_between(
                    self.models[joint.model1], self.models[joint.model2], joint.as_extra_joint(), self.ode_world
                )
            )
        self._robots = [name for name, m in self.models.items() if not m.static]
        self.contacts = self._contact_generator()
        self._drive_list = list(self.drives.values())
        self._moving = [self.models[name] for name in self.robots]
        self._sensor_list = [s for s in self.sensors.values() if s.steps]
        self._external: dict[tuple[str, int], tuple[tuple[float, ...], tuple[float, ...]]] = {}
        self.start()

    def _contact_generator(self) -> ContactGenerator:
        models = list(self.models.values())
        drives = self.drives

        # A closure over the drives, not a bound method: the generator must not point back at the
        # World, or the World becomes cyclic garbage (see close()).
        def crawler_speed(robot: str, joint_index: int) -> float:
            return drives[robot].crawler_speed(joint_index)

        if self.project.world.collision == "service":
            from hrpsim.engines.ode.remote_contacts import RemoteContacts

            return RemoteContacts(
                self.ode_world,
                self.space,
                models,
                self.project.collision_pairs(),
                crawler_speed,
                nameserver=self.nameserver,
                wait_s=self.project.world.collision_wait,
                waiting=self._waiting,
            )
        return ContactGenerator(self.ode_world, self.space, models, self.project.collision_pairs(), crawler_speed)

    def serve_while_waiting(self, serve: Callable[[str], None] | None) -> None:
        self._waiting.serve = serve

    def close(self) -> None:
        """Let go of outside resources (the collision service's connection); the state stays readable."""
        closer = getattr(self.contacts, "close", None)
        if closer is not None:
            closer()

    def release(self) -> None:
        """Close, then drop every ODE object: the end of this world's life (or of a build, on reset).

        pyode objects must die by reference counting: when the cycle collector clears them, a
        world can be destroyed before its bodies, whose own destruction then crashes the process.
        So nothing here may stay reachable from a reference cycle (a service's bound methods,
        say): every reference is dropped now, contact joints first.
        """
        self.close()
        if self.contacts is not None:
            self.contacts.release()
        self.contacts = None
        self._drive_list, self._sensor_list, self._moving, self._robots = [], [], [], []
        self._extra, self._external, self._last_state = [], {}, {}
        self.drives, self.sensors = {}, {}
        self.models = {}
        self.space = None
        self.ode_world = None

    def reset(self) -> None:
        """Back to the initial state of the project (rebuilds every ODE object)."""
        self.release()
        self._build()

    def rebuild(self, project: Project, bodies: dict[str, Body]) -> None:
        """Replace the whole world by another project's (keeps this object: the hub holds it)."""
        self.project, self.bodies, self.timestep = project, bodies, float(project.world.timestep)
        self.reset()

    # --- snapshots ---

    def _get_state(self) -> dict[str, Any]:
        return {
            "models": {model.name: model.get_state() for model in self._moving},
            "drives": {name: drives.get_state() for name, drives in self.drives.items()},
            "sensors": {name: sensors.memory() for name, sensors in self.sensors.items()},
            "friction": self.contacts.memory(),
            "external": dict(self._external),
            # quickstep orders its constraints at random, from ODE's one generator in the process
            "seed": None if LIBODE is None else int(LIBODE.dRandGetSeed()),
        }

    def _set_state(self, data: dict[str, Any]) -> None:
        for model in self._moving:
            model.set_state(data["models"][model.name])
        for name, drives in self.drives.items():
            drives.set_state(data["drives"][name])
        for name, sensors in self.sensors.items():
            sensors.restore(data["sensors"][name])
        self.contacts.restore(data["friction"])
        self._external = data["external"]
        if LIBODE is not None and data["seed"] is not None:
            LIBODE.dRandSetSeed(data["seed"])

    # --- lookups ---

    def model(self, name: str) -> OdeModel:
        return self._model(name)

    def _model(self, name: str) -> OdeModel:
        model = self.models.get(name)
        if model is None:
            raise NotFound(f"no model named {name!r} in this world (models: {', '.join(self.models)})")
        return model

    def _robot(self, name: str) -> OdeModel:
        model = self._model(name)
        if model.static:
            raise RequestError(f"model {name!r} is static: it has no joints or state to command")
        return model

    # --- the tick ---

    def _collide(self) -> None:
        """Check the state, then make this tick's contact joints."""
        self._guard()
        self.contacts.collide()

    def _integrate(self) -> None:
        """Apply commands and external forces, step ODE, advance time."""
        for drives in self._drive_list:
            drives.apply()
        for (robot, index), (force, torque) in self._external.items():
            self._apply_external(robot, index, force, torque)
        for sensors in self._sensor_list:
            sensors.before_step()
        if self._quick:
            self.ode_world.quickStep(self.timestep)
        else:
            self.ode_world.step(self.timestep)
        for model in self._moving:
            model.track_turns()
        self.tick += 1
        self.time = self.tick * self.timestep

    def _guard(self) -> None:
        for model in self._moving:
            reading = model.reading()  # the one the last state read took, if any: no new gather
            # Every squared distance and speed over its limit, summed: below 1, each one is; NaN fails.
            if einsum("ij,ij,j->", reading.rows, reading.rows, _ROW_WEIGHTS) < 1.0:
                continue
            motion = reading.motion
            fine = np.einsum("ijk,ijk->ij", motion, motion) < _GUARD_LIMITS
            if not fine.all():
                self._fail_at(model, motion, int(np.argmin(fine.all(axis=1))))

    def _fail_at(self, model: OdeModel, motion: np.ndarray, row: int) -> None:
        p, v, w = motion[row]
        self.fail(
            f"model {model.name!r} link {model.moving_links[row].link.name!r}",
            f"position {p[0]:.3g} {p[1]:.3g} {p[2]:.3g} m, linear velocity {v[0]:.3g} {v[1]:.3g} "
            f"{v[2]:.3g} m/s, angular velocity {w[0]:.3g} {w[1]:.3g} {w[2]:.3g} rad/s"
            + gain_advice(self, model.name, model.moving_links[row].index),
        )

    def _apply_external(self, robot: str, index: int, force: tuple[float, ...], torque: tuple[float, ...]) -> None:
        model = self.models[robot]
        sim = model.links[index]
        p, _ = model.link_origin(sim)
        sim.body.addForceAtPos(force, tuple(float(v) for v in p))
        sim.body.addTorque(torque)

    # --- state and commands ---

    def _measure(self, robot: str) -> RobotState:
        """The robot's state now: joints in controller order, root pose and velocity, sensors."""
        model = self._robot(robot)
        position, rotation, velocity = model.root_frame()
        return RobotState(
            time=self.time,
            tick=self.tick,
            q=model.joint_values(),
            dq=model.joint_rates(),
            tau=self.drives[robot].applied(model.reading()),
            root_position=position,
            root_rotation=rotation,
            root_velocity=velocity,
            sensors=self.sensors[robot].read(self.tick > 0),
        )

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
        drives = self.drives[robot]
        if modes is not None:
            drives.set_modes(modes)
        drives.set_arrays(torque, q_ref, dq_ref)

    def drive_modes(self, robot: str) -> list[str]:
        self._robot(robot)
        return list(self.drives[robot].modes)

    def link_states(self, model: str) -> LinkStates:
        """One pass over the bodies, then the frame-origin arithmetic for all links at once: an
        observer (the recorder) asks for every link every tick."""
        m = self._model(model)
        if len(m.moving_links) < len(m.links):  # fixed links have no body: their pose is kept, they do not move
            poses = m.link_poses()
            return LinkStates(
                positions=poses[:, :3].copy(),
                quaternions=poses[:, 3:].copy(),
                linear=np.zeros((len(poses), 3)),
                angular=np.zeros((len(poses), 3)),
            )
        frames = m.link_frames()
        return LinkStates(
            positions=frames.positions,
            quaternions=frames.quaternions.copy(),
            linear=frames.linear,
            angular=frames.angular.copy(),
        )

    def link_values(self, model: str) -> tuple[np.ndarray, np.ndarray]:
        return current_link_values(self._model(model))

    def root_pose(self, model: str) -> tuple[np.ndarray, np.ndarray]:
        m = self._model(model)
        return m.link_origin(m.links[0])

    def contact_points(self) -> list[dict[str, Any]]:
        return self.contacts.points()

    def set_external_force(self, robot: str, link: str, force: Any, torque: Any = (0.0, 0.0, 0.0)) -> None:
        """A force (at the link origin) and torque, world frame, applied every tick until changed."""
        model = self._robot(robot)
        index = _link_index(model, link)
        f = vector(f"{robot}.{link}.force", force, 3)
        t = vector(f"{robot}.{link}.torque", torque, 3)
        if not np.any(f) and not np.any(t):
            self._external.pop((robot, index), None)
        else:
            self._external[(robot, index)] = (tuple(map(float, f)), tuple(map(float, t)))

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
        """Put the robot into a configuration (joints in controller order; root velocity is
        [linear, angular] in the world frame). Unset quantities keep their current values;
        high-gain targets follow the new joint values."""
        model = self._robot(robot)
        q_arr = command_array(robot, "q", q, model.joint_names)
        dq_arr = command_array(robot, "dq", dq, model.joint_names)
        values, rates = current_link_values(model)
        for k, sim in enumerate(model.joints):
            if q_arr is not None:
                values[sim.index] = q_arr[k]
            if dq_arr is not None:
                rates[sim.index] = dq_arr[k]
        p0, r0 = model.link_origin(model.links[0])
        v0, w0 = model.link_velocity(model.links[0])
        p = p0 if root_position is None else vector(f"{robot}.root_position", root_position, 3)
        if np.linalg.norm(p) >= MAX_DISTANCE:
            raise RequestError(f"{robot}.root_position: {p.tolist()} is beyond {MAX_DISTANCE:g} m from the origin")
        r = r0 if root_rotation is None else rotation(f"{robot}.root_rotation", root_rotation)
        vel = np.concatenate([v0, w0]) if root_velocity is None else vector(f"{robot}.root_velocity", root_velocity, 6)
        place(model, values, rates, p, r, vel[:3], vel[3:])
        if q_arr is not None:
            self.drives[robot].set_arrays(None, q_arr, None)
        self.forget_reading(robot)


def _link_index(model: OdeModel, link: str) -> int:
    try:
        return model.info.link_index(link)
    except KeyError:
        raise NotFound(f"model {model.name!r} has no link {link!r}") from None


def _refuse_mujoco_only(project: Project, bodies: dict[str, Body]) -> None:
    """A model holding what only the MuJoCo engine simulates (an MJCF file's tendons, equalities,
    actuators on tendons ...: Body.metadata["mujoco_only"]) is refused with every such element."""
    found = [(mc.name, item) for mc in project.models for item in bodies[mc.name].metadata.get("mujoco_only", [])]
    if found:
        lines = "\n".join(f"  model {name!r}: {item}" for name, item in found)
        raise ConfigError(f"{project.path}: the ode engine cannot simulate {len(found)} element(s):\n{lines}")
