"""What an in-process controller is handed depends on what stands between it and the engine: on
MuJoCo with nothing between, the engine's own arrays (LiveState); with hardware models between, the
state as the devices let it see it."""

from __future__ import annotations

import numpy as np
import pytest
from controller_helpers import SR1_URDF, sr1_body

import hrpsim
from hrpsim.controllers import Controller
from hrpsim.controllers.state import LiveState
from hrpsim.project import parse_project

pytest.importorskip("mujoco")

RESOLUTION = 2 * np.pi / 1000


class _Probe(Controller):
    """Keeps the kind of state it is handed and a copy of its q; holds the initial pose."""

    def __init__(self) -> None:
        super().__init__()
        self.kinds: set[type] = set()
        self.seen: list[np.ndarray] = []

    def control(self, state):
        self.kinds.add(type(state))
        self.seen.append(state.q.copy())
        return self.targets(self.seen[0])


def _run(tmp_path, devices: dict | None) -> tuple[_Probe, list[np.ndarray]]:
    robot = {"name": "robot", "file": str(SR1_URDF), "joints": {sr1_body().joint_names[0]: 0.12345}}
    if devices is not None:
        robot["devices"] = devices
    data = {"world": {"timestep": 0.002, "engine": "mujoco"}, "models": [robot]}
    probe, true_q = _Probe(), []
    with hrpsim.Simulation(parse_project(data, str(tmp_path / "project.yaml"))) as sim:
        sim.attach(probe, robot="robot", name="probe")
        for _ in range(5):
            true_q.append(sim.raw_state("robot").q.copy())
            sim.step(1)
    return probe, true_q


def test_with_nothing_between_the_controller_reads_the_engine_s_arrays(tmp_path) -> None:
    probe, true_q = _run(tmp_path, None)
    assert probe.kinds == {LiveState}
    for seen, true in zip(probe.seen, true_q, strict=True):
        assert np.array_equal(seen, true)


def test_with_devices_between_the_controller_sees_what_they_let_it(tmp_path) -> None:
    probe, true_q = _run(tmp_path, {"encoder": {"counts_per_rev": 1000}})
    assert LiveState not in probe.kinds
    for seen in probe.seen:  # the encoder's counts, not the engine's angles
        np.testing.assert_allclose(seen / RESOLUTION, np.round(seen / RESOLUTION), atol=1e-9)
    assert any(not np.array_equal(seen, true) for seen, true in zip(probe.seen, true_q, strict=True))
