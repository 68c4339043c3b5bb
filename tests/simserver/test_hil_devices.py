"""Hardware models (simserver/hardware_models.py), applied by the controller hub for the simulator and the stand-in
alike: each one's effect on what a controller sees or on what reaches the engine."""

from __future__ import annotations

import numpy as np
import pytest
from controller_helpers import SR1_URDF, HubUnderTest, sr1_body

from hrpsim.controllers import Controller
from hrpsim.engines.base import JointCommand
from hrpsim.errors import ConfigError
from hrpsim.project import parse_project


def _project(tmp_path, devices: dict, *, joints: dict | None = None):
    data = {
        "world": {"timestep": 0.001},
        "models": [{"name": "robot", "file": str(SR1_URDF), "devices": devices, "joints": joints or {}}],
    }
    return parse_project(data, str(tmp_path / "project.yaml"))


class _Probe(Controller):
    """Records the q it sees; commands q_ref = 0.01 * tick on every joint (high gain)."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[np.ndarray] = []

    def control(self, state):
        self.seen.append(state.q.copy())
        return self.targets(np.full(len(self.joints), 0.01 * state.tick))


def _run(nameserver: str, project, ticks: int) -> tuple[_Probe, list[np.ndarray]]:
    body = sr1_body()
    with HubUnderTest(nameserver, project, body) as sim:
        probe = _Probe()
        sim.hub.attach_local(probe, name="probe", robot="robot")
        true_q = []
        for _ in range(ticks):
            sim.step()
            true_q.append(sim.engine.read("robot").q.copy())
    return probe, true_q


def test_encoder_angles_are_whole_multiples_of_the_resolution(shared_nameserver, tmp_path):
    names = sr1_body().joint_names
    project = _project(
        tmp_path, {"encoder": {"counts_per_rev": 1000, "gear_ratio": 2}}, joints={names[0]: 0.12345, names[1]: -0.4321}
    )
    probe, _ = _run(shared_nameserver, project, 3)
    resolution = 2 * np.pi / 2000
    steps = probe.seen[0] / resolution
    np.testing.assert_allclose(steps, np.round(steps), atol=1e-9)
    assert probe.seen[0][0] != 0.12345 and abs(probe.seen[0][0] - 0.12345) <= resolution / 2


def test_the_same_seed_gives_the_same_noise_and_another_seed_other_noise(shared_nameserver, tmp_path):
    def seen(seed: int) -> np.ndarray:
        project = _project(tmp_path, {"noise": {"seed": seed, "q": {"std": 0.01, "bias": 0.1}}})
        return np.array(_run(shared_nameserver, project, 5)[0].seen)

    first, again, other = seen(7), seen(7), seen(8)
    assert np.array_equal(first, again)
    assert not np.array_equal(first, other)
    assert abs(float(np.mean(first[0])) - 0.1) < 0.01  # the bias shows through the noise


@pytest.mark.parametrize("latency", [0, 3])
def test_sensor_latency_shows_the_state_of_n_ticks_before(shared_nameserver, tmp_path, latency):
    project = _project(tmp_path, {"latency": {"sensor": latency}})
    probe, true_q = _run(shared_nameserver, project, 10)
    for k in range(latency + 1, 10):
        np.testing.assert_array_equal(probe.seen[k], true_q[k - 1 - latency])


@pytest.mark.parametrize("latency", [0, 2])
def test_command_latency_shifts_the_response_by_n_ticks(shared_nameserver, tmp_path, latency):
    project = _project(tmp_path, {"latency": {"command": latency}})
    _, true_q = _run(shared_nameserver, project, 10)
    for k in range(latency, 10):  # the command answering tick k acts from tick k + latency
        np.testing.assert_allclose(true_q[k], 0.01 * (k - latency))


def test_the_watchdog_zeroes_torques_when_commands_stop(shared_nameserver, tmp_path):
    project = _project(tmp_path, {"watchdog_ms": 20})
    body = sr1_body()
    n = len(body.joint_names)
    with HubUnderTest(shared_nameserver, project, body) as sim:
        sim.engine.apply("robot", JointCommand(torque=np.full(n, 5.0), modes=dict.fromkeys(body.joint_names, "torque")))
        sim.run(15)
        assert np.all(sim.engine.read("robot").tau == 5.0)  # within 20 ms: the drivers keep the torque
        sim.run(10)
        assert np.all(sim.engine.read("robot").tau == 0.0)


def test_torque_saturation_and_dropped_commands(shared_nameserver, tmp_path):
    class Push(Controller):
        def control(self, state):
            cmd = self.torque(np.full(len(self.joints), 1e6))
            return cmd.mode_all("torque")

    project = _project(tmp_path, {"saturate_torque": True, "drop_commands": 0.5, "noise": {"seed": 3}})
    body = sr1_body()
    limits = np.array([lk.torque_upper for lk in body.joints])
    with HubUnderTest(shared_nameserver, project, body) as sim:
        sim.hub.attach_local(Push(), name="push", robot="robot")
        sim.run(40)
        tau = sim.engine.read("robot").tau
        dropped = sim.hub.actuation.devices["robot"].dropped
    finite = np.isfinite(limits)
    assert finite.any() and np.all(tau[finite] == limits[finite])
    assert 5 < dropped < 35  # about half of 40, from the seeded generator


def test_bad_device_settings_name_the_key(tmp_path):
    with pytest.raises(ConfigError) as caught:
        _project(tmp_path, {"latency": {"sensor": -1}, "drop_commands": 1.5, "noise": {"q": {"std": "x"}}})
    text = str(caught.value)
    assert "models[0].devices.latency.sensor" in text and "models[0].devices.drop_commands" in text
    assert "models[0].devices.noise.q.std" in text
