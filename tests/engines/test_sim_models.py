"""ODE on OpenHRP3's sample1 standing in high-gain hold at 1 ms (at 2 ms, on every engine, with the
same checks, and the closed-link sample, are the conformance suite's: test_engine_conformance.py)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from sim_helpers import FLOOR, SAMPLE1, model, project

from hrpsim.engines.ode.engine import OdeEngine
from hrpsim.modelloader import load_body
from hrpsim.project import CollisionPair

G = 9.8


def _sample1_world(tmp_path: Path, *, timestep: float = 0.001) -> OdeEngine:
    robot = load_body(SAMPLE1)
    proj, bodies = project(
        tmp_path,
        [
            (model("floor", static=True, position=(0.0, 0.0, -0.1)), load_body(FLOOR)),
            (model("robot", position=(0.0, 0.0, 0.7235), drive="high_gain"), robot),
        ],
        timestep=timestep,
        collisions=[CollisionPair("floor", "robot", friction=0.5)],
    )
    return OdeEngine(proj, bodies)


def test_sample1_holds_its_initial_pose_upright_on_its_feet(tmp_path: Path) -> None:
    timestep = 0.001
    world = _sample1_world(tmp_path, timestep=timestep)
    body = world.body("robot")
    start = world.read("robot")
    for _ in range(round(5.0 / timestep)):
        world.step()
    state = world.read("robot")
    assert np.allclose(state.q, start.q, atol=1e-3)
    assert np.linalg.norm(state.root_position - start.root_position) < 5e-3
    assert state.root_rotation[:, 2] @ np.array([0.0, 0.0, 1.0]) > 0.999  # upright
    sensors = state.sensors
    feet = sensors["lfsensor"][2] + sensors["rfsensor"][2]
    assert feet == pytest.approx(body.total_mass * G, rel=0.04)  # only the feet below the sensors are missing
    below_sensors = sum(lk.mass for lk in body.links if lk.name.endswith("ANKLE_R"))
    assert feet == pytest.approx((body.total_mass - below_sensors) * G, rel=0.005)
    # The accelerometer on the chest reads +g upward once turned into the world frame.
    accel = body.sensors[[s.name for s in body.sensors].index("gsensor")]
    chest_rotation = world.model("robot").link_origin(world.model("robot").links[accel.link])[1]
    assert chest_rotation @ accel.rotation @ sensors["gsensor"] == pytest.approx([0.0, 0.0, G], abs=0.05)
