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


@pytest.fixture(scope="module")
def tables_by_workers(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Path]]:
    """The friction sweep run once with one worker and once with two: (the sweep file, the table of
    each). The resume test compares its resumed table with these, so they are read, never written."""
    folder = tmp_path_factory.mktemp("frictions")
    path = write_sweep(folder, FRICTIONS)
    tables = {}
    for workers in ("1", "2"):
        tables[workers] = folder / f"w{workers}.csv"
        run = sweep(str(path), "--workers", workers, "--out", str(tables[workers]), cwd=folder)
        assert run.returncode == 0, run.stderr
    return path, tables


def test_one_and_two_workers_give_the_same_table(tables_by_workers: tuple[Path, dict[str, Path]]) -> None:
    _, tables = tables_by_workers
    rows = table_without_timing(tables["1"])
    assert rows == table_without_timing(tables["2"])
    assert [r["run"] for r in rows] == [0, 1, 2, 3] and {r["status"] for r in rows} == {"ok"}
    assert [r["collisions[0].friction"] for r in rows] == [0.2, 0.4, 0.6, 0.8]
    # the physics shows in the metric: less friction, further down the slope; above tan 28 it holds
    slid = [r["slid"] for r in rows]
    assert slid[0] > slid[1] > slid[2] and slid[3] < 0.002
    assert {r["mode"] for r in rows} == {"in_process"}


def test_a_killed_sweep_resumes_to_the_same_table(
    tables_by_workers: tuple[Path, dict[str, Path]], tmp_path: Path
) -> None:
    path, tables = tables_by_workers  # the uninterrupted sweep's table: tables["2"]
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
    assert 2 <= len(_rows_written(cut)) < 4
    resumed = sweep(str(path), "--workers", "2", "--out", str(cut), "--resume", cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    assert table_without_timing(cut) == table_without_timing(tables["2"])


def _rows_written(path: Path) -> list[str]:
    return path.read_text().splitlines()[1:] if path.is_file() else []


HANG = """import time
from hrpsim.controllers import Controller


class Hang(Controller):
    def control(self, state):
        time.sleep(3600)
"""
# The hanging run is a sweep of its own: the sweep-wide timeout can then be short for the run that
# is meant to time out, while the runs that must finish keep a generous one.
HANG_TIMEOUT_S = 3


def test_failed_runs_are_rows_and_the_sweep_goes_on(tmp_path: Path) -> None:
    failing, hanging = tmp_path / "failing", tmp_path / "hanging"
    failing.mkdir()
    hanging.mkdir()
    (hanging / "hang.py").write_text(HANG)
    sweeps = [
        write_sweep(
            failing,
            """
            until: 0.3
            timeout: 300
            runs:
              - collisions[0].friction: 0.5
              - collisions[0].friction: 0.9
              - world.gravity: [0, 0, -1.0e+9]
            metrics:
              check: metrics.py:broken
            """,
        ),
        write_sweep(
            hanging,
            f"""
            until: 0.3
            timeout: {HANG_TIMEOUT_S}
            runs:
              - controllers: [{{name: hang, robot: box, in_process: true, file: {hanging / "hang.py"}}}]
            """,
            metrics=False,
        ),
    ]
    # both sweeps at once: the hanging run's wait overlaps the other runs
    procs = [_start_sweep(path, "--workers", "2", "--record-failures", str(path.parent / "failed")) for path in sweeps]
    for proc in procs:
        _, errors = proc.communicate(timeout=600)
        assert proc.returncode == 0, errors
    status = _statuses(failing / "results.csv")
    assert status[0] == ("ok", None)
    assert status[1][0] == "failed" and "metric 'check'" in status[1][1] and "fails on purpose" in status[1][1]
    assert status[2][0] == "failed" and "box" in status[2][1]  # the state guard stopped the exploding run
    assert sorted(p.name for p in (failing / "failed").iterdir()) == ["run-00001.mcap", "run-00002.mcap"]
    status = _statuses(hanging / "results.csv")
    assert status[0][0] == "timeout" and f"{HANG_TIMEOUT_S} s" in status[0][1]
    # the hung run was killed before it wrote a file
    assert not (hanging / "failed").is_dir() or not any((hanging / "failed").iterdir())
    for folder, words in ((failing, "3 runs: 2 failed, 1 ok"), (hanging, "1 runs: 1 timeout")):
        report = subprocess.run(
            [*HRPSIM, "sweep", "report", str(folder / "results.csv")],
            capture_output=True,
            text=True,
            timeout=120,
            cwd=REPO,
        )
        assert report.returncode == 0 and words in report.stdout, report.stdout


def _start_sweep(path: Path, *args: str) -> subprocess.Popen:
    """``hrpsim sweep`` on ``path``, its table written next to it as results.csv."""
    return subprocess.Popen(
        [*HRPSIM, "sweep", str(path), "--out", str(path.parent / "results.csv"), "--quiet", *args],
        cwd=path.parent,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
    )


def _statuses(table: Path) -> dict[int, tuple[str, str | None]]:
    _, rows = read_table(table)
    return {r["run"]: (r["status"], r["error"]) for r in rows}


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
