"""Lockstep ticks/s of sample1 with an external controller process vs the same PD law in-process.

OdeEngine: sample1.wrl on floor.wrl, 1 ms step, world.step, every joint in torque mode under the PD law
of bench/tick_pd_controller.py (P 8000, D 100, holding the initial pose). `lockstep_ratio` =
external / in-process ticks/s: the in-process loop calls the PD function between collide and
integrate; the external loop runs the real ControllerHub with the controller as a separate process
(`hrpsim controller`), over tcp loopback, in lockstep. Blocks of ticks alternate between the two
worlds so both see the same machine load; the ratio is the median of adjacent blocks' ratios.
`rtt_p50_us` / `rtt_p99_us`: state sent -> command received, as the hub measures it.
`lockstep_ratio_raw`: the same with bench/tick_raw_controller.py, a controller that decodes nothing
but the tick and sends an empty command: the floor set by the transport (ZeroMQ's I/O threads and the
process wake-ups on each side) on this machine; the SDK's own cost is the gap between the two ratios.
`ticks_per_s_N`: a world of 8 sample1 robots with N of them driven by N external controllers
(the others hold their pose in high-gain mode): how the cost per tick grows with controllers.
The machine has 2 cores shared with other work: the 8-controller figure is CPU-bound.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import zmq

REPO = Path(__file__).resolve().parents[1]
MODELS = REPO.parent / "shared" / "models" / "openhrp3" / "model"
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from procs import nameserver_process  # noqa: E402
from tick_pd_controller import pd_torque  # noqa: E402

from hrpsim.engines.base import JointCommand  # noqa: E402
from hrpsim.engines.ode.engine import OdeEngine  # noqa: E402
from hrpsim.modelloader import load_body  # noqa: E402
from hrpsim.naming import Registration  # noqa: E402
from hrpsim.project import ControllerConfig, Project, parse_project  # noqa: E402
from hrpsim.simserver.hub import ControllerHub  # noqa: E402

TIMESTEP = 0.001
BLOCK = 250
ROUNDS = 8
SCALE_TICKS = 300
SPIN_US = os.environ.get("BENCH_TICK_SPIN_US", "0")
CONTROLLER = Path(__file__).resolve().parent / "tick_pd_controller.py"
RAW_CONTROLLER = Path(__file__).resolve().parent / "tick_raw_controller.py"


def _project(robots: int, controlled: int) -> Project:
    models = [{"name": "floor", "file": str(MODELS / "floor.wrl"), "static": True, "position": [0, 0, -0.1]}]
    for i in range(robots):
        models.append({"name": f"robot{i}", "file": str(MODELS / "sample1.wrl"), "position": [0, 2.0 * i, 0.7235],
                       "drive": "torque" if i < controlled else "high_gain"})
    data = {"world": {"timestep": TIMESTEP}, "models": models,
            "controllers": [{"name": f"pd{i}", "robot": f"robot{i}", "command": "external", "policy": "stop",
                             "deadline": 10.0} for i in range(controlled)],
            "collisions": [{"a": "floor", "b": f"robot{i}", "friction": 0.5} for i in range(robots)]}
    return parse_project(data, str(Path(tempfile.gettempdir()) / "bench_tick.yaml"))


def _world(project: Project, cache: dict) -> OdeEngine:
    bodies = {}
    for m in project.models:
        if m.file not in cache:
            cache[m.file] = load_body(m.file)
        bodies[m.name] = cache[m.file]
    return OdeEngine(project, bodies)


class External:
    """A world served by the real hub, its controllers as separate processes."""

    def __init__(self, project: Project, nameserver: str, cache: dict, ctx: zmq.Context, *,
                 raw: bool = False) -> None:
        self.world = _world(project, cache)
        self.hub = ControllerHub(self.world, project, context=ctx)
        self.reg = Registration("simserver", "simserver", self.hub.endpoint, nameserver=nameserver,
                                metadata={"controllers": self.hub.endpoint, "robots": self.world.robots})
        self.reg.start()
        env = {**os.environ, "PYTHONPATH": str(REPO), "HRPSIM_LOG_LEVEL": "WARNING"}
        def argv(c: ControllerConfig) -> list[str]:
            if raw:
                return [str(RAW_CONTROLLER), nameserver, c.name, c.robot]
            return [str(CONTROLLER), "--robot", c.robot, "--name", c.name, "--nameserver", nameserver,
                    "--reconnect-wait", "0", "--spin-us", SPIN_US]

        self.procs = [subprocess.Popen([sys.executable, *argv(c)], env=env, stdout=subprocess.DEVNULL,
                                       stderr=subprocess.DEVNULL) for c in project.controllers]
        missing = self.hub.wait_for_controllers([c.name for c in project.controllers], 60.0)
        if missing:
            self.close()
            raise RuntimeError(f"controllers {missing} did not attach")

    def run(self, ticks: int) -> float:
        world, hub = self.world, self.hub
        start = time.perf_counter()
        for _ in range(ticks):
            k = world.tick
            hub.poll()
            hub.before_collide(k)
            world.collide()
            hub.after_collide(k)
            world.integrate()
        return ticks / (time.perf_counter() - start)

    def close(self) -> None:
        self.hub.close()
        self.reg.stop()
        for p in self.procs:
            p.terminate()
        for p in self.procs:
            p.wait(10)


class InProcess:
    def __init__(self, project: Project, cache: dict) -> None:
        self.world = _world(project, cache)
        self.robot = project.controllers[0].robot
        names = self.world.body(self.robot).joint_names
        self.world.command(self.robot, modes=dict.fromkeys(names, "torque"))
        self.q_ref = self.world.read(self.robot).q.copy()

    def run(self, ticks: int) -> float:
        world, robot, q_ref = self.world, self.robot, self.q_ref
        start = time.perf_counter()
        for _ in range(ticks):
            world.collide()
            state = world.read(robot)
            world.apply(robot, JointCommand(torque=pd_torque(q_ref, state.q, state.dq)))
            world.integrate()
        return ticks / (time.perf_counter() - start)


def _lockstep(nameserver: str, cache: dict, ctx: zmq.Context, *, raw: bool = False) -> dict[str, float]:
    project = _project(1, 1)
    inproc, ext = InProcess(project, cache), External(project, nameserver, cache, ctx, raw=raw)
    try:
        inproc.run(50)
        ext.run(50)
        ratios, ext_rates, in_rates = [], [], []
        for _ in range(ROUNDS):
            a = inproc.run(BLOCK)
            b = ext.run(BLOCK)
            in_rates.append(a)
            ext_rates.append(b)
            ratios.append(b / a)
        rtt = ext.hub.summary()["pd0"]
    finally:
        ext.close()
    return {"lockstep_ratio": statistics.median(ratios), "ticks_per_s_inprocess": statistics.median(in_rates),
            "ticks_per_s_external": statistics.median(ext_rates), "rtt_p50_us": rtt["rtt_p50_us"],
            "rtt_p99_us": rtt["rtt_p99_us"]}


def _scaling(nameserver: str, cache: dict, ctx: zmq.Context) -> dict[str, float]:
    out = {}
    for n in (1, 2, 4, 8):
        ext = External(_project(8, n), nameserver, cache, ctx)
        try:
            ext.run(20)
            out[f"ticks_per_s_{n}"] = ext.run(SCALE_TICKS)
        finally:
            ext.close()
        time.sleep(3.5)  # the next world registers under the same name once this entry is gone
    return out


def run() -> dict[str, float]:
    cache: dict = {}
    ctx = zmq.Context()
    try:
        with nameserver_process() as nameserver:
            figures = _lockstep(nameserver, cache, ctx)
            time.sleep(3.5)
            figures["lockstep_ratio_raw"] = _lockstep(nameserver, cache, ctx, raw=True)["lockstep_ratio"]
            time.sleep(3.5)
            figures.update(_scaling(nameserver, cache, ctx))
    finally:
        ctx.destroy(linger=0)
    return {k: float(v) for k, v in figures.items() if v is not None and np.isfinite(v)}


if __name__ == "__main__":
    for key, value in run().items():
        print(f"tick.{key} = {value:.4g}")
