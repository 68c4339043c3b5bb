"""A controller that raises on its first tick under policy stop: the launcher and the simulator
tell one story (the run ends), not "the run goes on without it" beside "its policy is stop"."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from process_helpers import HRPSIM, MODELS, REPO

RAISER = """\
import sys

from hrpsim.controllers import Controller, run_main


class Raiser(Controller):
    def control(self, state):
        raise RuntimeError("fails on its first tick")


if __name__ == "__main__":
    sys.exit(run_main(Raiser))
"""


def test_a_stop_policy_controller_that_raises_ends_the_run_and_says_so(tmp_path: Path) -> None:
    (tmp_path / "raiser.py").write_text(RAISER)
    project = tmp_path / "raise.yaml"
    project.write_text(
        "world: {timestep: 0.001, end_time: 1.0}\n"
        "models:\n"
        f"  - {{name: floor, file: {MODELS}/openhrp3/model/floor.wrl, static: true}}\n"
        f"  - {{name: arm, file: {MODELS}/openhrp3/model/PA10/pa10.main.wrl}}\n"
        "controllers:\n"
        '  - {name: raiser, robot: arm, command: "python raiser.py", period: 0.001, policy: stop}\n'
    )
    summary = tmp_path / "summary.json"
    options = ["--nameserver", "tcp://127.0.0.1:*", "--run-dir", str(tmp_path / "run")]
    done = subprocess.run(
        [*HRPSIM, "launch", str(project), *options, "--summary", str(summary)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode != 0
    assert "its policy is stop" in json.loads(summary.read_text())["error"]
    said = done.stdout + done.stderr
    assert "goes on without it" not in said
    # the launcher may see the run end before it sees the controller's exit; when it reports the
    # exit, it says what the policy does
    deaths = [line for line in said.splitlines() if line.startswith("launch: raiser") and "died" in line]
    assert all(line.endswith("its policy is stop, so the simulator ends the run") for line in deaths), deaths
