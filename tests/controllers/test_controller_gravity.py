"""A controller's model falls under the world's gravity, not an assumed one: PA10 held by gravity
compensation alone (``self.model.gravity()``) stays where it is on the Moon, as a controller process
(``hrpsim launch``) and in process (``hrpsim.Simulation``)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from process_helpers import MODELS, launch_summary

from hrpsim.project import load_project
from hrpsim.recording.reader import open_recording
from hrpsim.recording.schemas import state_topic
from hrpsim.simulation import Simulation

MOON = [0.0, 0.0, -1.62]
HELD = {"J2": 0.8, "J4": 0.8, "J6": 0.8, "J7": 1.57}
# Earth's gravity in the model instead of the Moon's would push the arm six times harder than it
# weighs: it swings by tenths of a radian in this time; compensated, it stays within a few mrad.
STILL_RAD = 0.02

CONTROLLER = """
import sys

from hrpsim.controllers import Controller, run_main


class GravityHold(Controller):
    def control(self, state):
        return self.model.gravity() - 2.0 * state.dq  # a little damping for what the engines differ in


if __name__ == "__main__":
    sys.exit(run_main(GravityHold))
"""

PROJECT = """world: {{timestep: 0.001, gravity: {gravity}, end_time: 0.6, sync: lockstep}}
models:
  - name: pa10
    file: {models}/openhrp3/model/PA10/pa10.main.wrl
    joints: {{J2: 0.8, J4: 0.8, J6: 0.8, J7: 1.57}}
    drive: torque
record: {{file: {folder}/run.mcap}}
controllers:
  - {{name: hold, robot: pa10, {how}, period: 0.001}}
"""


def _project(folder: Path, *, in_process: bool) -> Path:
    controller = folder / "gravity_hold.py"
    controller.write_text(CONTROLLER)
    how = f"in_process: true, file: {controller}" if in_process else f"command: python {controller}"
    path = folder / "moon.yaml"
    path.write_text(PROJECT.format(gravity=MOON, models=MODELS, folder=folder, how=how))
    return path


def _largest_swing(recording: Path) -> float:
    rec = open_recording(recording)
    joints = rec.joints("pa10")
    start = np.array([HELD.get(name, 0.0) for name in joints])
    held = np.array([name in HELD or not name.startswith("HAND") for name in joints])
    states = [np.asarray(s["q"], float) for _, _, s in rec.messages([state_topic("pa10")])]
    assert len(states) > 500
    return float(max(np.abs(q - start)[held].max() for q in states))


@pytest.mark.parametrize("in_process", [False, True], ids=["process", "in-process"])
def test_gravity_compensation_holds_pa10_on_the_moon(tmp_path: Path, in_process: bool) -> None:
    project = _project(tmp_path, in_process=in_process)
    if in_process:
        with Simulation(load_project(project)) as sim:
            sim.run()
    else:
        assert launch_summary(project, tmp_path).summary["error"] is None
    assert _largest_swing(tmp_path / "run.mcap") < STILL_RAD
