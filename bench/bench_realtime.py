"""The sample walk in `sync: realtime` through `hrpsim launch`: missed controller turns, tick jitter, real-time factor.

Baseline: the same walk in lockstep in the same run (`lockstep_rtf`: how much faster than real time the
machine can run it; realtime needs it above 1). Aim: `missed_pct` at most 1 on an idle machine, the robot
upright (`min_root_z` well above 0.5 m). `jitter_*` is how late each tick started after its wall-clock slot
opened, in microseconds; `overruns` counts ticks that ended after their slot. HRPSIM_BENCH_REALTIME_S sets
the simulated seconds (default 16, the whole walk).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from procs import launch_summary, walk_project


def run() -> dict[str, float]:
    until = float(os.environ.get("HRPSIM_BENCH_REALTIME_S", "16"))
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        lockstep = launch_summary(walk_project(folder, "walk-lockstep", sync="lockstep", end_time=until), folder)
        realtime = launch_summary(walk_project(folder, "walk-realtime", sync="realtime", end_time=until), folder)
    walker = realtime["controllers"]["walker"]
    timing = realtime.get("timing") or {}
    turns = walker["ticks"] + walker["missed"]
    return {
        "missed_pct": 100.0 * walker["missed"] / max(turns, 1),
        "late_applied": walker.get("late_applied", 0),
        "jitter_p50_us": timing.get("jitter_p50_us") or 0.0,
        "jitter_p99_us": timing.get("jitter_p99_us") or 0.0,
        "jitter_max_us": timing.get("jitter_max_us") or 0.0,
        "overruns": timing.get("overruns", 0),
        "real_time_factor": realtime["real_time_factor"],
        "lockstep_rtf": lockstep["real_time_factor"],
        "rtt_p99_us": walker["rtt_p99_us"] or 0.0,
        "min_root_z": realtime["robots"]["robot"]["min_root_z"],
    }
