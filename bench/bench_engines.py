"""Ticks/s of the sample walk on each engine (ODE, MuJoCo), controller in-process and external; SR1,
GR001 and sample1 standing on each.

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
`ENGINE_external_rt` is the run's real-time factor from its summary (the median of LAUNCHES launches,
the engines and the floors below taking turns), `ENGINE_external_ratio` = external / in-process
ticks/s of that engine. `mujoco_external_pipelined_rt` / `_ratio`: the same MuJoCo launch pipelined
(`command_delay: 1`: the simulator steps while the controller computes), in the same turns, beside the
lockstep `mujoco_external_ratio`. `ENGINE_external_floor_ratio`: the same launch with
bench/walk_floor_controller.py, a controller process that only answers each state with the torques
the in-process walk's controller gave at that tick (no state check, no pattern, no PD law; the SDK's
link, shared memory on this host), over the in-process walk: the floor of an external tick, what
the transport and the two processes cost with nothing computed. Lockstep is deterministic, so the
replay walks the same path: `ENGINE_external_floor_z` and `ENGINE_inprocess_z`, the root's height at
the end of each, are the same number.
`raw_mujoco_ratio`: sample1 of the same project standing for 4 s under the PD law of
bench/tick_pd_controller.py (P 8000, D 100, holding the initial pose, every joint in torque mode),
hrpsim in process (hrpsim.Simulation, the controller attached in process) over a bare loop of
`mj_step` with the same PD law written into `ctrl`, on the same compiled MjModel (the engine's) with
its own MjData from the same initial state; blocks of ticks alternate between the two, the figure is
the median of the blocks' time ratios. `raw_mujoco_engine_ratio`: the same for the engine adapter
alone (a second world's engine read, commanded and stepped directly: the state as a controller
receives it, the command's checks, the step and the engine's checks, without the tick loop, the hub
and the controller protocol), over the same bare loop in the same alternation: the part of
`raw_mujoco_ratio` that is the engine's. `raw_mujoco_floor_ratio`: the bare loop plus the least
any tick that gives a controller hrpsim's state must add, written as directly as the bare loop
(:class:`FloorMujoco`: the state's arrays copied out, the command's values checked finite, the
state checked after the step), in an alternation of its own with the bare loop (a fourth loop in the
first one makes every block's caches colder and every ratio larger): the floor under
`raw_mujoco_ratio`.
`raw_mujoco_z_hrpsim` / `raw_mujoco_z_engine` / `raw_mujoco_z_floor` / `raw_mujoco_z_bare`: the
root's height at the end of each: the four integrate the same physics. The `raw_mujoco_*` figures are
medians over RAW_MUJOCO_PROCESSES fresh interpreters, one after the other: the same code read 1.71 to
1.90 from one process to the next (where its arrays and objects land), more than within one.
`stand_ROBOT_ENGINE_rt`: the real-time factor of sample1, SR1 and GR001 (Choreonoid body files)
standing in high-gain mode with no controller (examples/sample_stand.yaml, sr1_stand.yaml,
gr001_stand.yaml at a 2 ms step), in process (hrpsim.Simulation), each robot on each engine taking
turns in blocks of ticks for STAND_SECONDS of simulated time: the median block's; `stand_ROBOT_ENGINE_z`
the root's height at the end (each still standing). `stand_ROBOT_mujoco_launch_rt`: SR1 and GR001 on
MuJoCo launched as processes (examples/sr1_stand_mujoco.yaml, gr001_stand_mujoco.yaml, 5 s), the real-time
factor of the run summary.
The machine has 2 cores shared with other work.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(REPO / "examples" / "controllers"))

import mujoco  # noqa: E402
import numpy as np  # noqa: E402
from procs import launch_summary, walk_project  # noqa: E402
from sample_walk import SampleWalk  # noqa: E402
from tick_pd_controller import HoldPD, pd_torque  # noqa: E402

from hrpsim.engines.base import JointCommand  # noqa: E402
from hrpsim.modelloader import load_body  # noqa: E402
from hrpsim.project import load_project  # noqa: E402
from hrpsim.simulation import Simulation  # noqa: E402

PROJECT = REPO / "examples" / "sample_walk.yaml"
FLOOR_CONTROLLER = Path(__file__).resolve().parent / "walk_floor_controller.py"
ENGINES = ("ode", "mujoco")
BLOCK = 500
LAUNCHES = 3
RAW_MUJOCO_PROCESSES = 3


class TimedWalk(SampleWalk):
    """The sample walk's controller, keeping the time its own turns take and the torques it gave
    (one array per tick, kept by reference: the controller makes a new one each turn)."""

    def __init__(self) -> None:
        super().__init__()
        self.seconds = 0.0
        self.torques: list[np.ndarray] = []

    def control(self, state):
        before = time.perf_counter()
        try:
            command = super().control(state)
        finally:
            self.seconds += time.perf_counter() - before
        self.torques.append(command.torque)
        return command


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


def _in_process() -> tuple[dict[str, float], dict[str, np.ndarray]]:
    """The in-process figures, and per engine the torques its walk's controller gave (one row a tick)."""
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
        out[f"{e}_inprocess_z"] = float(walks[e].sim.engine.read("robot").root_position[2])
    out["mujoco_over_ode_inprocess"] = statistics.median(rates["mujoco"][i] / rates["ode"][i] for i in range(pairs))
    return out, {e: np.array(walks[e].controller.torques) for e in ENGINES}


