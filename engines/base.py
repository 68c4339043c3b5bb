"""The engine boundary: what the tick loop, the controller hub and the simulator service may ask of
a physics engine, and nothing more.

An engine is built from a project and its bodies (``Engine(project, bodies)``), and then:

- ``read(robot)`` gives a :class:`RobotState` (joints in controller order, root pose and velocity,
  the sensors the engine measures);
- ``apply(robot, JointCommand)`` sets the commands and drive modes that hold until changed;
- ``collide()`` then ``integrate()`` make one tick (``step()`` is both): contacts first, because
  they do not depend on commands and can be found while controllers think;
- ``get_state()`` gives the whole state of the world at this tick as an :class:`EngineState`,
  and ``set_state(state)`` puts it back: stepping on from it gives what stepping on from the
  moment it was taken gave (exactly on MuJoCo and the kinematic stand-in; ODE: docs/python-api.md);
- ``reset()``, ``rebuild(project, bodies)``, ``set_link_data(...)``, ``link_states(model)``,
  ``link_values(model)`` and ``release()`` complete it.

What every engine shares is written once here: the checks of a command (arrays, drive-mode names),
the failed-state guard (a world that met a non-finite or exploding state refuses to step and keeps
its last readings until ``reset()``), the speed limits beyond which a state counts as exploding,
and an engine's settings (``settings()``: its ``world.<name>`` section over the defaults its
package declares). A subclass fills in the hooks ``_collide``, ``_integrate``, ``_measure``,
``_joint_names``, ``_command``, ``_get_state`` and ``_set_state``, and calls ``start()`` whenever
it (re)builds its world.

Everything engine-neutral stays above: gyro and accelerometer readings from link motion
(hrpsim/inertial.py), sensor schedules, hardware models, controller policies. Engines: ``ode``
(engines/ode), ``kinematic`` (the hardware stand-in), ``mujoco``, and any other registered by name
in hrpsim/engine_registry.py.
"""

from __future__ import annotations

import copy
import importlib
import inspect
import logging
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any, ClassVar, NoReturn

import numpy as np

from hrpsim.bodyinfo import Body
from hrpsim.conventions import drive_mode_problem
from hrpsim.engine_options import resolve
from hrpsim.engine_registry import (
    ENGINES,
    EngineDeclarationError,
    declaration,
    engine_target,
    install_hint,
    installed,
)
from hrpsim.engines import checks
from hrpsim.engines.checks import command_array
from hrpsim.errors import ConfigError, NotFound, RequestError, SimulationError
from hrpsim.kinematics import forward_kinematics
from hrpsim.project import Project

# Beyond these a body is exploding, not moving: every engine's guard stops the world there.
MAX_LINEAR_SPEED = 1e3  # m/s
MAX_ANGULAR_SPEED = 1e4  # rad/s

log = logging.getLogger("hrpsim.simserver")


@dataclass
class RobotState:
    """One robot's state at one tick, as controllers receive it.

    Joint arrays are in controller order; ``root_rotation`` is a 3x3 matrix; ``root_velocity`` is
    [linear, angular] of the root link's frame origin in the world frame; ``sensors`` maps a sensor
    name to its reading (see docs/protocol.md for each type's layout).
    """

    time: float
    tick: int
    q: np.ndarray
    dq: np.ndarray
    tau: np.ndarray
    root_position: np.ndarray
    root_rotation: np.ndarray
    root_velocity: np.ndarray
    sensors: dict[str, np.ndarray] = field(default_factory=dict)

    def to_wire(self) -> dict[str, Any]:
        """The fields of the tick protocol's ``state`` message."""
        return {
            "time": self.time,
            "tick": self.tick,
            "q": self.q,
            "dq": self.dq,
            "tau": self.tau,
            "root_position": self.root_position,
            "root_rotation": self.root_rotation,
            "root_velocity": self.root_velocity,
            "sensors": self.sensors,
        }

    @classmethod
    def from_wire(cls, msg: dict[str, Any]) -> RobotState:
        return cls(**{k: msg[k] for k in cls.__dataclass_fields__ if k in msg})


