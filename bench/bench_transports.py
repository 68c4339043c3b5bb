"""Lockstep ticks/s and CPU per tick of sample1's controller as a process on each same-host transport.

Each over the same controller in process, on each engine (ODE, MuJoCo).

bench_tick's world (sample1.wrl on floor.wrl, 1 ms step, every joint in torque mode under the PD law
of bench/tick_pd_controller.py) on the real tick loop and controller hub, four copies side by side:
the controller in process, and as a separate process (`hrpsim controller`) over shared memory (what
the SDK takes on the simulator's host), over the Unix channel alone (`--no-shared-memory`), and over
shared memory with a bounded spin of the controller (`--spin-us 200`) before it sleeps. Blocks of
ticks go round the four worlds so all see the same machine load; `ENGINE_TRANSPORT_ratio` is the
median over rounds of that world's ticks/s over the in-process world's in the same round, and
`ENGINE_TRANSPORT_rtt_p50_us` the median round trip (state handed over -> command received).
On a loaded machine wall-clock figures are mostly the scheduler's; what a transport itself costs
shows in CPU time: `ENGINE_TRANSPORT_cpu_us` is the CPU time per tick of the simulator's process
and the controller's together (every thread, from /proc/PID/task/*/schedstat), `ENGINE_inprocess_cpu_us`
the same for the in-process world, `ENGINE_TRANSPORT_cpu_ratio` in-process over external CPU per
tick: the ratio of ticks/s the two would reach where CPU is the only limit. On
MuJoCo a step costs far less than on ODE, so the transport is most of an external tick there. The
machine has 2 cores shared with other work: the spin takes a core from the simulator while it
lasts, so its figure depends on the load.
"""

from __future__ import annotations

import statistics
import sys
import time
from contextlib import ExitStack
from pathlib import Path

import zmq

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_tick import External, InProcess, pd_project
from procs import nameserver_process

ENGINES = ("ode", "mujoco")
TRANSPORTS = {"shm": (), "unix": ("--no-shared-memory",), "shm_spin": ("--spin-us", "200")}
BLOCK = {"ode": 250, "mujoco": 1000}
ROUNDS = 8


def _engine(engine: str, nameservers: dict[str, str], cache: dict, ctx: zmq.Context) -> dict[str, float]:
    """``nameservers``: one per transport (each world's controller registers under the same name)."""
    inproc = InProcess(pd_project(1, 1, engine=engine), cache)
    worlds: dict[str, External] = {}
    try:
        for transport, options in TRANSPORTS.items():
            worlds[transport] = External(
                pd_project(1, 1, engine=engine),
                nameservers[transport],
                cache,
                ctx,
                name=f"sim-{engine}-{transport}",
                sdk_options=options,
            )
        ratios: dict[str, list[float]] = {t: [] for t in worlds}
        cpu = {t: 0.0 for t in ("inprocess", *worlds)}
        inproc.run(100)
        for world in worlds.values():
            world.run(100)
        ticks = BLOCK[engine]
        for _ in range(ROUNDS):
            base, used = _timed(inproc, ticks, [])
            cpu["inprocess"] += used
            for transport, world in worlds.items():
                rate, used = _timed(world, ticks, [p.pid for p in world.procs])
                ratios[transport].append(rate / base)
                cpu[transport] += used
        per_tick = {t: 1e6 * seconds / (ROUNDS * ticks) for t, seconds in cpu.items()}
        out = {f"{engine}_inprocess_cpu_us": per_tick["inprocess"]}
        for transport, world in worlds.items():
            out[f"{engine}_{transport}_ratio"] = statistics.median(ratios[transport])
            out[f"{engine}_{transport}_rtt_p50_us"] = world.hub.summary()["pd0"]["rtt_p50_us"]
            out[f"{engine}_{transport}_cpu_us"] = per_tick[transport]
            out[f"{engine}_{transport}_cpu_ratio"] = per_tick["inprocess"] / per_tick[transport]
        out[f"{engine}_inprocess_ticks_per_s"] = inproc.run(BLOCK[engine])
        return out
    finally:
        for world in worlds.values():
            world.close()
        inproc.close()


def _cpu_s(pid: int | str) -> float:
    """CPU time of every thread of a process so far (ns resolution: the scheduler's own count)."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            total += int((task / "schedstat").read_text().split()[0])
        except (OSError, ValueError, IndexError):  # a thread that ended while listed
            continue
    return total * 1e-9


def _timed(world: InProcess | External, ticks: int, pids: list[int]) -> tuple[float, float]:
    """(ticks/s, CPU s of this process and ``pids``) of the world's next ``ticks`` ticks."""
    before = _cpu_s("self") + sum(_cpu_s(p) for p in pids)
    rate = world.run(ticks)
    return rate, _cpu_s("self") + sum(_cpu_s(p) for p in pids) - before


def run() -> dict[str, float]:
    cache: dict = {}
    ctx = zmq.Context()
    figures: dict[str, float] = {}
    try:
        with ExitStack() as stack:
            nameservers = {t: stack.enter_context(nameserver_process()) for t in TRANSPORTS}
            for engine in ENGINES:
                figures.update(_engine(engine, nameservers, cache, ctx))
                time.sleep(3.5)  # the controllers' entries expire before the next engine's attach
    finally:
        ctx.destroy(linger=0)
    return {k: float(v) for k, v in figures.items()}


if __name__ == "__main__":
    for key, value in run().items():
        print(f"transports.{key} = {value:.4g}")
