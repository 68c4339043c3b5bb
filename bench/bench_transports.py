"""Lockstep ticks/s of sample1 with its controller as a process on each same-host transport, over the
same controller in process, on each engine (ODE, MuJoCo).

bench_tick's world (sample1.wrl on floor.wrl, 1 ms step, every joint in torque mode under the PD law
of bench/tick_pd_controller.py) on the real tick loop and controller hub, four copies side by side:
the controller in process, and as a separate process (`hrpsim controller`) over shared memory (what
the SDK takes on the simulator's host), over the Unix channel alone (`--no-shared-memory`), and over
shared memory with a bounded spin of the controller (`--spin-us 200`) before it sleeps. Blocks of
ticks go round the four worlds so all see the same machine load; `ENGINE_TRANSPORT_ratio` is the
median over rounds of that world's ticks/s over the in-process world's in the same round, and
`ENGINE_TRANSPORT_rtt_p50_us` the median round trip (state handed over -> command received). On
MuJoCo a step costs far less than on ODE, so the transport is most of an external tick there. The
machine has 2 cores shared with other work: the spin takes a core from the simulator while it
lasts, so its figure depends on the load.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

import zmq

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_tick import External, InProcess, pd_project  # noqa: E402
from procs import nameserver_process  # noqa: E402

ENGINES = ("ode", "mujoco")
TRANSPORTS = {"shm": (), "unix": ("--no-shared-memory",), "shm_spin": ("--spin-us", "200")}
BLOCK = {"ode": 250, "mujoco": 1000}
ROUNDS = 8


def _engine(engine: str, nameserver: str, cache: dict, ctx: zmq.Context) -> dict[str, float]:
    inproc = InProcess(pd_project(1, 1, engine=engine), cache)
    worlds: dict[str, External] = {}
    try:
        for transport, options in TRANSPORTS.items():
            worlds[transport] = External(
                pd_project(1, 1, engine=engine),
                nameserver,
                cache,
                ctx,
                name=f"sim-{engine}-{transport}",
                sdk_options=options,
            )
        ratios: dict[str, list[float]] = {t: [] for t in worlds}
        inproc.run(100)
        for world in worlds.values():
            world.run(100)
        for _ in range(ROUNDS):
            base = inproc.run(BLOCK[engine])
            for transport, world in worlds.items():
                ratios[transport].append(world.run(BLOCK[engine]) / base)
        out = {}
        for transport, world in worlds.items():
            out[f"{engine}_{transport}_ratio"] = statistics.median(ratios[transport])
            out[f"{engine}_{transport}_rtt_p50_us"] = world.hub.summary()["pd0"]["rtt_p50_us"]
        out[f"{engine}_inprocess_ticks_per_s"] = inproc.run(BLOCK[engine])
        return out
    finally:
        for world in worlds.values():
            world.close()
        inproc.close()


def run() -> dict[str, float]:
    cache: dict = {}
    ctx = zmq.Context()
    figures: dict[str, float] = {}
    try:
        with nameserver_process() as nameserver:
            for engine in ENGINES:
                figures.update(_engine(engine, nameserver, cache, ctx))
                time.sleep(0.5)
    finally:
        ctx.destroy(linger=0)
    return {k: float(v) for k, v in figures.items()}


if __name__ == "__main__":
    for key, value in run().items():
        print(f"transports.{key} = {value:.4g}")
