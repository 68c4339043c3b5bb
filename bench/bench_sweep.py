"""Sweep throughput: runs per minute of a short sweep with a process per run (the way runs used to go)
and with workers that run many runs in turn, on the local pool at 1 and 2 workers and on a Ray
cluster of two one-CPU nodes started on this machine with 2 workers; and the share of the workers'
time spent stepping worlds.
The sweep is examples/slope.yaml (a box on a slope, in process): friction over 8 values times 4 masses,
3 s each, 32 runs. Each figure counts the whole sweep (the sweep's and the workers' start-up included),
as a user waits it. `process_per_run_runs_per_min` is the baseline, measured in the same run;
`worker_speedup` = one worker / a process per run, on one worker (aim >= 3); `efficiency` = the share
of the one worker's wall time spent stepping worlds, as the sweep reports it (aim >= 0.7);
`two_worker_ratio` = 2 workers / 1 worker (aim >= 1.8 on 2 cores); `ray_ratio` = Ray / the local pool
at 2 workers (aim >= 0.9).
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SWEEP = """project: {project}
until: 3.0
grid:
  collisions[0].friction: [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8]
  models[box].mass_scale: [1.0, 1.1, 1.2, 1.3]
"""
RUNS = 32
SHARE = re.compile(r"the workers spent (\d+)% of their time stepping worlds")


def _sweep(sweep: Path, out: Path, *extra: str) -> tuple[float, float]:
    """(runs per minute, the share of the workers' time spent stepping worlds)."""
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "hrpsim", "sweep", str(sweep), "--out", str(out), "--quiet", *extra],
        check=True,
        capture_output=True,
        text=True,
    )
    rate = RUNS / (time.perf_counter() - start) * 60.0
    share = SHARE.search(done.stdout)
    return rate, int(share.group(1)) / 100.0 if share else float("nan")


def _ray(sweep: Path, out: Path) -> float:
    from ray.cluster_utils import Cluster

    store = 80 * 1024 * 1024
    cluster = Cluster(
        initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False, "object_store_memory": store}
    )
    try:
        cluster.add_node(num_cpus=1, object_store_memory=store)
        cluster.wait_for_nodes()
        return _sweep(sweep, out, "--ray", cluster.address, "--workers", "2")[0]
    finally:
        cluster.shutdown()


def run() -> dict[str, float]:
    with tempfile.TemporaryDirectory() as folder:
        sweep = Path(folder) / "sweep.yaml"
        sweep.write_text(SWEEP.format(project=REPO / "examples" / "slope.yaml"))
        per_run, per_run_share = _sweep(sweep, Path(folder) / "per_run.csv", "--workers", "1", "--process-per-run")
        one, share = _sweep(sweep, Path(folder) / "one.csv", "--workers", "1")
        two, _ = _sweep(sweep, Path(folder) / "two.csv", "--workers", "2")
        ray = _ray(sweep, Path(folder) / "ray.csv")
    return {
        "process_per_run_runs_per_min": per_run,
        "process_per_run_efficiency": per_run_share,
        "one_worker_runs_per_min": one,
        "two_workers_runs_per_min": two,
        "ray_two_workers_runs_per_min": ray,
        "worker_speedup": one / per_run,
        "efficiency": share,
        "two_worker_ratio": two / one,
        "ray_ratio": ray / two,
    }
