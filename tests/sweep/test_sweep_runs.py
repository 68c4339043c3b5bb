"""``hrpsim sweep`` end to end, as a user runs it: the local pool at one and two workers gives the same
table; a killed sweep resumes to the table an uninterrupted one writes; a run that raises, hangs or
fails is one failed row and the sweep goes on."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
from process_helpers import HRPSIM, REPO
from sweep_helpers import sweep, table_without_timing, write_sweep

from hrpsim.sweep.table import read_table

FRICTIONS = """
until: 0.3
grid:
  collisions[0].friction: [0.2, 0.4, 0.6, 0.8]
metrics:
  slid: metrics.py:slid
"""


def test_one_and_two_workers_give_the_same_table(tmp_path: Path) -> None:
    path = write_sweep(tmp_path, FRICTIONS)
    tables = []
    for workers in ("1", "2"):
        out = tmp_path / f"w{workers}.csv"
        run = sweep(str(path), "--workers", workers, "--out", str(out), cwd=tmp_path)
        assert run.returncode == 0, run.stderr
        tables.append(table_without_timing(out))
    assert tables[0] == tables[1]
    rows = tables[0]
    assert [r["run"] for r in rows] == [0, 1, 2, 3] and {r["status"] for r in rows} == {"ok"}
    assert [r["collisions[0].friction"] for r in rows] == [0.2, 0.4, 0.6, 0.8]
    # the physics shows in the metric: less friction, further down the slope; above tan 28 it holds
    slid = [r["slid"] for r in rows]
    assert slid[0] > slid[1] > slid[2] and slid[3] < 0.002
    assert {r["mode"] for r in rows} == {"in_process"}


def test_a_killed_sweep_resumes_to_the_same_table(tmp_path: Path) -> None:
    path = write_sweep(tmp_path, FRICTIONS.replace("[0.2, 0.4, 0.6, 0.8]", "[0.2, 0.3, 0.4, 0.5, 0.6, 0.7]"))
    whole = tmp_path / "whole.csv"
    assert sweep(str(path), "--workers", "2", "--out", str(whole), cwd=tmp_path).returncode == 0
    cut = tmp_path / "cut.csv"
    proc = subprocess.Popen(
        [*HRPSIM, "sweep", str(path), "--workers", "1", "--out", str(cut), "--quiet"],
        cwd=tmp_path,
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 300
    while len(_rows_written(cut)) < 2:  # two runs are in: kill it in the middle of the rest
        assert proc.poll() is None and time.monotonic() < deadline, "the sweep ended before it could be killed"
        time.sleep(0.1)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(30)
    assert 2 <= len(_rows_written(cut)) < 6
    resumed = sweep(str(path), "--workers", "2", "--out", str(cut), "--resume", cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    assert table_without_timing(cut) == table_without_timing(whole)


def _rows_written(path: Path) -> list[str]:
    return path.read_text().splitlines()[1:] if path.is_file() else []


def test_failed_runs_are_rows_and_the_sweep_goes_on(tmp_path: Path) -> None:
    hang = tmp_path / "hang.py"
    hang.write_text(
        "import time\nfrom hrpsim.controllers import Controller\n\n\nclass Hang(Controller):\n"
        "    def control(self, state):\n        time.sleep(3600)\n"
    )
    path = write_sweep(
        tmp_path,
        f"""
        until: 0.3
        timeout: 20
        runs:
          - collisions[0].friction: 0.5
          - collisions[0].friction: 0.9
          - world.gravity: [0, 0, -1.0e+9]
          - controllers: [{{name: hang, robot: box, in_process: true, file: {hang}}}]
        metrics:
          check: metrics.py:broken
        """,
    )
    out = tmp_path / "results.csv"
    run = sweep(
        str(path), "--workers", "2", "--out", str(out), "--record-failures", str(tmp_path / "failed"), cwd=tmp_path
    )
    assert run.returncode == 0, run.stderr
    _, rows = read_table(out)
    status = {r["run"]: (r["status"], r["error"]) for r in rows}
    assert status[0] == ("ok", None)
    assert status[1][0] == "failed" and "metric 'check'" in status[1][1] and "fails on purpose" in status[1][1]
    assert status[2][0] == "failed" and "box" in status[2][1]  # the state guard stopped the exploding run
    assert status[3][0] == "timeout" and "20 s" in status[3][1]
    kept = sorted(p.name for p in (tmp_path / "failed").iterdir())
    assert kept == ["run-00001.mcap", "run-00002.mcap"]  # the hung run was killed before it wrote a file
    report = subprocess.run(
        [*HRPSIM, "sweep", "report", str(out)], capture_output=True, text=True, timeout=120, cwd=REPO
    )
    assert report.returncode == 0 and "4 runs: 2 failed, 1 ok, 1 timeout" in report.stdout, report.stdout


def test_the_table_as_parquet_holds_the_same_rows(tmp_path: Path) -> None:
    pq = pytest.importorskip("pyarrow.parquet", reason="the sweep extra: pip install 'hrpsim[sweep]'")
    path = write_sweep(tmp_path, "until: 0.2\ngrid:\n  collisions[0].friction: [0.2, 0.8]\n", metrics=False)
    out, parquet = tmp_path / "results.csv", tmp_path / "results.parquet"
    run = sweep(str(path), "--out", str(out), "--parquet", str(parquet), "--workers", "2", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    table = pq.read_table(parquet).to_pylist()
    _, rows = read_table(out)
    assert [r["collisions[0].friction"] for r in table] == [0.2, 0.8]
    assert [r["box.z"] for r in table] == [r["box.z"] for r in rows] and {r["status"] for r in table} == {"ok"}
