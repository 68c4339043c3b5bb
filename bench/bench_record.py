"""Recording the sample walk: tick time with the recorder on / off, file size, plot time.

`tick_ratio` = wall time per tick with `--record` / without, for `hrpsim launch
examples/sample_walk.yaml --until UNTIL` (the real stack: controller process, lockstep); the
simulator's own wall time from the run summary, so start-up is left out. Runs alternate off/on
ROUNDS times and the ratio is the median of the pairs, so both see the same machine load.
`tick_us_off` / `tick_us_on`: the medians. `bytes_per_sim_s`: the recording's size over the
simulated time (zstd chunks). `plot_s`: `hrpsim plot --joint RLEG_KNEE -o knee.png` on a recording
of the whole 16 s walk, as a user runs it (a new interpreter, matplotlib's import included);
`plot_ratio` = that over `plot_baseline_s`, a new interpreter that imports matplotlib and writes
an empty figure: what the reading and decoding of the recording add.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
WALK = REPO / "examples" / "sample_walk.yaml"
UNTIL = 6.0
ROUNDS = 5
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


def run() -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="bench-record-") as tmp:
        folder = Path(tmp)
        off, on, ratios, sizes = [], [], [], []
        for k in range(ROUNDS):
            record = folder / f"walk-{k}.mcap"
            a = _tick_us(_launch(folder, UNTIL, None))
            summary = _launch(folder, UNTIL, record)
            b = _tick_us(summary)
            off.append(a)
            on.append(b)
            ratios.append(b / a)
            sizes.append(record.stat().st_size / summary["sim_time"])
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
        "tick_us_off": statistics.median(off),
        "tick_us_on": statistics.median(on),
        "bytes_per_sim_s": statistics.median(sizes),
        "plot_s": plot_s,
        "plot_baseline_s": baseline_s,
        "plot_ratio": plot_s / baseline_s,
    }