class StateSource(ABC):
    """One robot's state at the world's current tick, field by field (the fields of
    :class:`RobotState`): what a controller in the simulator's process reads
    (``hrpsim.controllers.state.LiveState``). A field is made when asked for: the engine's own
    array, read only, filled in place, this tick's until the world steps. An engine that can read
    its state this way returns one from :meth:`Engine.state_source`."""

    def __init__(self, engine: Engine, robot: str) -> None:
        self.engine, self.robot = engine, robot

    def field(self, name: str, tick: int) -> Any:
        """The field ``name`` of the robot's state at ``tick``, which must be the tick now."""
        if tick != self.engine.tick:
            raise RequestError(
                f"robot {self.robot!r}: a state of tick {tick} read at tick {self.engine.tick}: a state's "
                "values are read in its own tick (keep copies of what a later tick needs)"
            )
        return getattr(self, name)()

    @abstractmethod
    def joints(self) -> tuple[np.ndarray, np.ndarray]:
        """``q`` and ``dq``, read together (a controller that reads one reads the other)."""

    @abstractmethod
    def tau(self) -> np.ndarray: ...

    @abstractmethod
    def root_position(self) -> np.ndarray: ...

    @abstractmethod
    def root_rotation(self) -> np.ndarray: ...

    @abstractmethod
    def root_velocity(self) -> np.ndarray: ...

    @abstractmethod
    def sensors(self) -> dict[str, np.ndarray]: ...


def read_only(array: np.ndarray) -> np.ndarray:
    """A view of ``array`` that cannot be written through (the array itself stays writable)."""
    view = array.view()
    view.flags.writeable = False
    return view


@dataclass
class LinkStates:
    """Every link of one model, in link order, in the world frame: the link frame's origin and
    orientation (quaternion w x y z), the origin's linear velocity and the angular velocity."""

    positions: np.ndarray  # (links, 3)
    quaternions: np.ndarray  # (links, 4) w x y z
    linear: np.ndarray  # (links, 3)
    angular: np.ndarray  # (links, 3)

    def poses(self) -> np.ndarray:
        """(links, 7): x y z qw qx qy qz, the layout of the world-state stream."""
        return np.hstack([self.positions, self.quaternions])


@dataclass
class JointCommand:
    """Full-length arrays in controller order (None: leave that quantity as it is) and mode changes."""

    torque: np.ndarray | None = None
    q_ref: np.ndarray | None = None
    dq_ref: np.ndarray | None = None
    modes: dict[str, str] | None = None


@dataclass(frozen=True)
class EngineState:
    """An engine's whole state at one tick (:meth:`Engine.get_state`), to put back with
    :meth:`Engine.set_state` into the same world or another built from the same project.

    Plain data (numpy arrays, numbers, strings, lists and dicts of them): it can be kept, copied and
    pickled. ``layout`` says what world it belongs to (the engine, the models, each robot's joints
    and the time step); ``data`` is the engine's own and means nothing to anyone else."""

    engine: str
    layout: tuple[Any, ...]
    tick: int
    time: float
    data: dict[str, Any]


