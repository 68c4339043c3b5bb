"""`hrpsim launch` stops everything it started, whatever ends the run, and says what failed."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest
from process_helpers import REPO

EXAMPLE = REPO / "examples" / "nameserver_only.yaml"


def launch(args: list[str], tmp_path: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "hrpsim",
            "launch",
            *args,
            "--run-dir",
            str(tmp_path / "run"),
            "--summary",
            str(tmp_path / "summary.json"),
        ],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def processes_mentioning(text: str) -> list[psutil.Process]:
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        try:
            if any(text in part for part in proc.info["cmdline"] or []):
                found.append(proc)
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
    return found


def wait_for(path: Path, proc: subprocess.Popen, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists():
        assert proc.poll() is None, f"launch exited early: {proc.communicate()}"
        assert time.monotonic() < deadline, f"{path} did not appear"
        time.sleep(0.05)


def test_sigterm_stops_every_component_and_exits_non_zero(tmp_path: Path) -> None:
    proc = launch([str(EXAMPLE), "--nameserver", "tcp://127.0.0.1:*"], tmp_path)
    wait_for(tmp_path / "run" / "nameserver.endpoint", proc)
    time.sleep(0.3)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode != 0
    assert "SIGTERM" in err
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert "SIGTERM" in summary["error"]
    pids = [c["pid"] for c in summary["launch"]["components"].values()]
    assert pids and not any(psutil.pid_exists(p) and psutil.Process(p).status() != psutil.STATUS_ZOMBIE for p in pids)
    assert processes_mentioning(str(tmp_path / "run")) == []


def test_ctrl_c_goes_through_the_same_shutdown_path(tmp_path: Path) -> None:
    proc = launch([str(EXAMPLE), "--nameserver", "tcp://127.0.0.1:*"], tmp_path)
    wait_for(tmp_path / "run" / "nameserver.endpoint", proc)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130
    assert "SIGINT" in err
    assert processes_mentioning(str(tmp_path / "run")) == []


def test_a_component_that_crashes_at_start_is_named_and_nothing_is_left(tmp_path: Path) -> None:
    proc = launch([str(EXAMPLE), "--nameserver", "tcp://256.0.0.1:1"], tmp_path)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 1
    assert "nameserver exited with status" in err
    assert "256.0.0.1" in err, "the error shows the end of the component's log"
    assert processes_mentioning(str(tmp_path / "run")) == []
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert "nameserver" in summary["error"]


def test_a_bad_project_file_is_refused_naming_file_and_key(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("world: {timestep: -1, sync: sometimes}\nmodels:\n  - {name: r, file: nowhere.wrl}\n")
    proc = subprocess.run(
        [sys.executable, "-m", "hrpsim", "launch", str(bad)], cwd=REPO, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 2
    for key in ("world.timestep", "world.sync", "models[0].file"):
        assert key in proc.stderr
    assert str(bad) in proc.stderr


@pytest.mark.parametrize("until", ["0.5"])
def test_until_ends_a_run_cleanly_with_a_summary(tmp_path: Path, until: str) -> None:
    proc = launch([str(EXAMPLE), "--nameserver", "tcp://127.0.0.1:*", "--until", until], tmp_path)
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 0
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["error"] is None
    assert summary["launch"]["components"]["nameserver"]["exit_status"] == 0, "stopped by request, not killed"
    for key in ("sim_time", "wall_time", "real_time_factor", "ticks", "robots", "controllers", "error"):
        assert key in summary
    assert "run summary" in out


def test_a_model_that_cannot_be_loaded_is_named_with_its_problems(tmp_path: Path, models_dir: Path) -> None:
    text = (models_dir / "openhrp3/model/sample1.wrl").read_text(errors="replace")
    cut = text[: len(text) // 2]
    (tmp_path / "half.wrl").write_text(cut)
    project = tmp_path / "one_bad.yaml"
    project.write_text(
        f"world: {{end_time: 0.1}}\nmodels:\n"
        f"  - {{name: floor, file: {models_dir / 'openhrp3/model/floor.wrl'}, static: true}}\n"
        f"  - {{name: walker, file: half.wrl}}\n"
    )
    proc = launch([str(project), "--nameserver", "tcp://127.0.0.1:*"], tmp_path)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 1
    assert "1 model(s) could not be loaded: walker" in err
    end = f"{tmp_path / 'half.wrl'}:{cut.count(chr(10)) + 1}:{len(cut) - cut.rfind(chr(10))}"
    assert f"model 'walker': {end}: syntax error: the file ends early; still open:" in err, err
    assert processes_mentioning(str(tmp_path / "run")) == []
