"""A force sensor at impact reads the impulse its joint carried that step, divided by the step.

sample1 floats without gravity; its right arm swings forward at 1 rad/s (the hand at 0.61 m/s)
into a fixed pillar (box.wrl stood on end). The wrist sensor's reading times the step is the
momentum the rest of the robot loses through the wrist that step, measured from the links' own
motion: the peak is physical, not a read-out artefact. ODE stops the hand within one step, so the
peak is the impulse over the step (twice as high at half the step); MuJoCo's soft contact spreads
a like impulse over tens of milliseconds (docs/sensors.md, *Force sensors at impact*).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from process_helpers import MODELS

import hrpsim
from hrpsim.transforms import quaternion_matrix

SWING = 1.0  # rad/s of RARM_SHOULDER_P, forward
DURATION = 0.08  # s: the hand meets the pillar at about 0.06 s
PROJECT = """world: {{timestep: {timestep}, gravity: [0, 0, 0], engine: {engine}}}
models:
  - {{name: robot, file: {models}/openhrp3/model/sample1.wrl, position: [0, 0, 0.7235], drive: torque}}
  - {{name: pillar, file: {models}/openhrp3/model/box.wrl, static: true, position: [0.16, -0.25, 1.05],
     rotation: [1, 0, 0, 1.5707963]}}
collisions:
  - {{a: pillar, b: robot, friction: 0.5, restitution: 0.0}}
"""


def _momenta(sim: hrpsim.Simulation, masses: np.ndarray, coms: np.ndarray) -> np.ndarray:
    """(links, 3): each link's linear momentum (kg m/s, world)."""
    links = sim.engine.link_states("robot")
    rotations = np.array([quaternion_matrix(q) for q in links.quaternions])
    lever = np.einsum("kab,kb->ka", rotations, coms)
    return masses[:, None] * (links.linear + np.cross(links.angular, lever))


def swing_into_the_pillar(tmp_path: Path, engine: str, timestep: float) -> tuple[np.ndarray, np.ndarray]:
    """Per step: the wrist sensor's force (world, N) and the momentum gained that step by every link
    but the hand (kg m/s, world)."""
    project = tmp_path / f"impact-{engine}-{timestep}.yaml"
    project.write_text(PROJECT.format(timestep=timestep, engine=engine, models=MODELS))
    with hrpsim.Simulation(project) as sim:
        body = sim.bodies["robot"]
        sensor = next(s for s in body.sensors if s.name == "rhsensor")
        masses = np.array([link.mass for link in body.links])
        coms = np.array([link.com for link in body.links])
        rest = np.arange(len(body.links)) != sensor.link
        rates = np.zeros(len(body.joint_names))
        rates[body.joint_names.index("RARM_SHOULDER_P")] = -SWING
        sim.set_link_data("robot", dq=rates)
        before = _momenta(sim, masses, coms)[rest].sum(axis=0)
        forces, gained = [], []
        for _ in range(round(DURATION / timestep)):
            sim.step(1)
            turn = quaternion_matrix(sim.engine.link_states("robot").quaternions[sensor.link]) @ sensor.rotation
            forces.append(turn @ sim.state("robot").sensors["rhsensor"][:3])
            after = _momenta(sim, masses, coms)[rest].sum(axis=0)
            gained.append(after - before)
            before = after
    return np.array(forces), np.array(gained)


@pytest.fixture(scope="module")
def ode_runs(tmp_path_factory) -> dict[float, tuple[np.ndarray, np.ndarray]]:
    folder = tmp_path_factory.mktemp("impact")
    return {step: swing_into_the_pillar(folder, "ode", step) for step in (0.002, 0.001)}


def test_on_ode_the_impact_step_reads_the_momentum_its_joint_carried(ode_runs) -> None:
    for step, (forces, gained) in ode_runs.items():
        peak = int(np.argmax(np.linalg.norm(forces, axis=1)))
        assert np.linalg.norm(forces[peak]) > 4000.0, step  # one step holds the whole impact
        impulse = forces[peak] * step
        assert np.linalg.norm(impulse - gained[peak]) < 0.05 * np.linalg.norm(gained[peak]), step
        after = np.linalg.norm(forces[peak + 1 :], axis=1)
        assert after.max() < 1.0, step  # the hand is stopped: nothing more to carry


def test_on_ode_half_the_step_doubles_the_peak_and_keeps_the_impulse(ode_runs) -> None:
    (forces_2, _), (forces_1, _) = ode_runs[0.002], ode_runs[0.001]
    peak_2, peak_1 = np.linalg.norm(forces_2, axis=1).max(), np.linalg.norm(forces_1, axis=1).max()
    assert 1.8 < peak_1 / peak_2 < 2.2
    assert abs(peak_1 * 0.001 - peak_2 * 0.002) < 0.1 * peak_2 * 0.002


def test_mujoco_spreads_a_like_impulse_over_many_steps(tmp_path: Path, ode_runs) -> None:
    pytest.importorskip("mujoco")
    forces, _ = swing_into_the_pillar(tmp_path, "mujoco", 0.002)
    magnitudes = np.linalg.norm(forces, axis=1)
    assert np.count_nonzero(magnitudes > 100.0) >= 5  # soft: the impact lasts 10 ms and more
    assert magnitudes.max() < 0.3 * np.linalg.norm(ode_runs[0.002][0], axis=1).max()
    ode_forces, _ = ode_runs[0.002]
    ode_impulse = np.linalg.norm(ode_forces.sum(axis=0) * 0.002)
    assert abs(np.linalg.norm(forces.sum(axis=0) * 0.002) - ode_impulse) < 0.2 * ode_impulse