def _external(engine: str, folder: Path, command_delay: int = 0) -> float:
    """The real-time factor of the whole walk launched as processes on ``engine`` (pipelined with
    ``command_delay: 1``)."""
    name = f"walk-{engine}-delay{command_delay}"
    project = walk_project(folder, name, engine=engine, command_delay=command_delay)
    return float(launch_summary(project, folder)["real_time_factor"])


def _external_floor(engine: str, torques: np.ndarray, folder: Path) -> tuple[float, float]:
    """The walk launched on ``engine`` with bench/walk_floor_controller.py replaying ``torques``:
    (real-time factor, the root's height at the end)."""
    replay = folder / f"walk-torques-{engine}.npy"
    np.save(replay, torques)
    command = f"python {FLOOR_CONTROLLER} {replay}"
    summary = launch_summary(walk_project(folder, f"walk-floor-{engine}", command=command, engine=engine), folder)
    return float(summary["real_time_factor"]), float(summary["robots"]["robot"]["root_end"][2])


def _launched(torques: dict[str, np.ndarray], folder: Path) -> dict[str, float]:
    """Each engine's external walk and its floor, LAUNCHES times in turn: the medians (the height at
    the end is the same in every floor launch: lockstep is deterministic)."""
    rts: dict[str, list[float]] = {}
    heights: dict[str, float] = {}
    for _ in range(LAUNCHES):
        for engine in ENGINES:
            rts.setdefault(f"{engine}_external_rt", []).append(_external(engine, folder))
            rt, heights[f"{engine}_external_floor_z"] = _external_floor(engine, torques[engine], folder)
            rts.setdefault(f"{engine}_external_floor_rt", []).append(rt)
        rts.setdefault("mujoco_external_pipelined_rt", []).append(_external("mujoco", folder, command_delay=1))
    return {**{name: statistics.median(values) for name, values in rts.items()}, **heights}


class BareMujoco:
    """``mj_step`` and the PD law, nothing else, on an engine's compiled model and initial state."""

    def __init__(self, engine, robot: str) -> None:
        model = engine.models[robot]
        self.m = engine.m
        self.d = mujoco.MjData(self.m)
        self.d.qpos[:], self.d.qvel[:], self.d.ctrl[:] = engine.d.qpos, engine.d.qvel, engine.d.ctrl
        mujoco.mj_forward(self.m, self.d)
        self.qpos, self.dofs = model.joint_qpos, model.joint_dofs
        self.actuators = model.drives._torque_actuators  # every joint is in torque mode
        self.q_ref = self.d.qpos[self.qpos].copy()
        self.root = int(model.bodies[0])

    def run(self, ticks: int) -> None:
        m, d = self.m, self.d
        for _ in range(ticks):
            d.ctrl[self.actuators] = pd_torque(self.q_ref, d.qpos[self.qpos], d.qvel[self.dofs])
            mujoco.mj_step(m, d)

    @property
    def z(self) -> float:
        return float(self.d.xpos[self.root][2])


