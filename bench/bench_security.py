"""The cost of CurveZMQ: a service round trip and lockstep ticks/s with keys, against the same without.

`rpc_rtt_us` / `rpc_rtt_curve_us`: median round trip of `resolve` to a nameserver process without
keys and to one with keys (CURVE encryption, the allow-list checked once per connection), over tcp
loopback, calls to the two interleaved so machine load hits both alike; `rpc_ratio` = CURVE / plain.
`tick_ticks_per_s` / `tick_ticks_per_s_curve`: lockstep ticks/s of sample1 driven by the PD controller
of bench/tick_pd_controller.py as a separate process, through the simulator's tick loop and controller
hub; one world without keys and one with, in alternating blocks of 250 ticks (ABBA: each goes first
in half the pairs); `tick_ratio` = CURVE / plain, the median of adjacent blocks' ratios.
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

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from bench_rpc import median, samples_us  # noqa: E402
from procs import nameserver_process  # noqa: E402

from hrpsim.client import Client  # noqa: E402
from hrpsim.keys import main as keys_main  # noqa: E402

ROUNDS = 4000
ALTERNATIONS = 8
BLOCK = 250  # ticks
ROUNDS = 16


def _rpc(keys: Path) -> dict[str, float]:
    os.environ.pop("HRPSIM_KEYS", None)
    with nameserver_process() as plain_address, Client(plain_address, peer="plain nameserver") as plain:
        os.environ["HRPSIM_KEYS"] = str(keys)
        try:
            with nameserver_process() as curve_address, Client(curve_address, peer="curve nameserver") as curve:
                for client in (plain, curve):
                    client.call("register", name="bench", kind="bench", endpoint="tcp://x:1", owner="bench")
                plain_us, curve_us = [], []
                samples_us(lambda: plain.call("resolve", name="bench"), 300)
                samples_us(lambda: curve.call("resolve", name="bench"), 300)
                for _ in range(ALTERNATIONS):
                    for client in (plain, curve):  # keep the entry alive (it expires without heartbeats)
                        client.call("heartbeat", name="bench", owner="bench")
                    plain_us += samples_us(lambda: plain.call("resolve", name="bench"), ROUNDS // ALTERNATIONS)
                    curve_us += samples_us(lambda: curve.call("resolve", name="bench"), ROUNDS // ALTERNATIONS)
        finally:
            os.environ.pop("HRPSIM_KEYS", None)
    return {
        "rpc_rtt_us": median(plain_us),
        "rpc_rtt_curve_us": median(curve_us),
        "rpc_ratio": median(curve_us) / median(plain_us),
    }


class _Lockstep:
    """sample1 under the PD controller of bench/tick_pd_controller.py as a separate process, ticked
    by the simulator's own loop (engine, controller hub, TickLoop) in lockstep."""

    def __init__(self, nameserver: str, ctx, bodies: dict) -> None:
        from hrpsim.naming import Registration
        from hrpsim.rpc import DEFAULT_BIND
        from hrpsim.simserver.world import World

        project = _project()
        self.world = World(project, bodies=bodies, hub_bind=DEFAULT_BIND, context=ctx, record=False, end_time=math.inf)
        self.hub = self.world.hub
        self.registration = Registration(
            "simserver",
            "simserver",
            self.hub.endpoint,
            nameserver=nameserver,
            metadata={"controllers": self.hub.endpoint, "robots": ["robot"]},
        )
        self.registration.start()
        env = {**os.environ, "PYTHONPATH": str(HERE.parent), "HRPSIM_LOG_LEVEL": "WARNING"}
        argv = [
            sys.executable,
            str(HERE / "tick_pd_controller.py"),
            "--robot",
            "robot",
            "--name",
            "pd",
            "--nameserver",
            nameserver,
            "--reconnect-wait",
            "0",
        ]
        self.controller = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if self.hub.wait_for_controllers(["pd"], 60.0):
            self.close()
            raise RuntimeError("the PD controller did not attach")

    def run(self, ticks: int) -> float:
        start = time.perf_counter()
        self.world.step(ticks)
        return ticks / (time.perf_counter() - start)

    def close(self) -> None:
        self.world.close()
        self.registration.stop()
        self.controller.terminate()
        self.controller.wait(10)


def _project():
    from hrpsim.project import parse_project

    models = HERE.parent / "models" / "openhrp3" / "model"
    data = {
        "world": {"timestep": 0.001},
        "models": [
            {"name": "floor", "file": str(models / "floor.wrl"), "static": True, "position": [0, 0, -0.1]},
            {"name": "robot", "file": str(models / "sample1.wrl"), "position": [0, 0, 0.7235], "drive": "torque"},
        ],
        "controllers": [{"name": "pd", "robot": "robot", "command": "external", "policy": "stop", "deadline": 10.0}],
        "collisions": [{"a": "floor", "b": "robot", "friction": 0.5}],
    }
    return parse_project(data, str(Path(tempfile.gettempdir()) / "bench_security.yaml"))


def _tick(keys: Path) -> dict[str, float]:
    """Two such worlds in this process, one without keys and one with, their blocks of ticks
    alternating so that machine load hits both alike."""
    import zmq

    from hrpsim.modelloader import load_body

    bodies = {m.name: load_body(m.file) for m in _project().models}
    plain_ctx, curve_ctx = zmq.Context(), zmq.Context()
    os.environ.pop("HRPSIM_KEYS", None)
    try:
        with nameserver_process() as plain_ns:
            plain = _Lockstep(plain_ns, plain_ctx, bodies)
            time.sleep(0.5)  # its registration's heartbeat client is made without keys before they are set
            os.environ["HRPSIM_KEYS"] = str(keys)
            try:
                with nameserver_process() as curve_ns:
                    curve = _Lockstep(curve_ns, curve_ctx, bodies)
                    try:
                        return _alternate(plain, curve, BLOCK, ROUNDS)
                    finally:
                        curve.close()
            finally:
                plain.close()
                os.environ.pop("HRPSIM_KEYS", None)
    finally:
        plain_ctx.destroy(linger=0)
        curve_ctx.destroy(linger=0)


def _alternate(plain, curve, block: int, rounds: int) -> dict[str, float]:
    plain.run(50)
    curve.run(50)
    plain_rates, curve_rates = [], []
    for i in range(rounds):  # which goes first alternates too: the second of a pair runs faster here
        if i % 2:
            curve_rates.append(curve.run(block))
            plain_rates.append(plain.run(block))
        else:
            plain_rates.append(plain.run(block))
            curve_rates.append(curve.run(block))
    ratios = [c / p for p, c in zip(plain_rates, curve_rates, strict=True)]
    return {
        "tick_ticks_per_s": statistics.median(plain_rates),
        "tick_ticks_per_s_curve": statistics.median(curve_rates),
        "tick_ratio": statistics.median(ratios),
    }


def run() -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        keys = Path(tmp) / "keys"
        if keys_main(["new", str(keys)]) != 0:
            raise RuntimeError("could not make keys")
        return {**_rpc(keys), **_tick(keys)}


if __name__ == "__main__":
    for key, value in run().items():
        print(f"security.{key} = {value:.4g}")
