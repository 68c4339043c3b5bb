"""Recording the sample walk: tick time with the recorder on / off, file size, plot time.

`tick_ratio` = wall time per tick with `--record` / without, for `hrpsim launch
examples/sample_walk.yaml --until UNTIL` (the real stack: controller process, lockstep); the
simulator's own wall time from the run summary, so start-up is left out. ROUNDS pairs of runs,
off then on and on then off in turn; the ratio is the median of the pairs, so both see the same
machine load.
`tick_us_off` / `tick_us_on`: the medians. `bytes_per_sim_s`: the recording's size over the
simulated time (zstd chunks). `plot_s`: `hrpsim plot --joint RLEG_KNEE -o knee.png` on a recording
of the whole 16 s walk, as a user runs it (a new interpreter, matplotlib's import included);
`plot_ratio` = that over `plot_baseline_s`, a new interpreter that imports matplotlib and writes
an empty figure: what the reading and decoding of the recording add.

`tick_ratio` swings with the machine: on a shared virtual machine the same launch takes from 1.2
to 2.1 ms a tick from one run to the next, so the pairs spread over a few tenths
(`tick_ratio_low` / `_high`: the smallest and largest pair) and their median moves by 0.1 from one
bench run to the next. `interleaved_ratio` measures the same
cost inside one run, where slow swings cancel: the walk through hrpsim.Simulation with its
controller in process and a recorder that sees only every other block of BLOCK ticks; the ratio
is the median, over neighbouring blocks, of a recorded block's wall time over an unrecorded
one's. It counts all the recorder costs: its tick-thread work, and its writer process's use of
the other core. `interleaved_ratio_external`: the same with the controller as a process of its
own, as in a launch: bench_tick's world (sample1 standing under a PD controller process, 1 ms
step, the real hub and tick loop, the Unix channel, lockstep), EXTERNAL_BLOCKS blocks. Aim:
at most 1.10. With the writer process swapped for one that only drains the pipe, both
interleaved ratios stay where they are: what is left is the tick thread's own ~50 µs a tick.

`ticks_per_s_off` / `_default` / `_ros2`: the walk (controller in process) for PROFILE_UNTIL
simulated seconds, not recorded, recorded, and recorded with `--record-profile ros2` (the writer
process also writes the ROS 2 bag), after PROFILE_WARMUP_S (the writer process starts then); the
wall time runs to the file (and bag) finished, so a writer that falls behind shows.
PROFILE_ROUNDS rounds, the order turning each round; medians. `default_ratio` / `ros2_ratio`:
the median per round of the unrecorded run's ticks/s over the recorded one's (1.0: no cost).
`ros2_over_default`: the median per round of the ros2 run's ticks/s over the default-profile
run's (1.0: the bag costs the run nothing more than the recording does). These runs share the
machine's two cores with the writer process, so on a loaded machine they move with its load.
`writer_us_default` / `_ros2`: the writer process's own work per tick, in this process: the
values the recorder hands over for WRITER_TICKS ticks of the walk, kept once, then fed to the
writer's code (recording/writer_process.py's Batcher) without and with the bag, WRITER_ROUNDS
rounds in turn, the ticks timed (not the start, not the finish); medians. `writer_ratio`: ros2
over default, per round, median. It is the CPU time the bag takes from a loaded machine.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from unittest import mock

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import zmq  # noqa: E402
from bench_tick import External, pd_project  # noqa: E402
from procs import nameserver_process  # noqa: E402

import hrpsim  # noqa: E402
from hrpsim.project import load_project  # noqa: E402
from hrpsim.recording import writer as recorder_module  # noqa: E402
from hrpsim.recording.mcap_file import McapFile  # noqa: E402
from hrpsim.recording.writer import Recorder  # noqa: E402
from hrpsim.recording.writer_process import Batcher  # noqa: E402

WALK = REPO / "examples" / "sample_walk.yaml"
UNTIL = 6.0
ROUNDS = 6
BLOCK = 100  # ticks per block of the interleaved measures
EXTERNAL_BLOCKS = 40
PROFILE_UNTIL = 2.0
PROFILE_WARMUP_S = 0.5  # simulated seconds before the clock starts: the writer process's start-up is no tick's cost
PROFILE_ROUNDS = 3
PROFILES = (None, "hrpsim", "ros2")  # not recorded, the default profile, the ros2 profile
WRITER_TICKS = 1000
WRITER_ROUNDS = 3
ENV = {**os.environ, "PYTHONPATH": str(REPO), "HRPSIM_LOG_LEVEL": "WARNING"}
BASELINE = (
    "import matplotlib; matplotlib.use('Agg'); from matplotlib import pyplot as plt; "
    "f, a = plt.subplots(2, 1); f.savefig(__import__('sys').argv[1])"
)


def _launch(folder: Path, until: float | None, record: Path | None) -> dict:
    summary = folder / "summary.json"
    argv = [
        sys.executable,
        "-m",
        "hrpsim",
        "launch",
        str(WALK),
        "--quiet",
        "--summary",
        str(summary),
        "--nameserver",
        "tcp://127.0.0.1:*",
        "--run-dir",
        str(folder / f"run-{len(list(folder.glob('run-*')))}"),
    ]
    argv += ["--until", repr(until)] if until else []
    argv += ["--record", str(record)] if record else []
    subprocess.run(argv, env=ENV, cwd=REPO, check=True, stdout=subprocess.DEVNULL, timeout=600)
    return json.loads(summary.read_text())


def _tick_us(summary: dict) -> float:
    return summary["wall_time"] / summary["ticks"] * 1e6


def _timed(argv: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, env=ENV, cwd=REPO, check=True, stdout=subprocess.DEVNULL, timeout=300)
    return time.perf_counter() - start


class _EveryOtherBlock:
    """Hands the recorder the ticks of the blocks marked ``on``; begin, flush and end always."""

    def __init__(self, recorder: Recorder) -> None:
        self.recorder = recorder
        self.on = False

    def begin(self, engine: object) -> None:
        self.recorder.begin(engine)

    def observe(self, record: object) -> None:
        if self.on:
            self.recorder.observe(record)

    def flush(self) -> None:
        self.recorder.flush()

    def end(self, summary: dict) -> None:
        self.recorder.end(summary)


def _alternate(gate: _EveryOtherBlock, step: Callable[[int], None], blocks: int) -> float:
    """Median over neighbouring blocks of BLOCK ticks: recorded wall time over unrecorded."""
    walls: list[float] = []
    for k in range(blocks):
        gate.on = k % 2 == 1
        start = time.perf_counter()
        step(BLOCK)
        walls.append(time.perf_counter() - start)
    return statistics.median(walls[k + 1] / walls[k] for k in range(0, blocks - 1, 2))


def _interleaved(folder: Path) -> float:
    """The walk, its controller in process (hrpsim.Simulation)."""
    project = load_project(WALK)
    project.world.end_time = UNTIL
    walker = project.controllers[0]
    walker.in_process, walker.file = True, str(REPO / "examples" / "controllers" / "sample_walk.py")
    gate = _EveryOtherBlock(Recorder(folder / "interleaved.mcap"))
    with hrpsim.Simulation(project, observers=[gate]) as sim:
        blocks = round(UNTIL / sim.engine.timestep) // BLOCK
        return _alternate(gate, sim.step, blocks - blocks % 2)


def _interleaved_external(folder: Path) -> float:
    """sample1 held by a PD controller process (bench_tick's world: the real hub and loop, the
    controller over the Unix channel, lockstep)."""
    gate = _EveryOtherBlock(Recorder(folder / "external.mcap"))
    with nameserver_process() as nameserver:
        context = zmq.Context()
        ext = External(pd_project(1, 1), nameserver, {}, context)
        ext.world.observers.append(gate)
        gate.begin(ext.engine)

        def step(n: int) -> None:
            ext.world.step(n)
            ext.world.hand_over()

        try:
            step(BLOCK)
            return _alternate(gate, step, EXTERNAL_BLOCKS)
        finally:
            gate.end({})
            ext.close()
            context.term()


def _walk_in_process() -> object:
    project = load_project(WALK)
    project.world.end_time = PROFILE_WARMUP_S + PROFILE_UNTIL
    walker = project.controllers[0]
    walker.in_process, walker.file = True, str(REPO / "examples" / "controllers" / "sample_walk.py")
    return project


def _profile_ticks_per_s(folder: Path, profile: str | None, index: int) -> float:
    """Ticks per wall second of the walk in process, from its first step to its recording finished."""
    observers = [Recorder(folder / f"profile-{profile}-{index}.mcap", profile=profile)] if profile else []
    sim = hrpsim.Simulation(_walk_in_process(), observers=observers)
    ticks = round(PROFILE_UNTIL / sim.engine.timestep)
    sim.step(round(PROFILE_WARMUP_S / sim.engine.timestep))  # the recorder's writer process starts meanwhile
    start = time.perf_counter()
    sim.step(ticks)
    sim.close()  # the recorder hands everything over and waits for its writer (and bag) to finish
    return ticks / (time.perf_counter() - start)


def _profiles(folder: Path) -> dict[str, float]:
    rates: dict[str | None, list[float]] = {p: [] for p in PROFILES}
    for k in range(PROFILE_ROUNDS):
        order = PROFILES[k % 3 :] + PROFILES[: k % 3]
        for profile in order:
            rates[profile].append(_profile_ticks_per_s(folder, profile, k))
    off = rates[None]
    return {
        "ticks_per_s_off": statistics.median(off),
        "ticks_per_s_default": statistics.median(rates["hrpsim"]),
        "ticks_per_s_ros2": statistics.median(rates["ros2"]),
        "default_ratio": statistics.median(a / b for a, b in zip(off, rates["hrpsim"], strict=True)),
        "ros2_ratio": statistics.median(a / b for a, b in zip(off, rates["ros2"], strict=True)),
        "ros2_over_default": statistics.median(a / b for a, b in zip(rates["ros2"], rates["hrpsim"], strict=True)),
    }


def _handed_over(folder: Path) -> list[Any]:
    """What the recorder hands its writer process for WRITER_TICKS ticks of the walk."""
    kept: list[Any] = []

    class KeptValues:
        """Stands in for the writer process: keeps what the recorder hands it."""

        def __init__(self, path: Path) -> None:
            pass

        def send(self, value: Any, *, now: bool = False) -> None:
            kept.append(value)

        def flush(self) -> None:
            pass

        def close(self) -> None:
            pass

    recorder = Recorder(folder / "kept.mcap")
    with (
        mock.patch.object(recorder_module, "WriterProcess", KeptValues),
        hrpsim.Simulation(_walk_in_process(), observers=[recorder]) as sim,
    ):
        sim.step(WRITER_TICKS)
    return kept


def _writer_us_per_tick(values: list[Any], folder: Path, bag: bool) -> float:
    """The writer's code on ``values`` in this process: µs per tick, with or without the bag."""
    (_, begin), *ticks = values
    batcher = Batcher(McapFile(open(folder / "file.mcap", "wb")))  # noqa: SIM115 (the batcher closes it)
    profile = {"profile": "ros2", "profile_place": str(folder / "bag")} if bag else {"profile": "hrpsim"}
    batcher.take(["begin", {**begin, **profile}])
    start = time.perf_counter()
    for value in ticks:
        batcher.take(value)
    elapsed = time.perf_counter() - start
    batcher.finish()
    return elapsed / sum(value[0] == "tick" for value in ticks) * 1e6


