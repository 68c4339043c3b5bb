"""README's tour runs a Choreonoid robot and an MJCF robot as written: ``hrpsim launch
examples/gr001_hold.yaml`` (GR001's body file, torque mode, the stock hold controller: it stays up) and
``hrpsim launch examples/ant_mjcf.yaml`` (an MJCF ant on MuJoCo settling onto its legs: no verdict)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from process_helpers import HRPSIM, REPO

README = (REPO / "README.md").read_text()


def launched(project: str, tmp_path: Path) -> str:
    done = subprocess.run(
        [*HRPSIM, "launch", project, "--quiet", "--nameserver", "tcp://127.0.0.1:*", "--run-dir", str(tmp_path)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


@pytest.mark.parametrize(
    "project, robot, verdict",
    [("examples/gr001_hold.yaml", "robot", "stayed up"), ("examples/ant_mjcf.yaml", "ant", None)],
)
def test_a_tour_robot_runs_as_written(project: str, robot: str, verdict: str | None, tmp_path: Path) -> None:
    if "mjcf" in project:
        pytest.importorskip("mujoco")
    assert re.search(rf"^hrpsim launch {re.escape(project)} ", README, re.M), "the tour names it"
    printed = launched(project, tmp_path)
    line = next(line for line in printed.splitlines() if line.startswith(f"  robot {robot}:"))
    assert "finished without error" in printed
    if verdict:
        assert line.endswith(verdict)
    else:
        assert "stayed up" not in line and "FELL" not in line and "root height" in line
