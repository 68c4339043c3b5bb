"""Workers that run many runs in turn give the table a process per run gives (``--process-per-run``),
run for run: runs that finish, fail, explode, crash their process, hang past their deadline, and one
launched with its controller as a process. A worker runs one run after another in one process; a run
that crashes or hangs it costs that row, and the next run gets a new worker. Real processes."""

from __future__ import annotations

from pathlib import Path

import pytest
from process_helpers import REPO
from sweep_helpers import sweep, table_without_timing, write_sweep

from hrpsim.sweep.table import read_table

HOLD = REPO / "examples" / "controllers" / "hold_pose.py"

WORKER_METRICS = """
import os


def pid(run):
    return os.getpid()


def crash(run):
    if run.params.get("collisions[0].friction") == 0.3:
        os._exit(3)  # the process that runs the run dies with the run
    return 0.0


def check(run):
    if run.params.get("collisions[0].friction") == 0.9:
        raise ValueError("this metric fails on purpose")
    return 1.0
"""

MIXED = f"""
until: 0.2
runs:
  - collisions[0].friction: 0.2
  - collisions[0].friction: 0.3
  - collisions[0].friction: 0.5
  - collisions[0].friction: 0.9
  - world.gravity: [0, 0, -1.0e+9]
  - controllers: [{{name: hold, robot: box, command: "python {HOLD}", period: 0.001}}]
  - collisions[0].friction: 0.7
metrics:
  pid: workers.py:pid
  crash: workers.py:crash
  check: workers.py:check
  slid: metrics.py:slid
"""

HANG = """import time
from hrpsim.controllers import Controller


class Hang(Controller):
    def control(self, state):
        time.sleep(3600)
"""
HANG_TIMEOUT_S = 10  # the runs that follow must finish within it on a busy machine


def _tables(folder: Path, body: str, *extra: str) -> dict[str, Path]:
    """The sweep run with workers and with a process per run, one at a time: each mode's table."""
    path = write_sweep(folder, body)
    tables = {}
    for mode, flags in (("workers", ()), ("per_run", ("--process-per-run",))):
        tables[mode] = folder / f"{mode}.csv"
        done = sweep(str(path), "--workers", "1", "--out", str(tables[mode]), *flags, *extra, cwd=folder)
        assert done.returncode == 0, done.stderr
    return tables


def _without(rows: list[dict], column: str) -> list[dict]:
    return [{k: v for k, v in row.items() if k != column} for row in rows]


@pytest.fixture(scope="module")
def mixed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("mixed")
    (folder / "workers.py").write_text(WORKER_METRICS)
    return _tables(folder, MIXED)


def test_workers_give_the_table_of_a_process_per_run(mixed: dict[str, Path]) -> None:
    rows = table_without_timing(mixed["workers"])
    assert _without(rows, "pid") == _without(table_without_timing(mixed["per_run"]), "pid")
    status = [(r["status"], r["mode"]) for r in rows]
    assert status == [
        ("ok", "in_process"),
        ("crashed", None),
        ("ok", "in_process"),
        ("failed", "in_process"),
        ("failed", "in_process"),
        ("ok", "launch"),
        ("ok", "in_process"),
    ]
    assert "status 3" in rows[1]["error"]
    assert "metric 'check'" in rows[3]["error"] and "box" in rows[4]["error"]
    assert rows[5]["box.z"] is not None and rows[0]["slid"] > rows[2]["slid"] > rows[6]["slid"]


def test_a_worker_runs_many_runs_and_a_crash_costs_one_new_worker(mixed: dict[str, Path]) -> None:
    _, rows = read_table(mixed["workers"])
    pids = {r["run"]: r["pid"] for r in rows if r["pid"] is not None}
    assert set(pids) == {0, 2, 3, 5, 6}  # the crashed run has no metrics, nor the one that exploded
    assert pids[2] == pids[3] == pids[5] == pids[6] != pids[0]  # run 1 took the first worker with it
    _, per_run = read_table(mixed["per_run"])
    assert len({r["pid"] for r in per_run if r["pid"] is not None}) == 5  # each run its own process


def test_a_run_that_hangs_its_worker_is_a_timeout_and_the_next_run_gets_a_new_worker(tmp_path: Path) -> None:
    (tmp_path / "hang.py").write_text(HANG)
    (tmp_path / "workers.py").write_text(WORKER_METRICS)
    body = f"""
    until: 0.2
    timeout: {HANG_TIMEOUT_S}
    runs:
      - controllers: [{{name: hang, robot: box, in_process: true, file: {tmp_path / "hang.py"}}}]
      - collisions[0].friction: 0.5
      - collisions[0].friction: 0.6
    metrics:
      pid: workers.py:pid
    """
    tables = _tables(tmp_path, body)
    rows = table_without_timing(tables["workers"])
    assert _without(rows, "pid") == _without(table_without_timing(tables["per_run"]), "pid")
    assert [r["status"] for r in rows] == ["timeout", "ok", "ok"]
    assert f"{HANG_TIMEOUT_S} s" in rows[0]["error"]
    assert rows[1]["pid"] == rows[2]["pid"]
