"""The Python API: a whole simulation in this process, for scripts, notebooks, tests and sweeps.

    import hrpsim

    with hrpsim.Simulation("examples/sample_stand.yaml") as sim:
        sim.step(1000)
        state = sim.state("robot")          # what a controller receives: state.q, state.joint("X").q
        sim.command("robot", torque=...)    # full-length arrays in controller order
        print(sim.time, sim.summary()["robots"])

Models load in this process (no nameserver, no model loader), the engine is the project's
(``world.engine``), and the world is the simulator process's own core (simserver/world.py): the
same tick loop, controller hub, operations, run state, reset, snapshots, recording (the project's
``record:``) and run summary; every call here is one call into it. Controllers the project marks
``in_process: true``, or ones given to :meth:`attach`, run at their turns with the same periods,
policies and statistics as external ones. A project whose controllers run as processes
(``command:``) is refused, naming them: ``hrpsim launch`` runs those.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hrpsim.bodyinfo import Body
from hrpsim.controllers.base import Controller
from hrpsim.controllers.state import JointIndex, State
from hrpsim.engines.base import RobotState
from hrpsim.errors import ConfigError
from hrpsim.project import Project, load_project
from hrpsim.simserver.bodies import load_bodies
from hrpsim.simserver.tick_record import Observer
from hrpsim.simserver.world import Snapshot, World, WorldFront


class ExternalControllers(ConfigError):
    """The project runs controllers as processes, which only ``hrpsim launch`` starts."""


class Simulation(WorldFront):
    """One project's world, stepped by the caller. Close it (or use ``with``) to release the engine.

    ``record``: record to this MCAP file instead of the project's ``record:`` file; ``False``:
    record nothing."""

    def __init__(
        self,
        project: str | Path | Project,
        *,
        bodies: dict[str, Body] | None = None,
        observers: list[Observer] | None = None,
        record: str | Path | bool | None = None,
    ) -> None:
        project = project if isinstance(project, Project) else load_project(project)
        refuse_external_controllers(project)
        self.bodies = bodies if bodies is not None else load_bodies(project, None, local=True)
        self.world = World(project, bodies=self.bodies, observers=observers, record=record)

    # --- time ---

    @property
    def time(self) -> float:
        return self.engine.time

    @property
    def tick(self) -> int:
        return self.engine.tick

    def step(self, n: int = 1) -> int:
        """Advance ``n`` ticks, and no further than the run's end time (the project's ``end_time``, or
        a later one :meth:`run` went to): reaching it ends the run. Returns the ticks made.
        SimulationError (naming model and link) if the world blows up, or a controller's policy stops
        the run; RequestError once the run has ended.

        Observers may hold ticks between calls (the recorder writes 16 at a time): a script that
        steps one tick at a time would otherwise pay for a pipe write every tick. ``run``, an
        error and ``close`` hand everything over."""
        return self.world.step(n)

    def run(self, until: float | None = None) -> dict[str, Any]:
        """Step until simulated time ``until`` (default: the end time; a later one becomes the end
        time); the run summary. Reaching the end time ends the run. SimulationError as :meth:`step`;
        the summary keeps the error too."""
        self.world.advance_to(until)
        return self.summary()

    @property
    def status(self) -> dict[str, Any]:
        """Where the run stands: ``status`` (paused, running, ended), ``reason``, ``end_time``, ``error``..."""
        return self.world.status()

    # --- robots ---

    @property
    def robots(self) -> list[str]:
        return list(self.engine.robots)

    def state(self, robot: str) -> State:
        """The robot's state now, as a controller receives it (through its hardware models, if any)."""
        return self._state(self.world.state(robot), robot)

    def raw_state(self, robot: str) -> State:
        """The robot's true state now, as the engine measures it (what observers and recordings see)."""
        return self._state(self.world.raw_state(robot), robot)

    def _state(self, state: RobotState, robot: str) -> State:
        return State.of(state, JointIndex(self.engine.body(robot).joint_names))

    def command(
        self,
        robot: str,
        *,
        torque: Any = None,
        q_ref: Any = None,
        dq_ref: Any = None,
        modes: dict[str, str] | None = None,
    ) -> None:
        """Hold these commands (full-length arrays, controller order) and drive modes from now on, as a
        controller's command: through the robot's held arrays and hardware models."""
        self.world.command(robot, torque=torque, q_ref=q_ref, dq_ref=dq_ref, modes=modes)

    def attach(
        self, controller: Controller, *, robot: str, name: str | None = None, period: float | None = None
    ) -> None:
        """Run ``controller`` (a Controller subclass instance) at its turns from the next tick on."""
        self.world.attach(controller, robot=robot, name=name, period=period)

    def push(self, robot: str, link: str, force: Any, *, duration: float, **where: Any) -> dict[str, Any]:
        """Push a link: ``force`` N (world) for ``duration`` s; ``time`` (default now), ``point`` (m, link
        frame) and ``torque`` (N m, world) optional (simserver/disturbances.py). What it will do."""
        return self.world.push(robot, link, force, duration=duration, **where)

    def set_link_data(self, robot: str, **values: Any) -> None:
        """Put a robot into a configuration: q, dq, root_position, root_rotation, root_velocity."""
        self.world.set_link_data(robot, **values)

    # --- snapshots ---

    def snapshot(self) -> Snapshot:
        """The simulation now, to come back to with :meth:`restore`: the engine's state, the commands
        held, the hardware models, the pushes, the controllers' statistics and the run
        (docs/python-api.md). Picklable; it restores into this simulation or another of the same
        project. SimulationError for a world that has blown up."""
        return self.world.snapshot()

    def restore(self, snapshot: Snapshot) -> None:
        """Go back to ``snapshot``: stepping on gives the ticks that followed it (exactly on MuJoCo
        and the kinematic stand-in; ODE: docs/python-api.md). Attached controllers stay attached with
        their own state. RequestError for another project's snapshot or a recorded run."""
        self.world.restore(snapshot)

    # --- life ---

    def reset(self) -> None:
        """Back to the project's initial state, as a new run: attached controllers are sent away,
        the project's in-process ones start afresh, a recorder starts its next file."""
        self.world.reset()

    def summary(self) -> dict[str, Any]:
        """The run summary, as the simulator process gives it (docs/architecture.md)."""
        return self.world.summary()

    def close(self) -> None:
        """End the run for the observers (a recorder finishes its file), then release the engine."""
        self.world.close()

    def __enter__(self) -> Simulation:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def refuse_external_controllers(project: Project) -> None:
    """A controller the project runs as a process would never be started here, and the robot
    would stand still: say so instead, naming it and the ways out."""
    external = [c for c in project.controllers if not c.in_process]
    if not external:
        return
    named = ", ".join(f"{c.name!r} (command: {c.command})" for c in external)
    raise ExternalControllers(
        f"{project.path}: hrpsim.Simulation runs controllers in this process only, and controller(s) "
        f"{named} run as processes. Run the project with `hrpsim launch {project.path}`; or give each "
        "`in_process: true` and its `file:` (a Python Controller); or drop them from "
        "project.controllers and drive the robot with sim.attach(...) or sim.command(...)"
    )
