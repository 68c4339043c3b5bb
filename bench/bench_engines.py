"""Ticks/s of the sample walk on each engine (ODE, MuJoCo), controller in-process and external.

The sample walk is examples/sample_walk.yaml: sample1.wrl on floor.wrl at a 2 ms step, the OpenHRP3
walking pattern under its PD gains in torque mode (examples/controllers/sample_walk.py), 16 s.
In-process: the controller object is called between read and integrate in this process; both
engines walk the whole pattern side by side, in alternating blocks of ticks so that both see the
same machine load; `ENGINE_inprocess_ticks_per_s` is the median over blocks, `ENGINE_inprocess_rt`
that times the step (the real-time factor), `mujoco_over_ode_inprocess` the median ratio of
adjacent blocks; `ENGINE_engine_only_rt` (median over blocks too) leaves out the time spent in the
controller's own Python (the pattern interpolation and PD law, the same on both engines).
External: `hrpsim launch` of the same project (nameserver, model loader, simulator and the
controller as separate processes, lockstep over ZeroMQ), one engine after the other;
`ENGINE_external_rt` is the run's real-time factor from its summary, `ENGINE_external_ratio` =
external / in-process ticks/s of that engine. The machine has 2 cores shared with other work.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(REPO / "examples" / "controllers"))

from procs import launch_summary, walk_project  # noqa: E402
from sample_walk import SampleWalk  # noqa: E402

from hrpsim.modelloader import load_body  # noqa: E402
from hrpsim.project import load_project  # noqa: E402
from hrpsim.simulation import Simulation  # noqa: E402

PROJECT = REPO / "examples" / "sample_walk.yaml"
ENGINES = ("ode", "mujoco")
BLOCK = 500


class TimedWalk(SampleWalk):
    """The sample walk's controller, keeping the time its own turns take."""

    def __init__(self) -> None:
        super().__init__()
        self.seconds = 0.0

    def control(self, state):
        before = time.perf_counter()
        try:
            return super().control(state)
        finally:
            self.seconds += time.perf_counter() - before


class InProcessWalk:
    """One engine walking the pattern with the controller in process (hrpsim.Simulation)."""

    def __init__(self, engine: str, bodies: dict) -> None:
        project = load_project(PROJECT)
        project.world.engine = engine
        project.controllers = []
        self.sim = Simulation(project, bodies=bodies)
        self.controller = TimedWalk()
        self.sim.attach(self.controller, robot="robot", name="walker")
        self.end = project.world.end_time

    @property
    def finished(self) -> bool:
        return self.sim.time >= self.end - 1e-9

    def run(self, ticks: int) -> tuple[float, float]:
        """Ticks/s of the next ``ticks`` ticks, whole and without the controller's own time."""
        ticks = min(ticks, round((self.end - self.sim.time) / self.sim.engine.timestep))
        spent_before, start = self.controller.seconds, time.perf_counter()
        self.sim.step(ticks)
        elapsed = time.perf_counter() - start
        return ticks / elapsed, ticks / (elapsed - (self.controller.seconds - spent_before))


def _in_process() -> dict[str, float]:
    project = load_project(PROJECT)
    bodies = {m.name: load_body(m.file) for m in project.models}
    walks = {engine: InProcessWalk(engine, bodies) for engine in ENGINES}
    rates: dict[str, list[float]] = {engine: [] for engine in ENGINES}
    engine_only: dict[str, list[float]] = {engine: [] for engine in ENGINES}
    while not all(w.finished for w in walks.values()):
        for engine, walk in walks.items():
            if not walk.finished:
                whole, alone = walk.run(BLOCK)
                rates[engine].append(whole)
                engine_only[engine].append(alone)
    pairs = min(len(r) for r in rates.values())
    timestep = project.world.timestep
    out = {}
    for e in ENGINES:
        out[f"{e}_inprocess_ticks_per_s"] = statistics.median(rates[e])
        out[f"{e}_inprocess_rt"] = out[f"{e}_inprocess_ticks_per_s"] * timestep
        out[f"{e}_engine_only_rt"] = statistics.median(engine_only[e]) * timestep
    out["mujoco_over_ode_inprocess"] = statistics.median(rates["mujoco"][i] / rates["ode"][i] for i in range(pairs))
    return out


def _external(engine: str, folder: Path) -> float:
    """The real-time factor of the whole walk launched as processes on ``engine``."""
    return float(launch_summary(walk_project(folder, f"walk-{engine}", engine=engine), folder)["real_time_factor"])


def run() -> dict[str, float]:
    figures = _in_process()
    with tempfile.TemporaryDirectory() as tmp:
        for engine in ENGINES:
            rt = _external(engine, Path(tmp))
            figures[f"{engine}_external_rt"] = rt
            figures[f"{engine}_external_ratio"] = rt / figures[f"{engine}_inprocess_rt"]
    return figures


if __name__ == "__main__":
    for key, value in run().items():
        print(f"engines.{key} = {value:.4g}")