class FloorMujoco(BareMujoco):
    """The bare loop plus what any tick that hands a controller hrpsim's state must do, and nothing
    else: copy the state out (q, dq, the applied torques, the root's position, rotation and
    velocity, the sensors' values), check the command's values are finite, check the state after
    the step (the engine's guard: two sums of squares)."""

    def __init__(self, engine, robot: str) -> None:
        super().__init__(engine, robot)
        d = self.d
        self.qpos_all, self.qvel_all, self.ctrl, self.xpos = d.qpos, d.qvel, d.ctrl, d.xpos
        self.xmat, self.sensordata = d.xmat.reshape(-1, 3, 3), d.sensordata
        self.velocity = np.empty(6)
        self.applied = np.zeros(len(self.qpos))

    def run(self, ticks: int) -> None:
        m, d, root = self.m, self.d, self.root
        for _ in range(ticks):
            q, dq = self.qpos_all[self.qpos], self.qvel_all[self.dofs]
            _ = (self.applied.copy(), self.xpos[root].copy(), self.xmat[root].copy(), self.sensordata.copy())
            mujoco.mj_objectVelocity(m, d, mujoco.mjtObj.mjOBJ_BODY, root, self.velocity, 0)
            _ = self.velocity.copy()
            torque = pd_torque(self.q_ref, q, dq)
            if np.count_nonzero(np.isfinite(torque)) != torque.size:
                raise RuntimeError("a non-finite torque")
            self.ctrl[self.actuators] = self.applied = torque
            mujoco.mj_step(m, d)
            if not (self.qpos_all.dot(self.qpos_all) < 1e8 and self.qvel_all.dot(self.qvel_all) < 1e8):
                raise RuntimeError("the state went bad")


class EngineOnly:
    """The engine adapter alone: the state read as a controller receives it, the PD law's command
    applied (and checked) and one tick, with no loop, hub or controller protocol around them."""

    def __init__(self, engine, robot: str) -> None:
        self.engine, self.robot = engine, robot
        self.q_ref = engine.read(robot).q.copy()

    def run(self, ticks: int) -> None:
        engine, robot = self.engine, self.robot
        for _ in range(ticks):
            state = engine.read(robot)
            engine.apply(robot, JointCommand(torque=pd_torque(self.q_ref, state.q, state.dq)))
            engine.step()

    @property
    def z(self) -> float:
        return float(self.engine.read(self.robot).root_position[2])


STANDING = {"sample1": "sample_stand.yaml", "sr1": "sr1_stand.yaml", "gr001": "gr001_stand.yaml"}
STAND_SECONDS = 4.0


def _standing_world(file: str, engine: str, bodies: dict) -> Simulation:
    project = load_project(REPO / "examples" / file)
    project.world.engine = engine
    return Simulation(project, bodies=bodies)


def _standing() -> dict[str, float]:
    """Each robot standing on each engine, in process, in turns: real-time factors and end heights."""
    sims = {}
    for robot, file in STANDING.items():
        bodies = {m.name: load_body(m.file) for m in load_project(REPO / "examples" / file).models}
        for engine in ENGINES:
            sims[(robot, engine)] = _standing_world(file, engine, bodies)
    rates: dict[tuple[str, str], list[float]] = {key: [] for key in sims}
    block = BLOCK // 2
    for _ in range(round(STAND_SECONDS / 0.002 / block)):
        for key, sim in sims.items():
            start = time.perf_counter()
            sim.step(block)
            rates[key].append(block * sim.project.world.timestep / (time.perf_counter() - start))
    out = {}
    for (robot, engine), sim in sims.items():
        out[f"stand_{robot}_{engine}_rt"] = statistics.median(rates[(robot, engine)])
        out[f"stand_{robot}_{engine}_z"] = float(sim.engine.read("robot").root_position[2])
        sim.close()
    return out


