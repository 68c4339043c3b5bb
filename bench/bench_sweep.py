"""Sweep throughput: runs per minute of a small sweep on the local pool at 1 and 2 workers, and on a Ray
cluster of two one-CPU nodes started on this machine with 2 workers.

The sweep is examples/slope.yaml (a box on a slope, in process): friction over 8 values times two masses,
3 s each, 16 runs.
`two_worker_ratio` = 2 workers / 1 worker (aim >= 1.8 on 2 cores); `ray_ratio` = Ray / local pool at 2
workers (aim >= 0.9). Each figure counts the whole sweep (process start-up included), as a user waits it.
"""

from __future__ import annotations

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
  models[box].mass_scale: [1.0, 1.1]
"""
RUNS = 16


def _runs_per_minute(sweep: Path, out: Path, *extra: str) -> float:
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "hrpsim", "sweep", str(sweep), "--out", str(out), "--quiet", *extra],
        check=True,
        capture_output=True,
    )
    return RUNS / (time.perf_counter() - start) * 60.0


def _ray(sweep: Path, out: Path) -> float:
    from ray.cluster_utils import Cluster

    store = 80 * 1024 * 1024
    cluster = Cluster(
        initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False, "object_store_memory": store}
    )
    try:
        cluster.add_node(num_cpus=1, object_store_memory=store)
        cluster.wait_for_nodes()
        return _runs_per_minute(sweep, out, "--ray", cluster.address, "--workers", "2")
    finally:
        cluster.shutdown()


def run() -> dict[str, float]:
    with tempfile.TemporaryDirectory() as folder:
        sweep = Path(folder) / "sweep.yaml"
        sweep.write_text(SWEEP.format(project=REPO / "examples" / "slope.yaml"))
        one = _runs_per_minute(sweep, Path(folder) / "one.csv", "--workers", "1")
        two = _runs_per_minute(sweep, Path(folder) / "two.csv", "--workers", "2")
        ray = _ray(sweep, Path(folder) / "ray.csv")
    return {
        "one_worker_runs_per_min": one,
        "two_workers_runs_per_min": two,
        "ray_two_workers_runs_per_min": ray,
        "two_worker_ratio": two / one,
        "ray_ratio": ray / two,
    }
