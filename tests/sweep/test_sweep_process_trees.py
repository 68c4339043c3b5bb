"""A run's whole process tree ends with it: a metric's daemon that left the run's session with setsid
ends when its run does, and every process of the runs under way ends when the sweep is killed with
SIGKILL, so a resumed sweep never meets a run of the last one in its folder. Real processes."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import psutil
from process_helpers import HRPSIM
from process_tree_helpers import start_daemon_code, wait_ended, write_daemon
from sweep_helpers import sweep, write_sweep

from hrpsim.sweep.table import read_table

DEADLINE_S = 120.0


def test_a_metrics_daemon_ends_with_its_run(tmp_path: Path) -> None:
    code = start_daemon_code(write_daemon(tmp_path), tmp_path / "daemon.pid")
    (tmp_path / "daemons.py").write_text(
        "def daemon(run):\n" + "".join(f"    {line}\n" for line in code.splitlines()) + "    return 1.0\n"
    )
    path = write_sweep(
        tmp_path, "until: 0.05\nruns:\n  - collisions[0].friction: 0.5\nmetrics:\n  d: daemons.py:daemon\n"
    )
    done = sweep(str(path), "--workers", "1", "--out", str(tmp_path / "results.csv"), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    _, rows = read_table(tmp_path / "results.csv")
    assert [(r["status"], r["d"]) for r in rows] == [("ok", 1.0)]
    assert not wait_ended([int((tmp_path / "daemon.pid").read_text())], timeout=0), "the daemon outlived its run"


def test_a_runs_daemon_ends_before_the_next_run_on_its_worker(tmp_path: Path) -> None:
    """One worker runs both runs: the first run's metric starts a daemon that leaves its session; the
    second run, in the same process, finds it gone (the worker ends what a run started with the run,
    not at the sweep's end)."""
    pid_file = tmp_path / "daemon.pid"
    code = start_daemon_code(write_daemon(tmp_path), pid_file)
    (tmp_path / "daemons.py").write_text(
        "import os\n\nimport psutil\n\n\n"
        "def worker(run):\n    return os.getpid()\n\n\n"
        "def daemon(run):\n"
        f"    if not os.path.exists({str(pid_file)!r}):\n"
        + "".join(f"        {line}\n" for line in code.splitlines())
        + "        return 1.0\n"
        f"    with open({str(pid_file)!r}) as f:\n        pid = int(f.read())\n"
        "    alive = psutil.pid_exists(pid) and psutil.Process(pid).status() != psutil.STATUS_ZOMBIE\n"
        "    return 0.0 if alive else -1.0\n"
    )
    path = write_sweep(
        tmp_path,
        "until: 0.05\nruns:\n  - collisions[0].friction: 0.5\n  - collisions[0].friction: 0.6\n"
        "metrics:\n  worker: daemons.py:worker\n  d: daemons.py:daemon\n",
    )
    done = sweep(str(path), "--workers", "1", "--out", str(tmp_path / "results.csv"), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    _, rows = read_table(tmp_path / "results.csv")
    assert [(r["status"], r["d"]) for r in rows] == [("ok", 1.0), ("ok", -1.0)]  # started, then found gone
    assert rows[0]["worker"] == rows[1]["worker"]


def test_every_process_of_the_runs_under_way_ends_with_a_sweep_killed_with_sigkill(tmp_path: Path) -> None:
    """Two runs under way, each a whole hrpsim launch (its controller a process that never attaches):
    the sweep alone is killed, and every process below it ends."""
    (tmp_path / "hang.py").write_text("import time\ntime.sleep(3600)\n")
    controller = f'{{name: hang, robot: box, command: "python {tmp_path / "hang.py"}"}}'
    path = write_sweep(
        tmp_path,
        f"until: 0.3\ntimeout: 600\ngrid:\n  collisions[0].friction: [0.2, 0.4]\n"
        f"runs:\n  - controllers: [{controller}]\n",
        metrics=False,
    )
    argv = [*HRPSIM, "sweep", str(path), "--workers", "2", "--out", str(tmp_path / "results.csv"), "--quiet"]
    proc = subprocess.Popen(argv, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + DEADLINE_S
        while len(_hanging_controllers(proc.pid)) < 2:
            assert proc.poll() is None and time.monotonic() < deadline, "the runs never started their controllers"
            time.sleep(0.1)
        below = [p.pid for p in psutil.Process(proc.pid).children(recursive=True)]
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(DEADLINE_S)
        assert not wait_ended(below), "processes of the runs outlived the sweep"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(30)


def _hanging_controllers(pid: int) -> list[psutil.Process]:
    found = []
    for process in psutil.Process(pid).children(recursive=True):
        try:
            if any(arg.endswith("hang.py") for arg in process.cmdline()):
                found.append(process)
        except psutil.Error:
            pass
    return found