def _standing_launched(folder: Path) -> dict[str, float]:
    return {
        f"stand_{robot}_mujoco_launch_rt": float(
            launch_summary(REPO / "examples" / f"{robot}_stand_mujoco.yaml", folder)["real_time_factor"]
        )
        for robot in ("sr1", "gr001")
    }


def _mujoco_world(bodies: dict) -> Simulation:
    project = load_project(PROJECT)
    project.world.engine = "mujoco"
    project.controllers = []
    return Simulation(project, bodies=bodies)


def _raw_mujoco(seconds: float = 4.0, block: int = 250) -> dict[str, float]:
    bodies = {m.name: load_body(m.file) for m in load_project(PROJECT).models}
    sim, alone = _mujoco_world(bodies), _mujoco_world(bodies)
    bare = BareMujoco(sim.engine, "robot")
    floor = FloorMujoco(alone.engine, "robot")
    sim.attach(HoldPD(), robot="robot", name="pd")
    engine_only = EngineOnly(alone.engine, "robot")
    ratios, engine_ratios, floor_ratios = [], [], []
    for _ in range(round(seconds / sim.project.world.timestep / block)):
        start = time.perf_counter()
        sim.step(block)
        ours = time.perf_counter() - start
        start = time.perf_counter()
        engine_only.run(block)
        engine = time.perf_counter() - start
        start = time.perf_counter()
        bare.run(block)
        theirs = time.perf_counter() - start
        ratios.append(ours / theirs)
        engine_ratios.append(engine / theirs)
    for _ in range(len(ratios)):  # its own alternation: a fourth loop above would cool every block's caches
        start = time.perf_counter()
        floor.run(block)
        least = time.perf_counter() - start
        start = time.perf_counter()
        bare.run(block)
        floor_ratios.append(least / (time.perf_counter() - start))
    return {
        "raw_mujoco_ratio": statistics.median(ratios),
        "raw_mujoco_engine_ratio": statistics.median(engine_ratios),
        "raw_mujoco_floor_ratio": statistics.median(floor_ratios),
        "raw_mujoco_z_hrpsim": float(sim.engine.read("robot").root_position[2]),
        "raw_mujoco_z_engine": engine_only.z,
        "raw_mujoco_z_floor": floor.z,
        "raw_mujoco_z_bare": bare.z,
    }


def _raw_mujoco_in_processes() -> dict[str, float]:
    """:func:`_raw_mujoco` in RAW_MUJOCO_PROCESSES fresh interpreters: the median of each figure."""
    runs = []
    for _ in range(RAW_MUJOCO_PROCESSES):
        done = subprocess.run(
            [sys.executable, __file__, "--raw-mujoco"], capture_output=True, text=True, check=True, timeout=600
        )
        runs.append(json.loads(done.stdout.splitlines()[-1]))
    return {name: statistics.median(run[name] for run in runs) for name in runs[0]}


def run() -> dict[str, float]:
    figures = _raw_mujoco_in_processes()
    in_process, torques = _in_process()
    figures.update(in_process)
    figures.update(_standing())
    with tempfile.TemporaryDirectory() as tmp:
        figures.update(_launched(torques, Path(tmp)))
        figures.update(_standing_launched(Path(tmp)))
    for engine in ENGINES:
        for kind in ("external", "external_floor"):
            figures[f"{engine}_{kind}_ratio"] = figures[f"{engine}_{kind}_rt"] / figures[f"{engine}_inprocess_rt"]
    pipelined = figures["mujoco_external_pipelined_rt"]
    figures["mujoco_external_pipelined_ratio"] = pipelined / figures["mujoco_inprocess_rt"]
    return figures


if __name__ == "__main__":
    if sys.argv[1:] == ["--raw-mujoco"]:
        print(json.dumps(_raw_mujoco()))
        sys.exit(0)
    if sys.argv[1:] == ["--standing"]:  # the standing figures alone
        with tempfile.TemporaryDirectory() as tmp:
            for key, value in {**_standing(), **_standing_launched(Path(tmp))}.items():
                print(f"engines.{key} = {value:.4g}")
        sys.exit(0)
    for key, value in run().items():
        print(f"engines.{key} = {value:.4g}")
