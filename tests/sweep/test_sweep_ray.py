"""A sweep on a real Ray cluster (a head and a second node started on this machine) gives the table the
local pool gives."""

from __future__ import annotations

from pathlib import Path

import pytest
from sweep_helpers import sweep, table_without_timing, write_sweep

ray_cluster_utils = pytest.importorskip("ray.cluster_utils", reason="the ray extra: pip install 'hrpsim[ray]'")

OBJECT_STORE = 80 * 1024 * 1024  # bytes per node: the runs pass only their rows through it


def test_a_ray_cluster_gives_the_local_pools_table(tmp_path: Path) -> None:
    path = write_sweep(
        tmp_path,
        """
        until: 0.3
        grid:
          collisions[0].friction: [0.2, 0.5, 0.8]
        metrics:
          slid: metrics.py:slid
        """,
    )
    local = tmp_path / "local.csv"
    assert sweep(str(path), "--workers", "2", "--out", str(local), cwd=tmp_path).returncode == 0
    cluster = ray_cluster_utils.Cluster(
        initialize_head=True,
        head_node_args={"num_cpus": 1, "include_dashboard": False, "object_store_memory": OBJECT_STORE},
    )
    try:
        cluster.add_node(num_cpus=1, object_store_memory=OBJECT_STORE)
        cluster.wait_for_nodes()
        remote = tmp_path / "ray.csv"
        run = sweep(str(path), "--ray", cluster.address, "--workers", "2", "--out", str(remote), cwd=tmp_path)
    finally:
        cluster.shutdown()
    assert run.returncode == 0, run.stderr[-3000:]
    assert table_without_timing(remote) == table_without_timing(local)
    assert {row["status"] for row in table_without_timing(remote)} == {"ok"}
