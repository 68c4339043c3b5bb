"""Pushes: from the project, from ``sim.push`` and from ``hrpsim sim push``, recorded and replayed.

A 10 kg box floats without gravity; a push of force F for T seconds must leave it moving at
F T / m (its momentum changed by the impulse), to 1 %.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest
from process_helpers import HRPSIM
from sim_helpers import BOX_URDF, start_simserver, wait_finished

import hrpsim
from hrpsim.errors import ConfigError, NotFound, RequestError
from hrpsim.project import load_project
from hrpsim.recording.reader import open_recording
from hrpsim.recording.schemas import DISTURBANCES_TOPIC
from hrpsim.recording.writer import recorders

MASS = 10.0
FORCE = np.array([20.0, -10.0, 5.0])
DURATION = 0.05


def floating_box(folder: Path, *, disturbances: str = "", engine: str = "ode") -> Path:
    (folder / "box.urdf").write_text(BOX_URDF.format(mass=MASS, i=MASS * 0.08 / 12))
    path = folder / "float.yaml"
    path.write_text(
        f"world: {{timestep: 0.001, end_time: 0.3, gravity: [0, 0, 0], engine: {engine}}}\n"
        "services: {loader: local}\n"
        "models:\n"
        "  - {name: box, file: box.urdf, position: [0, 0, 1]}\n" + disturbances
    )
    return path


def momentum_matches(velocity: np.ndarray, force: np.ndarray = FORCE) -> None:
    expected = force * DURATION / MASS
    assert np.linalg.norm(np.asarray(velocity[:3]) - expected) <= 0.01 * np.linalg.norm(expected)


PROJECT_PUSH = (
    "disturbances:\n"
    f"  - {{time: 0.1, robot: box, link: body, force: {FORCE.tolist()}, duration: {DURATION}, "
    "point: [0, 0.1, 0]}\n"
)


@pytest.mark.parametrize("engine", ["ode", "mujoco"])
def test_a_project_push_gives_the_box_the_impulse_s_momentum(tmp_path: Path, engine: str) -> None:
    with hrpsim.Simulation(floating_box(tmp_path, disturbances=PROJECT_PUSH, engine=engine)) as sim:
        sim.run(0.09)
        assert np.allclose(sim.state("box").root_velocity, 0.0)  # not before its time
        sim.run(0.3)
        state = sim.state("box")
        momentum_matches(state.root_velocity)
        # pushed 0.1 m off its centre along y: it turns about the push's lever too
        lever_torque = np.cross([0.0, 0.1, 0.0], FORCE)
        angular = state.root_velocity[3:]
        assert np.dot(angular, lever_torque) > 0.0 and np.linalg.norm(angular) > 0.1


def test_sim_push_now_and_later(tmp_path: Path) -> None:
    with hrpsim.Simulation(floating_box(tmp_path)) as sim:
        sim.step(10)
        plan = sim.push("box", "body", FORCE, duration=DURATION)
        assert plan["start"] == pytest.approx(0.01) and plan["impulse"] == pytest.approx((FORCE * DURATION).tolist())
        sim.run(0.2)
        momentum_matches(sim.state("box").root_velocity)
        sim.push("box", "body", -FORCE, duration=DURATION, time=0.25)
        sim.run(0.3)
        assert np.allclose(sim.state("box").root_velocity[:3], 0.0, atol=1e-3 * np.linalg.norm(FORCE))
        with pytest.raises(NotFound, match=r"push\.link: robot 'box' has no link 'lid'"):
            sim.push("box", "lid", FORCE, duration=DURATION)
        with pytest.raises(RequestError, match=r"push\.duration: give a positive number"):
            sim.push("box", "body", FORCE, duration=0.0)


def test_a_push_from_the_command_line_reaches_a_running_simulator(tmp_path: Path, nameserver: str) -> None:
    project = floating_box(tmp_path)
    proc, client, _ = start_simserver(tmp_path, nameserver, project)
    try:
        push = [*HRPSIM, "sim", "--nameserver", nameserver, "push", "box"]
        force = [*map(str, FORCE), "--duration", str(DURATION), "--at", "0.1"]
        done = subprocess.run([*push, "body", *force], capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        assert '"impulse"' in done.stdout
        bad = subprocess.run([*push, "lid", *force], capture_output=True, text=True, timeout=60)
        assert bad.returncode == 1 and "no link 'lid'" in bad.stderr
        client.call("start", until=0.3)
        wait_finished(client)
        momentum_matches(np.asarray(client.call("state", robot="box")["root_velocity"]))
    finally:
        client.close()
        proc.stop()


def test_a_recording_keeps_the_pushes_and_its_replay_reproduces_them(tmp_path: Path) -> None:
    project = load_project(floating_box(tmp_path, disturbances=PROJECT_PUSH))
    with hrpsim.Simulation(project, observers=recorders(project, str(tmp_path / "run.mcap"))) as sim:
        sim.run(0.2)
        sim.push("box", "body", [0.0, 0.0, 30.0], duration=0.02)
        sim.run(0.3)
    rec = open_recording(tmp_path / "run.mcap")
    applied = [m for _, _, m in rec.messages([DISTURBANCES_TOPIC])]
    assert [m["tick"] for m in applied] == [*range(100, 150), *range(200, 220)]
    assert applied[0]["applied"][0]["force"] == FORCE.tolist()
    replay = subprocess.run(
        [*HRPSIM, "replay", str(tmp_path / "run.mcap")], capture_output=True, text=True, timeout=120
    )
    assert replay.returncode == 0, replay.stdout + replay.stderr
    assert "bit-identically" in replay.stdout


def test_a_bad_push_in_a_project_names_the_field(tmp_path: Path) -> None:
    text = "disturbances:\n  - {time: 0.1, robot: crate, link: body, force: [1, 2], duration: -1}\n"
    with pytest.raises(ConfigError) as err:
        load_project(floating_box(tmp_path, disturbances=text))
    message = str(err.value)
    assert "disturbances[0].duration: must be positive" in message
    assert "disturbances[0].force: must be a list of 3 numbers" in message
