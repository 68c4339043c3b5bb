"""Ctrl-C at any moment of ``hrpsim launch ... --summary FILE`` ends cleanly: exit status 130, no
traceback, and a summary saying it was interrupted, from the launcher's first instructions
(while it still imports its modules) to the run itself."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from process_helpers import HRPSIM, REPO

DEADLINE_S = 120.0
SIGHUP_BIT = 1 << (signal.SIGHUP - 1)


def _catches_sighup(pid: int) -> bool:
    """The launcher holds its signals (SIGINT first, then SIGTERM, then SIGHUP): a caught SIGHUP,
    which Python itself never catches, means a SIGINT from now on is the launcher's to handle."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False
    caught = next(line for line in status.splitlines() if line.startswith("SigCgt:"))
    return bool(int(caught.split()[1], 16) & SIGHUP_BIT)


def _launch(
    tmp_path: Path, project: Path = REPO / "examples" / "sample_walk.yaml"
) -> tuple[subprocess.Popen, Path, Path]:
    summary, run_dir = tmp_path / "s.json", tmp_path / "run"
    proc = subprocess.Popen(
        [
            *(*HRPSIM, "launch", str(project), "--summary", str(summary)),
            *("--nameserver", "tcp://127.0.0.1:*", "--run-dir", str(run_dir), "--quiet"),
        ],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    return proc, summary, run_dir


def _wait_for(condition: Callable[[], bool], proc: subprocess.Popen, what: str) -> None:
    deadline = time.monotonic() + DEADLINE_S
    while not condition():
        assert proc.poll() is None, f"the launcher ended before {what}"
        assert time.monotonic() < deadline, f"never saw {what}"
        time.sleep(0.001)


def _text(path: Path) -> str:
    return path.read_text(errors="replace") if path.exists() else ""


def _has_loaded_zmq(pid: int) -> bool:
    """The launcher imports its modules (ZeroMQ among them) before its handlers are in place."""
    return "zmq" in _text(Path(f"/proc/{pid}/maps"))


MOMENTS: dict[str, Callable[[subprocess.Popen, Path], bool]] = {
    "at its first instructions": lambda proc, _: _catches_sighup(proc.pid),
    "while it imports its modules": lambda proc, _: _has_loaded_zmq(proc.pid),
    "while the nameserver starts": lambda _, run: (run / "nameserver.log").exists(),
    "while the simulator loads the models": lambda _, run: (run / "simserver.log").exists(),
    "while it runs": lambda _, run: "attached" in _text(run / "controller-walker.log"),
}


def _interrupt(proc: subprocess.Popen, moment: Callable[[], bool], what: str) -> tuple[str, str]:
    """SIGINT to the launcher once ``moment`` has come; what it then printed on stdout and stderr."""
    try:
        _wait_for(moment, proc, what)
        proc.send_signal(signal.SIGINT)
        return proc.communicate(timeout=DEADLINE_S)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()


@pytest.mark.parametrize("moment", list(MOMENTS))
def test_sigint_at_any_moment_ends_with_a_summary(tmp_path: Path, moment: str) -> None:
    proc, summary_file, run_dir = _launch(tmp_path)
    out, err = _interrupt(proc, lambda: MOMENTS[moment](proc, run_dir), moment)
    assert proc.returncode == 130, out + err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    summary = json.loads(summary_file.read_text())
    assert "SIGINT" in summary["error"]
    assert "SIGINT" in out + err  # said on the terminal too


def test_sigint_while_the_project_is_read_ends_the_read(tmp_path: Path) -> None:
    """A project near the size bound takes seconds to read: Ctrl-C then ends the launch at once (status
    130, a summary saying so) instead of after the read (where this one would be refused as unreadable)."""
    project = tmp_path / "large.yaml"
    numbers = ", ".join(["0.5"] * 150_000)  # about 0.75 MB: within the bound, a second or more of reading
    project.write_text(f"world: {{timestep: 0.001, end_time: 1.0}}\nfigures: [{numbers}]\n")
    proc, summary, run_dir = _launch(tmp_path, project)
    out, err = _interrupt(proc, lambda: _has_loaded_zmq(proc.pid), "the launcher's imports")  # the read comes next
    assert proc.returncode == 130, out + err
    assert "unknown key" not in err and "Traceback" not in err, err
    assert json.loads(summary.read_text())["error"] == (
        "interrupted by SIGINT while the project was read; nothing was started"
    )
    assert not (run_dir / "nameserver.log").exists()
