"""Lockstep ticks/s of sample1 with an external controller process vs the same controller in process.

OdeEngine: sample1.wrl on floor.wrl, 1 ms step, world.step, every joint in torque mode under the PD law
of bench/tick_pd_controller.py (P 8000, D 100, holding the initial pose). Both sides run the real tick
loop and controller hub; the baseline runs the same Controller class in process (the hub calls it at its
turns, no transport), the external side runs it as a separate process (`hrpsim controller`) over
shared memory (states and commands written in place, an eventfd rung after each; hello, welcome and the
connection's end on the hub's Unix channel): what the SDK takes by default on the simulator's host.
The one-robot worlds check that their controller was reached that way. Blocks of ticks alternate
between the two worlds so both see the same machine load; each ratio is the median of adjacent blocks'
ratios (external / in-process ticks/s). `lockstep_ratio`: strict lockstep. `lockstep_ratio_raw`: with
bench/tick_raw_controller.py, which decodes nothing but the tick (same transport): the transport's floor.
`pipelined_ratio`: `command_delay: 1` (the answer to tick k acts from k + 1, so the controller computes
while the engine integrates) over the strict in-process loop; `pipelined_ratio_raw`: the same pipelined
world with bench/tick_raw_controller.py, in the same run: its floor; `pipelined_ratio_300us`: the same with a
controller that also computes for 300 us per turn, over the in-process loop doing the same work;
`pipelined_bound_300us`: in-process ticks/s without that work over with it, in the same rounds: the most
any overlap of the controller's work with the physics can give (one tick can never be shorter than the
in-process tick without the work). `rtt_p50_us` / `rtt_p99_us`: state sent -> command received (strict).
`ticks_per_s_N`: a world of 8 sample1 robots with N of them driven by N external controllers (the others
hold their pose in high-gain mode); `ticks_per_s_8_inprocess` the same 8 controllers in process, and
`scale_ratio_8` = ticks_per_s_8 / ticks_per_s_8_inprocess. The machine has 2 cores shared with other
work: the 8-controller figures are CPU-bound. `core_contention`: the in-process loop's ticks/s with the
second core idle over its ticks/s while another process keeps the second core busy (a Python busy loop),
alternating blocks: 1.0 where the two cores are independent; above it, the physics slows down whenever
a controller computes beside it, which is what pipelining relies on.
"""

from __future__ import annotations

import math
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
MODELS = REPO / "models" / "openhrp3" / "model"
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from procs import nameserver_process  # noqa: E402
from tick_pd_controller import HoldPD  # noqa: E402

from hrpsim import shared_state  # noqa: E402
from hrpsim.engines.base import Engine, make_engine  # noqa: E402
from hrpsim.modelloader import load_body  # noqa: E402
from hrpsim.naming import Registration, host_identity  # noqa: E402
from hrpsim.project import ControllerConfig, Project, parse_project  # noqa: E402
from hrpsim.rpc import DEFAULT_BIND  # noqa: E402
from hrpsim.simserver.shm_peers import SharedMemoryPeer  # noqa: E402
from hrpsim.simserver.world import World  # noqa: E402

TIMESTEP = 0.001
BLOCK = 250
ROUNDS = 16  # pairs of blocks per ratio: single blocks on a shared 2-core machine scatter by +-10 %
SCALE_TICKS = 300
SPIN_US = os.environ.get("BENCH_TICK_SPIN_US", "0")
CONTROLLER = Path(__file__).resolve().parent / "tick_pd_controller.py"
RAW_CONTROLLER = Path(__file__).resolve().parent / "tick_raw_controller.py"


def pd_project(robots: int, controlled: int, *, delay: int = 0, engine: str = "ode") -> Project:
    """sample1 robots on the floor, the first ``controlled`` of them in torque mode under external
    controllers pd0, pd1 ...; the others hold their pose in high-gain mode (bench_record uses it too)."""
    models = [{"name": "floor", "file": str(MODELS / "floor.wrl"), "static": True, "position": [0, 0, -0.1]}]
    for i in range(robots):
        models.append(
            {
                "name": f"robot{i}",
                "file": str(MODELS / "sample1.wrl"),
                "position": [0, 2.0 * i, 0.7235],
                "drive": "torque" if i < controlled else "high_gain",
            }
        )
    data = {
        "world": {"timestep": TIMESTEP, "command_delay": delay, "engine": engine},
        "models": models,
        "controllers": [
            {"name": f"pd{i}", "robot": f"robot{i}", "command": "external", "policy": "stop", "deadline": 10.0}
            for i in range(controlled)
        ],
        "collisions": [{"a": "floor", "b": f"robot{i}", "friction": 0.5} for i in range(robots)],
    }
    return parse_project(data, str(Path(tempfile.gettempdir()) / "bench_tick.yaml"))