def _writer_work(folder: Path) -> dict[str, float]:
    values = _handed_over(folder)
    default, ros2 = [], []
    for k in range(WRITER_ROUNDS):
        for bag in (False, True) if k % 2 == 0 else (True, False):
            place = folder / f"writer-{k}-{bag}"
            place.mkdir()
            (ros2 if bag else default).append(_writer_us_per_tick(values, place, bag))
    return {
        "writer_us_default": statistics.median(default),
        "writer_us_ros2": statistics.median(ros2),
        "writer_ratio": statistics.median(b / a for a, b in zip(default, ros2, strict=True)),
    }


def run() -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="bench-record-") as tmp:
        folder = Path(tmp)
        off, on, ratios, sizes = [], [], [], []
        for k in range(ROUNDS):
            record = folder / f"walk-{k}.mcap"
            if k % 2:  # every other round the recorded run goes first, so an order effect cancels
                summary = _launch(folder, UNTIL, record)
                a = _tick_us(_launch(folder, UNTIL, None))
            else:
                a = _tick_us(_launch(folder, UNTIL, None))
                summary = _launch(folder, UNTIL, record)
            b = _tick_us(summary)
            off.append(a)
            on.append(b)
            ratios.append(b / a)
            sizes.append(record.stat().st_size / summary["sim_time"])
        interleaved = _interleaved(folder)
        external = _interleaved_external(folder)
        profiles = _profiles(folder)
        writer = _writer_work(folder)
        whole = folder / "whole.mcap"
        _launch(folder, None, whole)
        plot = [
            sys.executable,
            "-m",
            "hrpsim",
            "plot",
            str(whole),
            "--joint",
            "RLEG_KNEE",
            "-o",
            str(folder / "knee.png"),
        ]
        baseline = [sys.executable, "-c", BASELINE, str(folder / "empty.png")]
        plot_s = statistics.median(_timed(plot) for _ in range(3))
        baseline_s = statistics.median(_timed(baseline) for _ in range(3))
    return {
        "tick_ratio": statistics.median(ratios),
        "tick_ratio_low": min(ratios),
        "tick_ratio_high": max(ratios),
        "interleaved_ratio": interleaved,
        "interleaved_ratio_external": external,
        "tick_us_off": statistics.median(off),
        "tick_us_on": statistics.median(on),
        "bytes_per_sim_s": statistics.median(sizes),
        "plot_s": plot_s,
        "plot_baseline_s": baseline_s,
        "plot_ratio": plot_s / baseline_s,
        **profiles,
        **writer,
    }
