"""Pipelined lockstep (world.command_delay: 1): the answer to tick k acts from tick k + 1, so the
controller computes while the engine integrates; runs stay deterministic."""

from __future__ import annotations

import numpy as np
import pytest
import yaml
from controller_helpers import EXAMPLES, SR1_URDF, HubUnderTest, Stack, sr1_body

from hrpsim.controllers import Controller
from hrpsim.errors import ConfigError
from hrpsim.project import parse_project


class _Stepper(Controller):
    """q_ref = 0.01 * tick on every joint (high gain): the engine's q shows which command acted."""

    def control(self, state):
        return self.targets(np.full(len(self.joints), 0.01 * state.tick))


def _project(tmp_path, delay: int):
    data = {"world": {"timestep": 0.001, "command_delay": delay}, "models": [{"name": "robot", "file": str(SR1_URDF)}]}
    return parse_project(data, str(tmp_path / "project.yaml"))


@pytest.mark.parametrize("delay", [0, 1])
def test_the_answer_to_tick_k_acts_from_tick_k_plus_the_delay(nameserver, tmp_path, delay):
    body = sr1_body()
    with HubUnderTest(nameserver, _project(tmp_path, delay), body) as sim:
        sim.hub.attach_local(_Stepper(), name="stepper", robot="robot")
        after = []
        for _ in range(8):
            sim.step()
            after.append(float(sim.engine.read("robot").q[0]))
    expected = [0.01 * (k - delay) if k >= delay else 0.0 for k in range(8)]
    assert after == pytest.approx(expected, abs=1e-12)


def _pipelined_walk(tmp_path) -> str:
    data = yaml.safe_load((EXAMPLES / "sample_walk.yaml").read_text())
    data["world"].update(command_delay=1, end_time=1.0)
    for model in data["models"]:
        model["file"] = str((EXAMPLES / model["file"]).resolve())
    # the project's walker entry stays: `start` then waits for it to attach, so both runs begin with
    # it (a controller of a stopped run may still be registered under the same name)
    path = tmp_path / "walk.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def test_pipelined_runs_are_bit_identical_across_processes(nameserver, tmp_path):
    summaries = []
    for attempt in range(2):
        folder = tmp_path / f"run{attempt}"
        folder.mkdir()
        with Stack(folder, nameserver, _pipelined_walk(tmp_path)) as stack:
            stack.controller(EXAMPLES / "controllers" / "sample_walk.py", name="walker")
            summaries.append(stack.run(until=1.0))
    for summary in summaries:
        # 500 states went out; the answer to the last one would act after the run's end
        assert summary["error"] is None and summary["controllers"]["walker"]["ticks"] == 499, summary
    first, second = summaries
    assert first["robots"] == second["robots"]


def test_pipelining_is_refused_in_realtime(tmp_path):
    with pytest.raises(ConfigError, match=r"world\.command_delay"):
        parse_project({"world": {"sync": "realtime", "command_delay": 1}}, str(tmp_path / "p.yaml"))
