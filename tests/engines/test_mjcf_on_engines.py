"""MJCF models on both engines. dm_control's humanoid, read from its MJCF file with its floor (the
file's world geoms, loaded with the world option), falls without a controller, lands on that floor
and comes to rest: it neither sinks through the floor nor is thrown apart by its joint stops. Every
other readable suite model runs a second on its own world."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from mjcf_helpers import suite_file
from sim_helpers import project

from hrpsim.engines.base import make_engine
from hrpsim.modelloader import load_body
from hrpsim.project import CollisionPair, ModelConfig

pytest.importorskip("mujoco")

STEP = 0.002
SECONDS = 8.0
SETTLED = 1.0  # the last second: at rest


@pytest.mark.parametrize("engine", ["ode", "mujoco"])
def test_humanoid_falls_onto_its_floor_and_rests(engine: str, tmp_path: Path) -> None:
    path = suite_file("humanoid.xml")
    robot, floor = load_body(path), load_body(path, world=True)
    assert [s.kind for s in floor.links[0].shapes] == ["plane"]
    proj, bodies = project(
        tmp_path,
        [
            (ModelConfig(name="floor", file=str(path), static=True), floor),
            (ModelConfig(name="humanoid", file=str(path)), robot),  # at its file's pose: 1.5 m up
        ],
        timestep=STEP,
        joint_limits=True,
        collisions=[CollisionPair("floor", "humanoid", friction=0.7)],
        engine=engine,
    )
    world = make_engine(proj, bodies)
    start = world.read("humanoid").root_position.copy()
    joint_speed, root_speed = [], []
    for tick in range(round(SECONDS / STEP)):
        world.step()
        if tick * STEP >= SECONDS - SETTLED:
            state = world.read("humanoid")
            joint_speed.append(np.abs(state.dq).max())
            root_speed.append(np.linalg.norm(state.root_velocity))
    state = world.read("humanoid")
    assert start[2] == pytest.approx(1.5, abs=1e-3)
    assert state.root_position[2] < 0.5  # nothing holds it up: it falls
    assert np.linalg.norm(state.root_position[:2] - start[:2]) < 1.5  # and is not thrown away
    heights = [position[2] for position, _ in world.forward_kinematics("humanoid")]
    assert min(heights) > -0.01  # every link on or above the floor, none through it
    # at rest; on MuJoCo, which simulates the file's joint springs and dampers against its soft
    # contacts, the limbs still creep (MuJoCo running the file by itself creeps faster: 0.46 rad/s)
    creep = 1.0 if engine == "ode" else 4.0
    assert max(joint_speed) < 0.05 * creep and max(root_speed) < 0.02 * creep
    inside = [lk.q_lower - 0.05 <= q <= lk.q_upper + 0.05 for lk, q in zip(robot.joints, state.q, strict=True)]
    assert all(inside)  # its stops held


READABLE = ["acrobot", "cartpole", "cheetah", "finger", "hopper", "pendulum", "reacher", "walker"]


@pytest.mark.parametrize("engine", ["ode", "mujoco"])
@pytest.mark.parametrize("name", READABLE)
def test_every_readable_suite_model_runs_a_second_on_its_world(name: str, engine: str, tmp_path: Path) -> None:
    """No explosion (the engines' state guard would raise) and no joint thrown into a spin."""
    path = suite_file(f"{name}.xml")
    proj, bodies = project(
        tmp_path,
        [
            (ModelConfig(name="world", file=str(path), static=True), load_body(path, world=True)),
            (ModelConfig(name="robot", file=str(path)), load_body(path)),
        ],
        timestep=STEP,
        joint_limits=True,
        collisions=[CollisionPair("world", "robot", friction=0.7)],
        engine=engine,
    )
    world = make_engine(proj, bodies)
    for _ in range(round(1.0 / STEP)):
        world.step()
    state = world.read("robot")
    assert np.all(np.abs(state.dq) < 20.0)
