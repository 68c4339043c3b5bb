"""The Python API: a whole simulation in this process, for scripts, notebooks, tests and sweeps.

    import hrpsim

    with hrpsim.Simulation("examples/sample_stand.yaml") as sim:
        sim.step(1000)
        state = sim.state("robot")          # what a controller receives: state.q, state.joint("X").q
        sim.command("robot", torque=...)    # full-length arrays in controller order
        print(sim.time, sim.summary()["robots"])

Models load in this process (no nameserver, no model loader), the engine is the project's
(``world.engine``), and ticks go through the same tick loop and controller hub as a simulator
process: controllers the project marks ``in_process: true``, or ones given to :meth:`attach`, run at
their turns with the same periods, policies and run summary as external ones.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hrpsim.bodyinfo import Body
from hrpsim.controllers.base import Controller
from hrpsim.controllers.state import JointIndex, State
from hrpsim.engines.base import JointCommand, make_engine
from hrpsim.errors import SimulationError
from hrpsim.project import Project, load_project
from hrpsim.runsummary import empty_summary
from hrpsim.simserver.bodies import load_bodies
from hrpsim.simserver.hub import ControllerHub, attach_in_process
from hrpsim.simserver.loop import TickLoop
from hrpsim.simserver.record import Observer
from hrpsim.simserver.run_summary import RootTracker


class Simulation:
    """One project's world, stepped by the caller. Close it (or use ``with``) to release the engine."""

    def __init__(
        self,
        project: str | Path | Project,
        *,
        bodies: dict[str, Body] | None = None,
        observers: list[Observer] | None = None,
    ) -> None:
        self.project = project if isinstance(project, Project) else load_project(project)
        self.bodies = bodies if bodies is not None else load_bodies(self.project, None, local=True)
        self.engine = make_engine(self.project, self.bodies)
        self.hub = ControllerHub(self.engine, self.project, bind=None)
        self._roots = RootTracker()
        self.loop = TickLoop(self.engine, self.hub, [self._roots, *(observers or [])])
        attach_in_process(self.hub, self.project)
        self.loop.begin()

    # --- time ---

    @property
    def time(self) -> float:
        return self.engine.time

    @property
    def tick(self) -> int:
        return self.engine.tick

    def step(self, n: int = 1) -> None:
        """Advance ``n`` ticks; SimulationError (naming model and link) if the world blows up, or a
        controller's policy stops the run.

        Observers may hold ticks between calls (the recorder writes 16 at a time): a script that
        steps one tick at a time would otherwise pay for a pipe write every tick. ``run``, an
        error and ``close`` hand everything over."""
        try:
            for _ in range(n):
                self.loop.tick_once()
        except SimulationError:
            self.loop.hand_over()
            raise

    def run(self, until: float | None = None) -> dict[str, Any]:
        """Step until simulated time ``until`` (default: the project's end_time); the run summary."""
        end = self.project.world.end_time if until is None else until
        self.step(max(0, round(end / self.engine.timestep) - self.engine.tick))
        self.loop.hand_over()
        return self.summary()

    # --- robots ---

    @property
    def robots(self) -> list[str]:
        return list(self.engine.robots)

    def state(self, robot: str) -> State:
        """The robot's state now, as a controller receives it."""
        return State(self.engine.read(robot).to_wire(), JointIndex(self.engine.body(robot).joint_names))

    def command(
        self,
        robot: str,
        *,
        torque: Any = None,
        q_ref: Any = None,
        dq_ref: Any = None,
        modes: dict[str, str] | None = None,
    ) -> None:
        """Hold these commands (full-length arrays, controller order) and drive modes from now on."""
        self.engine.apply(robot, JointCommand(torque=torque, q_ref=q_ref, dq_ref=dq_ref, modes=modes))

    def attach(
        self, controller: Controller, *, robot: str, name: str | None = None, period: float | None = None
    ) -> None:
        """Run ``controller`` (a Controller subclass instance) at its turns from the next tick on."""
        self.hub.attach_local(controller, name=name or type(controller).__name__, robot=robot, period=period)

    def push(self, robot: str, link: str, force: Any, *, duration: float, **where: Any) -> dict[str, Any]:
        """Push a link: ``force`` N (world) for ``duration`` s; ``time`` (default now), ``point`` (m, link
        frame) and ``torque`` (N m, world) optional (simserver/disturbances.py). What it will do."""
        return self.loop.disturbances.push(robot, link, force, duration=duration, **where)

    def set_link_data(self, robot: str, **values: Any) -> None:
        """Put a robot into a configuration: q, dq, root_position, root_rotation, root_velocity."""
        self.engine.set_link_data(robot, **values)

    # --- life ---

    def reset(self) -> None:
        """Back to the project's initial state; attached controllers are sent away."""
        self.hub.reconfigure(self.project)
        self.engine.reset()
        self.loop.clear()
        attach_in_process(self.hub, self.project)
        self.loop.begin()

    def summary(self) -> dict[str, Any]:
        return empty_summary(
            sim_time=self.engine.time,
            wall_time=self.loop.elapsed_wall(),
            real_time_factor=self.loop.real_time_factor(),
            ticks=self.engine.tick,
            robots=self._roots.robots(),
            controllers=self.hub.summary(),
            error=self.loop.error,
            engine=self.engine.name,
        )

    def close(self) -> None:
        """End the run for the observers (a recorder finishes its file), then release the engine."""
        summary = self.summary()
        for observer in self.loop.observers:
            observer.end(summary)
        self.hub.close()
        self.loop.observers = []
        self.engine.release()

    def __enter__(self) -> Simulation:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