def _world(project: Project, cache: dict) -> Engine:
    bodies = {}
    for m in project.models:
        if m.file not in cache:
            cache[m.file] = load_body(m.file)
        bodies[m.name] = cache[m.file]
    return make_engine(project, bodies)


def _core(project: Project, engine: Engine, **hub: object) -> World:
    """The simulator's own core over ``engine``: its hub (``hub``: where it binds), loop and observers.
    A run without an end (the figures come from as many ticks as the blocks ask for)."""
    return World(project, engine=engine, record=False, end_time=math.inf, **hub)


class _Loop:
    def run(self, ticks: int) -> float:
        start = time.perf_counter()
        self.world.step(ticks)
        return ticks / (time.perf_counter() - start)


class External(_Loop):
    """A world served by the real hub and loop, its controllers as separate processes."""

    def __init__(
        self,
        project: Project,
        nameserver: str,
        cache: dict,
        ctx: zmq.Context,
        *,
        raw: bool = False,
        work_us: float = 0.0,
        name: str = "simserver",
        sdk_options: tuple[str, ...] = (),
    ) -> None:
        """``name``: the world's registered name (its controllers attach to it); ``sdk_options``:
        more options for each ``hrpsim controller`` (such as --no-shared-memory), after the
        defaults, which they override (argparse keeps an option's last value)."""
        self.engine = _world(project, cache)
        self.world = _core(project, self.engine, hub_bind=DEFAULT_BIND, context=ctx)
        self.hub, self.loop = self.world.hub, self.world.loop
        self.reg = Registration(
            name,
            "simserver",
            self.hub.endpoint,
            nameserver=nameserver,
            metadata={
                "controllers": self.hub.endpoint,
                "controllers_ipc": self.hub.ipc_endpoint,
                "controllers_unix": self.hub.unix_endpoint,
                "host": host_identity(),
                "robots": self.engine.robots,
            },
        )
        self.reg.start()
        env = {**os.environ, "PYTHONPATH": str(REPO), "HRPSIM_LOG_LEVEL": "WARNING"}

        def argv(c: ControllerConfig) -> list[str]:
            if raw:
                return [str(RAW_CONTROLLER), nameserver, c.name, c.robot]
            return [
                str(CONTROLLER),
                "--robot",
                c.robot,
                "--name",
                c.name,
                "--nameserver",
                nameserver,
                "--simserver",
                name,
                "--reconnect-wait",
                "0",
                "--spin-us",
                SPIN_US,
                "-o",
                f"work_us={work_us}",
                *sdk_options,  # last: an option given here overrides the defaults above
            ]

        self.procs = [
            subprocess.Popen([sys.executable, *argv(c)], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            for c in project.controllers
        ]
        missing = self.hub.wait_for_controllers([c.name for c in project.controllers], 60.0)
        if missing:
            self.close()
            raise RuntimeError(f"controllers {missing} did not attach")
        self.loop.begin()

    def transports(self) -> set[str]:
        """How the hub reaches each attached controller."""
        return {_transport(c.peer) for c in self.hub.attachments.by_name.values()}

    def close(self) -> None:
        self.world.close()
        self.reg.stop()
        for p in self.procs:
            p.terminate()
        for p in self.procs:
            p.wait(10)


def _transport(peer: object) -> str:
    if isinstance(peer, SharedMemoryPeer):
        return "shared memory"
    return "in process" if getattr(peer, "in_process", False) else "message channel"


def _check_default_transport(ext: External) -> None:
    """A controller on the simulator's host takes shared memory by default where the platform has
    it: a figure measured over another transport would not be the SDK's."""
    expected = {"shared memory"} if shared_state.available() else {"message channel"}
    if ext.transports() != expected:
        raise RuntimeError(f"the controller was reached over {ext.transports()}, not {expected}")


class InProcess(_Loop):
    """The same world, loop and hub with the same controllers run in process."""

    def __init__(self, project: Project, cache: dict, *, work_us: float = 0.0) -> None:
        self.engine = _world(project, cache)
        self.world = _core(project, self.engine)
        self.hub, self.loop = self.world.hub, self.world.loop
        for c in project.controllers:
            self.world.attach(HoldPD(work_us=work_us), name=c.name, robot=c.robot)
        self.loop.begin()

    def close(self) -> None:
        self.world.close()


def _ratio(inproc: _Loop, ext: External, plain: _Loop | None = None) -> tuple[float, list[float], list[float], float]:
    """Median ratio external / in-process over alternating blocks; with ``plain`` (the in-process
    loop without the controller's extra work) also the median of in-process-with-work over plain:
    the most that overlapping the controller's work with the physics could gain."""
    inproc.run(50)
    ext.run(50)
    ratios, ext_rates, in_rates, bounds = [], [], [], []
    for _ in range(ROUNDS):
        a = inproc.run(BLOCK)
        b = ext.run(BLOCK)
        in_rates.append(a)
        ext_rates.append(b)
        ratios.append(b / a)
        if plain is not None:
            bounds.append(plain.run(BLOCK) / a)
    return statistics.median(ratios), in_rates, ext_rates, statistics.median(bounds) if bounds else float("nan")


def _lockstep(
    nameserver: str, cache: dict, ctx: zmq.Context, *, raw: bool = False, delay: int = 0, work_us: float = 0.0
) -> dict[str, float]:
    inproc = InProcess(pd_project(1, 1), cache, work_us=work_us)
    plain = InProcess(pd_project(1, 1), cache) if work_us else None
    ext = External(pd_project(1, 1, delay=delay), nameserver, cache, ctx, raw=raw, work_us=work_us)
    try:
        _check_default_transport(ext)
        ratio, in_rates, ext_rates, bound = _ratio(inproc, ext, plain)
        rtt = ext.hub.summary()["pd0"]
    finally:
        ext.close()
        inproc.close()
        if plain is not None:
            plain.close()
    return {
        "ratio": ratio,
        "bound": bound,
        "ticks_per_s_inprocess": statistics.median(in_rates),
        "ticks_per_s_external": statistics.median(ext_rates),
        "rtt_p50_us": rtt["rtt_p50_us"],
        "rtt_p99_us": rtt["rtt_p99_us"],
    }


def _scaling(nameserver: str, cache: dict, ctx: zmq.Context) -> dict[str, float]:
    out = {}
    for n in (1, 2, 4, 8):
        ext = External(pd_project(8, n), nameserver, cache, ctx)
        try:
            ext.run(20)
            out[f"ticks_per_s_{n}"] = ext.run(SCALE_TICKS)
        finally:
            ext.close()
        time.sleep(3.5)  # the next world registers under the same name once this entry is gone
    inproc = InProcess(pd_project(8, 8), cache)
    inproc.run(20)
    out["ticks_per_s_8_inprocess"] = inproc.run(SCALE_TICKS)
    inproc.close()
    out["scale_ratio_8"] = out["ticks_per_s_8"] / out["ticks_per_s_8_inprocess"]
    return out


def _core_contention(cache: dict) -> float:
    """In-process ticks/s alone over ticks/s with a busy loop in another process (median of pairs)."""
    inproc = InProcess(pd_project(1, 1), cache)
    inproc.run(50)
    ratios = []
    try:
        for _ in range(ROUNDS):
            alone = inproc.run(BLOCK)
            busy = subprocess.Popen([sys.executable, "-c", "while True: pass"])
            try:
                time.sleep(0.05)
                beside = inproc.run(BLOCK)
            finally:
                busy.kill()
                busy.wait(10)
            ratios.append(alone / beside)
    finally:
        inproc.close()
    return statistics.median(ratios)


def run() -> dict[str, float]:
    cache: dict = {}
    ctx = zmq.Context()
    pause = 3.5  # a world registers as "simserver" again once the last one's entry has expired
    try:
        with nameserver_process() as nameserver:
            strict = _lockstep(nameserver, cache, ctx)
            strict.pop("bound")
            figures = {"lockstep_ratio": strict.pop("ratio"), **strict}
            time.sleep(pause)
            figures["lockstep_ratio_raw"] = _lockstep(nameserver, cache, ctx, raw=True)["ratio"]
            time.sleep(pause)
            figures["pipelined_ratio"] = _lockstep(nameserver, cache, ctx, delay=1)["ratio"]
            time.sleep(pause)
            figures["pipelined_ratio_raw"] = _lockstep(nameserver, cache, ctx, raw=True, delay=1)["ratio"]
            time.sleep(pause)
            with_work = _lockstep(nameserver, cache, ctx, delay=1, work_us=300)
            figures["pipelined_ratio_300us"] = with_work["ratio"]
            figures["pipelined_bound_300us"] = with_work["bound"]
            time.sleep(pause)
            figures.update(_scaling(nameserver, cache, ctx))
            figures["core_contention"] = _core_contention(cache)
    finally:
        ctx.destroy(linger=0)
    return {k: float(v) for k, v in figures.items() if v is not None and np.isfinite(v)}


if __name__ == "__main__":
    for key, value in run().items():
        print(f"tick.{key} = {value:.4g}")
