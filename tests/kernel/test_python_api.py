"""The Python API (hrpsim.Simulation): a simulation in the test process, the same Controller classes
in process, and the same results as the processes give."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
import yaml
from controller_helpers import EXAMPLES, write_controller
from process_helpers import REPO, launch_summary

import hrpsim
from hrpsim.controllers import Controller
from hrpsim.errors import SimulationError
from hrpsim.project import load_project

REFERENCE = REPO / "tests" / "data" / "sample_walk_summary.json"


def test_the_documented_example_holds_the_pose_and_plots_the_knee(tmp_path):
    out = tmp_path / "knee.png"
    result = subprocess.run(
        [sys.executable, str(EXAMPLES / "python" / "hold_and_plot.py"), str(out)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "'min_root_z': 0.72" in result.stdout  # stood still: the root never sank a centimetre


def test_the_walk_in_process_gives_the_external_runs_trajectory_bit_for_bit():
    """tests/launch/test_controller_walk.py holds the external run (launch, four processes) to the same file."""
    project = load_project(EXAMPLES / "sample_walk.yaml")
    walker = project.controllers[0]
    walker.in_process, walker.file = True, str(EXAMPLES / "controllers" / "sample_walk.py")
    with hrpsim.Simulation(project) as sim:
        summary = sim.run()
    reference = json.loads(REFERENCE.read_text())
    robot = summary["robots"]["robot"]
    assert {k: robot[k] for k in ("root_start", "root_end", "min_root_z")} == reference["robots"]["robot"]
    assert summary["controllers"]["walker"]["ticks"] == 8000 and summary["ticks"] == 8000


class _Recorder(Controller):
    """Records its ticks and moves every joint 0.01 (rad or m) away from where it started."""

    def __init__(self) -> None:
        super().__init__()
        self.ticks: list[int] = []
        self.goal: np.ndarray | None = None

    def control(self, state):
        self.ticks.append(state.tick)
        if self.goal is None:
            self.goal = state.q + 0.01
        return self.targets(self.goal)


def _pa10(tmp_path, **world):
    data = yaml.safe_load((EXAMPLES / "pa10.yaml").read_text())
    data["world"].update(world)
    data["controllers"] = []
    for m in data["models"]:
        m["file"] = str((EXAMPLES / m["file"]).resolve())
    m["drive"] = "high_gain"
    path = tmp_path / "pa10.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def test_an_attached_controller_runs_at_its_period_and_its_commands_apply(tmp_path):
    with hrpsim.Simulation(_pa10(tmp_path, end_time=0.1)) as sim:
        recorder = _Recorder()
        sim.attach(recorder, robot="pa10", name="rec", period=0.005)
        sim.run()
        assert recorder.ticks == list(range(0, 100, 5))
        np.testing.assert_allclose(sim.state("pa10").q, recorder.goal, atol=1e-6)
        report = sim.summary()["controllers"]["rec"]
        assert report["ticks"] == 20 and report["missed"] == 0


def test_a_controller_that_raises_gets_its_policy(tmp_path):
    class Broken(Controller):
        def control(self, state):
            raise ValueError("sensor out of range")

    with hrpsim.Simulation(_pa10(tmp_path, end_time=0.1)) as sim:
        sim.attach(Broken(), robot="pa10", name="broken")  # not in the project: the ad-hoc policy, hold
        sim.step(10)
        report = sim.summary()["controllers"]["broken"]
        assert report["policy_applied"] == "hold" and "sensor out of range" in report["events"][0]
        assert report["attached"] is False and sim.tick == 10


def test_reset_goes_back_to_the_start(tmp_path):
    with hrpsim.Simulation(_pa10(tmp_path)) as sim:
        start = sim.state("pa10").q.copy()
        sim.command("pa10", q_ref=start + 0.01)
        sim.step(50)
        assert not np.allclose(sim.state("pa10").q, start)
        sim.reset()
        assert sim.time == 0.0 and np.array_equal(sim.state("pa10").q, start)


def test_an_exploding_world_stops_with_the_model_and_link_named(tmp_path):
    with hrpsim.Simulation(_pa10(tmp_path)) as sim:
        sim.set_link_data("pa10", root_velocity=[2e3, 0, 0, 0, 0, 0])
        with pytest.raises(SimulationError, match="model 'pa10' link"):
            sim.step(5)


def test_launch_runs_a_controller_the_project_marks_in_process(tmp_path):
    controller = write_controller(
        tmp_path,
        "hold",
        """
        from hrpsim.controllers import Controller

        class Hold(Controller):
            def __init__(self, *, angle: float = 0.0):
                super().__init__()
                self.angle = angle

            def control(self, state):
                if not hasattr(self, "goal"):
                    self.goal = state.q + self.angle
                return self.targets(self.goal)
    """,
    )
    project = _pa10(tmp_path, end_time=0.2)
    data = yaml.safe_load(project.read_text())
    data["controllers"] = [
        {"name": "hold", "robot": "pa10", "in_process": True, "file": str(controller), "options": {"angle": 0.01}}
    ]
    project.write_text(yaml.safe_dump(data))
    summary = launch_summary(project, tmp_path, timeout=120).summary
    assert summary["controllers"]["hold"]["ticks"] == 200 and summary["error"] is None
    assert not (tmp_path / "run" / "controller-hold.log").exists()  # no process was started for it
