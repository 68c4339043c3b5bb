"""The World owns every operation and the run's one state: a command from the Python API takes a
controller's way (held arrays, hardware models), the state a controller receives is told apart from the
raw one, and every way of advancing stops at the one end time."""

from __future__ import annotations

import numpy as np
import pytest
from controller_helpers import SR1_URDF, Stack, write_controller
from process_helpers import run_hrpsim
from sim_helpers import write_box_drop_project

import hrpsim
from hrpsim.controllers import Controller
from hrpsim.errors import RequestError, SimulationError
from hrpsim.project import parse_project

TARGET = 0.3  # rad, every joint


def _kinematic(tmp_path, devices: dict | None = None, *, end_time: float = 1.0, controllers: list | None = None):
    model = {"name": "robot", "file": str(SR1_URDF), **({"devices": devices} if devices else {})}
    data = {
        "world": {"engine": "kinematic", "timestep": 0.001, "end_time": end_time},
        "models": [model],
        "controllers": controllers or [],
    }
    return parse_project(data, str(tmp_path / "project.yaml"))


class _CommandsAt(Controller):
    """Sends q_ref = TARGET on every joint when it is sent the state of tick ``at``, nothing else."""

    def __init__(self, at: int) -> None:
        super().__init__()
        self.at = at

    def control(self, state):
        return self.targets(np.full(len(self.joints), TARGET)) if state.tick == self.at else None


def _first_tick_at_target(sim: hrpsim.Simulation) -> int:
    for _ in range(20):
        if np.allclose(sim.raw_state("robot").q, TARGET):
            return sim.tick
        sim.step()
    raise AssertionError("the command never took effect")


@pytest.mark.parametrize("latency", [0, 3])
def test_a_command_from_the_python_api_is_delayed_as_a_controllers_is(tmp_path, latency):
    """The same command, once from a controller answering tick 10 and once from sim.command at tick 10:
    it acts from the same tick, the hardware model's command latency later."""
    devices = {"latency": {"command": latency}} if latency else None
    with hrpsim.Simulation(_kinematic(tmp_path, devices), record=False) as sim:
        sim.attach(_CommandsAt(10), robot="robot", name="once")
        sim.step(11)  # the state of tick 10 went out, its answer was applied
        by_controller = _first_tick_at_target(sim)
    with hrpsim.Simulation(_kinematic(tmp_path, devices), record=False) as sim:
        sim.step(10)
        sim.command("robot", q_ref=np.full(len(sim.state("robot").q), TARGET))
        by_api = _first_tick_at_target(sim)
    assert by_api == by_controller == 11 + latency


def test_the_state_a_controller_receives_is_the_devices_view_and_the_raw_state_the_truth(tmp_path):
    seen = []

    class Probe(Controller):
        def control(self, state):
            seen.append(state.q.copy())

    devices = {"noise": {"seed": 5, "q": {"std": 0.01, "bias": 0.2}}}
    with hrpsim.Simulation(_kinematic(tmp_path, devices), record=False) as sim:
        sim.attach(Probe(), robot="robot")
        sim.step(3)
        as_received, raw = sim.state("robot").q, sim.raw_state("robot").q
        again = sim.state("robot").q  # the same tick: the same draw of noise
        sim.step()
    assert np.array_equal(as_received, again) and np.array_equal(seen[-1], as_received)
    assert np.allclose(as_received - raw, 0.2, atol=0.06) and not np.array_equal(as_received, raw)
    assert np.allclose(raw, 0.0)  # the true joints never moved


def test_step_goes_no_further_than_the_end_time_and_the_run_ends_there(tmp_path):
    with hrpsim.Simulation(_kinematic(tmp_path, end_time=0.05), record=False) as sim:
        assert sim.step(30) == 30
        assert sim.step(1000) == 20 and sim.tick == 50
        status = sim.status
        assert status["status"] == "ended" and status["reason"] == "reached its end time, 0.05 s"
        with pytest.raises(RequestError, match=r"step: the run has reached its end time \(0.05 s\); reset"):
            sim.step()
        sim.run(until=0.08)  # a later end time, asked for
        assert sim.tick == 80 and sim.status["end_time"] == 0.08 and sim.status["status"] == "ended"
        sim.reset()
        assert sim.status["status"] == "paused" and sim.status["end_time"] == 0.05 and sim.step(10) == 10


def test_a_stop_policy_ends_the_run_in_its_tick_through_the_run_state(tmp_path):
    fragile = write_controller(
        tmp_path,
        "fragile",
        """
        import numpy as np
        from hrpsim.controllers import Controller

        class Fragile(Controller):
            def control(self, state):
                if state.tick == 5:
                    raise ValueError("lost the encoder")
                return self.targets(np.full(len(self.joints), 0.01 * state.tick))
        """,
    )
    listed = {"name": "fragile", "robot": "robot", "in_process": True, "file": str(fragile), "policy": "stop"}
    with hrpsim.Simulation(_kinematic(tmp_path, controllers=[listed]), record=False) as sim:
        with pytest.raises(SimulationError, match=r"controller 'fragile' .*lost the encoder; its policy is stop"):
            sim.step(20)
        assert sim.tick == 5  # the tick it failed in was not integrated
        status = sim.status
        assert status["status"] == "ended" and "lost the encoder" in status["error"]
        assert sim.summary()["error"] == status["error"]
        with pytest.raises(SimulationError, match="reset first"):
            sim.step()


def test_hrpsim_sim_step_stops_at_the_projects_end_time_and_says_so(tmp_path, shared_nameserver):
    project = write_box_drop_project(tmp_path, end_time=0.25)
    ns = ["--nameserver", shared_nameserver]
    with Stack(tmp_path, shared_nameserver, project, loader=False) as stack:
        stepped = run_hrpsim(["sim", "step", "1000", *ns])
        assert stepped.returncode == 0, stepped.stderr
        assert "t=0.2500 s, tick 250, ended" in stepped.stdout
        assert "250 of the 1000 ticks asked were made: the run reached its end time, 0.25 s" in stepped.stdout
        status = stack.sim.call("status")
        assert (status["tick"], status["status"], status["finished"]) == (250, "ended", True)
        again = run_hrpsim(["sim", "step", "5", *ns])
        assert again.returncode == 1 and "the run has reached its end time (0.25 s)" in again.stderr