class Engine(ABC):
    """A world of models stepped tick by tick. Subclasses set the attributes below in ``__init__``."""

    name: ClassVar[str]
    project: Project
    bodies: dict[str, Body]
    timestep: float
    time: float
    tick: int
    failed: str | None  # why the world refuses to step until reset() (a non-finite state, say)
    casts_rays: ClassVar[bool] = False  # whether cast_rays() answers

    # --- models ---

    @property
    @abstractmethod
    def robots(self) -> list[str]:
        """Names of the models that move (have state and take commands), in project order."""

    @property
    def model_names(self) -> list[str]:
        return [m.name for m in self.project.models]

    def body(self, name: str) -> Body:
        try:
            return self.bodies[name]
        except KeyError:
            raise NotFound(f"no model named {name!r} in this world (models: {', '.join(self.bodies)})") from None

    def is_static(self, name: str) -> bool:
        return name not in self.robots

    def require_robot(self, name: str) -> Body:
        body = self.body(name)
        if self.is_static(name):
            raise RequestError(f"model {name!r} is static: it has no joints or state to command")
        return body

    def settings(self) -> SimpleNamespace:
        """This engine's settings: the project's ``world.<name>`` over the defaults it declares."""
        try:
            options = declaration(self.name).OPTIONS
        except EngineDeclarationError as exc:
            raise ConfigError(f"world.engine: {exc}") from None
        given = self.project.world.engine_settings.get(self.name)
        return resolve(f"world.{self.name}", given, tuple(options), where=self.project.path)

    # --- the tick ---

    def start(self) -> None:
        """Clock at zero, no failure, no readings kept: a subclass calls it whenever it (re)builds."""
        self.time, self.tick, self.failed = 0.0, 0, None
        self._last_state: dict[str, RobotState] = {}

    def collide(self) -> None:
        """Find this tick's contacts (independent of the commands)."""
        if self.failed is not None:
            raise SimulationError(self.failed)
        self._collide()

    def integrate(self) -> None:
        """Apply the held commands, advance one time step, ``tick += 1``."""
        if self.failed is not None:
            raise SimulationError(self.failed)
        self._integrate()

    def step(self) -> None:
        self.collide()
        self.integrate()

    @abstractmethod
    def _collide(self) -> None:
        """``collide()`` of a world that may step."""

    @abstractmethod
    def _integrate(self) -> None:
        """``integrate()`` of a world that may step."""

    def fail(self, where: str, detail: str) -> NoReturn:
        """Stop the world: it refuses to step until ``reset()`` and its last readings stay readable.
        ``where`` names the model and link, ``detail`` the numbers."""
        self.failed = (
            f"simulation stopped at t={self.time:.6g} s (tick {self.tick}): {where} has a "
            f"non-finite or exploding state ({detail})"
        )
        log.error("%s", self.failed)
        raise SimulationError(self.failed)

    # --- state and commands ---

    def read(self, robot: str) -> RobotState:
        """The robot's state now (once the world has failed, the last one read)."""
        if self.failed is not None and robot in self._last_state:
            return self._last_state[robot]
        state = self._measure(robot)
        self._last_state[robot] = state
        return state

    def state_source(self, robot: str) -> StateSource | None:
        """The robot's state field by field, filled in place (:class:`StateSource`), for a
        controller in this process; None from an engine that reads it whole (:meth:`read`)."""
        return None

    def forget_reading(self, robot: str) -> None:
        """The robot was moved by hand: its kept reading is no longer its state."""
        self._last_state.pop(robot, None)

    @abstractmethod
    def _measure(self, robot: str) -> RobotState:
        """The robot's state now, read from the physics (RequestError/NotFound for a wrong robot)."""

    def apply(self, robot: str, command: JointCommand) -> None:
        """Hold these commands and modes from now on; RequestError naming the field if they are wrong."""
        self.apply_checked(robot, self.check_command(robot, command))

    def check_command(self, robot: str, command: JointCommand) -> JointCommand:
        """The command as :meth:`apply_checked` takes it: full-length float arrays, finite, modes known;
        RequestError naming the field (and the joint) otherwise."""
        names = self._joint_names(robot)
        arrays = [
            command_array(robot, name, value, names)
            for name, value in (("torque", command.torque), ("q_ref", command.q_ref), ("dq_ref", command.dq_ref))
        ]
        modes = None if command.modes is None else checked_modes(robot, command.modes, names)
        return JointCommand(*arrays, modes)

    def apply_checked(self, robot: str, command: JointCommand) -> None:
        """:meth:`apply` of a command that has had its checks (full-length finite float arrays, valid
        modes, a robot of this world): the controller hub's, which checks every command on arrival."""
        self._command(robot, command.torque, command.q_ref, command.dq_ref, command.modes)

    @abstractmethod
    def _joint_names(self, robot: str) -> list[str]:
        """The robot's joints in controller order (RequestError/NotFound for a wrong robot); cheap."""

    @abstractmethod
    def _command(
        self,
        robot: str,
        torque: np.ndarray | None,
        q_ref: np.ndarray | None,
        dq_ref: np.ndarray | None,
        modes: dict[str, str] | None,
    ) -> None:
        """Hold these checked commands (full length, controller order; None: unchanged) and modes."""

    @abstractmethod
    def drive_modes(self, robot: str) -> list[str]:
        """Each joint's drive mode, controller order."""

    @abstractmethod
    def link_states(self, model: str) -> LinkStates:
        """Every link's world pose and velocity (static models too)."""

    def link_positions(self, model: str) -> np.ndarray:
        """Every link's world position, (links, 3): what :meth:`link_states` gives as ``positions``.
        The loop's guard reads it often; an engine that can skip the velocities overrides it."""
        return self.link_states(model).positions

    @abstractmethod
    def root_pose(self, model: str) -> tuple[np.ndarray, np.ndarray]:
        """World position and rotation matrix of the model's root link frame (cheap: read every tick)."""

    def root_height(self, model: str) -> float:
        """The z of the model's root link frame (the run summary reads it every tick)."""
        return float(self.root_pose(model)[0][2])

    @abstractmethod
    def link_values(self, model: str) -> tuple[np.ndarray, np.ndarray]:
        """Per link (link order) its joint value and rate now (0 for links without a joint)."""

    @abstractmethod
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
        """Put the robot into a configuration; unset quantities keep their values."""

    def set_external_force(self, robot: str, link: str, force: Any, torque: Any = (0.0, 0.0, 0.0)) -> None:
        raise RequestError(f"the {self.name} engine does not apply external forces")

    def contact_points(self) -> list[dict[str, Any]]:
        """This tick's contact points (after ``collide()``), for observers that record them: per point
        ``a`` and ``b`` (``MODEL/LINK``), ``position`` (world, m), ``normal`` (unit, world, pointing
        into ``a``: the direction in which the contact pushes ``a``) and ``depth`` (penetration, m).
        An engine without contacts reports none."""
        return []

    def cast_rays(
        self, model: str, link: str, origin: np.ndarray, directions: np.ndarray, max_distance: float
    ) -> np.ndarray:
        """Range sensors' beams through the engine's own ray casts (an engine whose ``casts_rays`` is
        True): per unit direction (n, 3, world) the distance from ``origin`` to the nearest shape of
        the world as it is now, passing through ``model``'s link ``link`` (the sensor's own); inf
        where nothing lies within ``max_distance``. Other engines' range sensors cast on the
        collision shapes themselves (simserver/range_sensors.py)."""
        raise NotImplementedError(f"the {self.name} engine casts no rays")

    def forward_kinematics(
        self, robot: str, q: Any = None, root_position: Any = None, root_rotation: Any = None
    ) -> list[tuple[np.ndarray, np.ndarray]]:
        """World poses of every link for the given joints/root (default: the current ones), moving nothing."""
        body = self.body(robot)
        values, _ = self.link_values(robot)
        if q is not None:
            arr = command_array(robot, "q", q, [link.name for link in body.joints])
            for k, link in enumerate(body.joints):
                values[body.link_index(link.name)] = arr[k]
        p0, r0 = self.root_pose(robot)
        p = p0 if root_position is None else checks.vector("root_position", root_position, 3)
        r = r0 if root_rotation is None else checks.rotation("root_rotation", root_rotation)
        return forward_kinematics(body, p, r, values)

    # --- snapshots ---

    def layout(self) -> tuple[Any, ...]:
        """What a state of this world is made of: the engine, the models, each robot's joints (in
        controller order) and the time step. A state fits another world when the layouts agree."""
        joints = tuple((robot, tuple(self._joint_names(robot))) for robot in self.robots)
        return (self.name, tuple(self.model_names), joints, self.timestep)

    def get_state(self) -> EngineState:
        """The whole state of the world now: bodies, held commands and drive modes, what sensors keep
        between steps, external forces. SimulationError for a failed world (reset it first)."""
        if self.failed is not None:
            raise SimulationError(f"{self.failed}; a failed world keeps no state to go back to (reset it first)")
        return EngineState(self.name, self.layout(), self.tick, self.time, self._get_state())

    def set_state(self, state: EngineState) -> None:
        """Put the world into ``state`` (from :meth:`get_state` of this world or of one built from the
        same project): stepping on gives what stepping on from where it was taken gave. A failed
        world is healthy again. RequestError when the state is of another world."""
        if not isinstance(state, EngineState):
            raise RequestError(f"set_state: expected an EngineState, got {type(state).__name__}")
        if state.layout != self.layout():
            raise RequestError(
                f"set_state: the state is of another world ({_layout_text(state.layout)}); "
                f"this one is {_layout_text(self.layout())}"
            )
        self._set_state(copy.deepcopy(state.data))  # a copy: a state can be put back any number of times
        self.tick, self.time, self.failed = state.tick, state.time, None
        self._last_state = {}

    def _get_state(self) -> dict[str, Any]:
        """The engine's own part of :meth:`get_state`: new arrays, not views of live ones."""
        raise RequestError(f"the {self.name} engine keeps no snapshots of its state")

    def _set_state(self, data: dict[str, Any]) -> None:
        """Put back what :meth:`_get_state` gave (the data is the caller's copy: it may be kept)."""
        raise RequestError(f"the {self.name} engine keeps no snapshots of its state")

    # --- life ---

    @abstractmethod
    def reset(self) -> None:
        """Back to the project's initial state."""

    @abstractmethod
    def rebuild(self, project: Project, bodies: dict[str, Body]) -> None:
        """Replace the whole world by another project's."""

    def close(self) -> None:  # noqa: B027 - most engines hold nothing outside the process
        """Let go of outside resources (connections); the state stays readable."""

    def serve_while_waiting(self, serve: Callable[[str], None] | None) -> None:  # noqa: B027 - most never wait
        """``serve(what)`` is called every few ms while a tick waits for an outside service (``what``
        names it), so the simulator keeps answering; it may raise SimulationError to end the wait."""

    def release(self) -> None:
        """Close and drop every engine object: the end of this world's life."""
        self.close()


