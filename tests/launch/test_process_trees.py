"""Nothing ``hrpsim launch`` started outlives it: a controller's daemon that left the controller's
session with setsid ends with the launch, when the run ends and when the launcher is killed with
SIGKILL; and a lifeline watchdog killed on its own is replaced, so the launcher still writes its
summary and still takes every child with it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import psutil
from process_helpers import HRPSIM, MODELS, REPO, launch_summary
from process_tree_helpers import start_daemon_code, wait_ended, write_daemon

DEADLINE_S = 120.0

CONTROLLER = """\
import sys
from pathlib import Path

from hrpsim.controllers import Controller, run_main


class Zero(Controller):
    def start(self, body):
{start}
        Path("started").write_text("yes")

    def control(self, state):
        return 0.0 * state.q


if __name__ == "__main__":
    sys.exit(run_main(Zero))
"""


def _project(folder: Path, end_time: float, *, daemon: bool) -> Path:
    start = start_daemon_code(write_daemon(folder), folder / "daemon.pid") if daemon else "pass\n"
    (folder / "zero.py").write_text(
        CONTROLLER.format(start="".join(f"        {line}\n" for line in start.splitlines()))
    )
    project = folder / "p.yaml"
    project.write_text(
        f"world: {{timestep: 0.001, end_time: {end_time}}}\n"
        f"models:\n  - {{name: arm, file: {MODELS}/openhrp3/model/PA10/pa10.main.wrl}}\n"
        'controllers:\n  - {name: zero, robot: arm, command: "python zero.py", policy: stop}\n'
    )
    return project


def _start(project: Path, folder: Path, *extra: str) -> subprocess.Popen:
    """``hrpsim launch`` in a session of its own, its output in folder/launch.out and launch.err."""
    argv = [*HRPSIM, "launch", str(project), "--nameserver", "tcp://127.0.0.1:*", "--run-dir", str(folder / "run")]
    with open(folder / "launch.out", "wb") as out, open(folder / "launch.err", "wb") as err:
        return subprocess.Popen(
            [*argv, "--summary", str(folder / "summary.json"), *extra],
            cwd=REPO,
            stdout=out,
            stderr=err,
            env={**os.environ, "HRPSIM_LOG_LEVEL": "INFO"},
            start_new_session=True,
        )


def _wait_for(condition: Callable[[], bool], launch: subprocess.Popen, what: str) -> None:
    deadline = time.monotonic() + DEADLINE_S
    while not condition():
        assert launch.poll() is None, f"the launcher ended (status {launch.returncode}) before {what}"
        assert time.monotonic() < deadline, f"never saw {what}"
        time.sleep(0.05)


def _watchdogs(launch: subprocess.Popen) -> list[psutil.Process]:
    children = psutil.Process(launch.pid).children()
    return [p for p in children if "hrpsim.lifeline" in " ".join(p.cmdline())]


def _text(path: Path) -> str:
    return path.read_text(errors="replace") if path.exists() else ""


def test_a_controllers_daemon_ends_with_the_run(tmp_path: Path) -> None:
    run = launch_summary(_project(tmp_path, 0.05, daemon=True), tmp_path)
    assert run.summary["error"] is None, run.stderr
    daemon = int((tmp_path / "daemon.pid").read_text())
    assert not wait_ended([daemon], timeout=0), "the daemon outlived the launch"


def test_a_controllers_daemon_ends_with_a_launcher_killed_with_sigkill(tmp_path: Path) -> None:
    launch = _start(_project(tmp_path, 600.0, daemon=True), tmp_path)
    try:
        _wait_for((tmp_path / "started").exists, launch, "the controller start")
        daemon = int((tmp_path / "daemon.pid").read_text())
        # the launcher looks at the processes below it every second and tells its watchdog their groups
        _wait_for(lambda: f"of pid {daemon} below" in _text(tmp_path / "launch.err"), launch, "the daemon watched")
        below = [p.pid for p in psutil.Process(launch.pid).children(recursive=True)]
        os.kill(launch.pid, signal.SIGKILL)
        launch.wait(DEADLINE_S)
        assert not wait_ended([daemon, *below]), "processes outlived the launcher"
    finally:
        if launch.poll() is None:
            os.killpg(launch.pid, signal.SIGKILL)
            launch.wait(30)


def test_a_launcher_whose_watchdog_was_killed_still_writes_its_summary(tmp_path: Path) -> None:
    launch = _start(_project(tmp_path, 600.0, daemon=False), tmp_path, "--quiet")
    try:
        _wait_for((tmp_path / "started").exists, launch, "the controller start")
        (watchdog,) = _watchdogs(launch)
        watchdog.kill()
        watchdog.wait(DEADLINE_S)
        launch.send_signal(signal.SIGINT)
        launch.wait(DEADLINE_S)
    finally:
        if launch.poll() is None:
            os.killpg(launch.pid, signal.SIGKILL)
            launch.wait(30)
    assert launch.returncode == 130, _text(tmp_path / "launch.err")[-3000:]
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert "SIGINT" in summary["error"]
    assert all(c["exit_status"] is not None for c in summary["launch"]["components"].values())


def test_a_watchdog_killed_on_its_own_is_replaced_and_the_new_one_does_its_work(tmp_path: Path) -> None:
    launch = _start(_project(tmp_path, 600.0, daemon=False), tmp_path)
    try:
        _wait_for((tmp_path / "started").exists, launch, "the controller start")
        (first,) = _watchdogs(launch)
        first.kill()
        _wait_for(lambda: "another took its place" in _text(tmp_path / "launch.out"), launch, "a new watchdog")
        (second,) = _watchdogs(launch)
        assert second.pid != first.pid
        below = [p.pid for p in psutil.Process(launch.pid).children(recursive=True) if p.pid != second.pid]
        assert len(below) >= 4  # nameserver, modelloader, simserver, the controller
        os.kill(launch.pid, signal.SIGKILL)
        launch.wait(DEADLINE_S)
        assert not wait_ended(below), "children outlived the launcher"
    finally:
        if launch.poll() is None:
            os.killpg(launch.pid, signal.SIGKILL)
            launch.wait(30)