def _layout_text(layout: tuple[Any, ...]) -> str:
    try:
        engine, models, joints, timestep = layout
        robots = ", ".join(f"{name} ({len(names)} joints)" for name, names in joints)
        return f"{engine}, models {', '.join(models)}, robots {robots or 'none'}, time step {timestep:g} s"
    except (TypeError, ValueError):
        return repr(layout)[:200]


def checked_modes(robot: str, modes: Any, names: list[str]) -> dict[str, str]:
    """Drive modes by joint name; RequestError naming the joint or the mode if one is wrong."""
    if not isinstance(modes, dict):
        raise RequestError(f"robot {robot!r}: 'modes' must be a map joint -> mode")
    for name, mode in modes.items():
        if (problem := drive_mode_problem(name, mode, names)) is not None:
            raise RequestError(f"robot {robot!r}: modes: {problem}")
    return modes


def engine_class(name: str) -> type[Engine]:
    """The engine class registered under ``name``; ConfigError naming the choices if there is none."""
    if name not in ENGINES:
        raise ConfigError(f"world.engine: unknown engine {name!r} (engines: {', '.join(ENGINES)})")
    try:
        if not installed(name):
            raise ImportError(f"{', '.join(declaration(name).REQUIRES)} cannot be imported")
        module_name, class_name = engine_target(name)
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ConfigError(
            f"world.engine: the {name} engine is not installed here ({exc}); {install_hint(name)}"
        ) from None
    return getattr(module, class_name)


def make_engine(project: Project, bodies: dict[str, Body], **options: Any) -> Engine:
    """Build the engine the project names (``world.engine``) for these bodies. ``options`` (such as
    ``nameserver``, where an engine finds services) go to the engines whose constructor takes them."""
    missing = [m.name for m in project.models if m.name not in bodies]
    if missing:
        raise ConfigError(f"{project.path}: no body loaded for model(s) {', '.join(missing)}")
    cls = engine_class(project.world.engine)
    accepted = inspect.signature(cls.__init__).parameters
    return cls(project, bodies, **{k: v for k, v in options.items() if k in accepted})
