"""An MJCF file through the real processes: the modelloader service (with and without the world
option), the collision service (adding bodies by file), and a project file run by the Python API."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
from collision_helpers import collision_service
from mjcf_helpers import suite_folder
from modelloader_helpers import modelloader_process

import hrpsim
from hrpsim.bodyinfo import bodies_equal
from hrpsim.errors import RequestError
from hrpsim.kinematics import forward_kinematics
from hrpsim.modelloader import load_body
from hrpsim.models import fetch_body

pytest.importorskip("mujoco")

PROJECT = """world: {{timestep: 0.002, end_time: {end}, joint_limits: true, engine: {engine}}}
services: {{loader: local}}
models:
  - {{name: floor, file: humanoid.xml, static: true, options: {{world: true}}}}
  - {{name: humanoid, file: humanoid.xml}}
collisions:
  - {{a: floor, b: humanoid, friction: 0.7}}
"""


@pytest.fixture
def humanoid(tmp_path: Path) -> Path:
    """dm_control's humanoid.xml with the files it includes, in the test's folder."""
    shutil.copy(suite_folder() / "humanoid.xml", tmp_path / "humanoid.xml")
    shutil.copytree(suite_folder() / "common", tmp_path / "common")
    return tmp_path / "humanoid.xml"


def test_the_modelloader_service_reads_the_robot_and_its_world(nameserver: str, tmp_path: Path, humanoid: Path) -> None:
    with modelloader_process(nameserver, tmp_path):
        robot = fetch_body(humanoid, nameserver=nameserver)
        world = fetch_body(humanoid, nameserver=nameserver, options={"world": True})
        with pytest.raises(RequestError, match="option 'world' must be bool"):
            fetch_body(humanoid, nameserver=nameserver, options={"world": "yes"})
    assert bodies_equal(robot, load_body(humanoid)) and robot.dof == 21
    assert bodies_equal(world, load_body(humanoid, world=True)) and world.static
    assert str(tmp_path / "common" / "materials.xml") in robot.metadata["files"]  # the cache watches includes


def test_the_collision_service_adds_both_by_file(nameserver: str, tmp_path: Path, humanoid: Path) -> None:
    robot = load_body(humanoid)
    with modelloader_process(nameserver, tmp_path), collision_service(nameserver, tmp_path) as client:
        added = client.call("add_body", name="humanoid", file=str(humanoid))
        assert added["links"] == [lk.name for lk in robot.links]
        client.call("add_body", name="floor", file=str(humanoid), options={"world": True})
        poses = forward_kinematics(robot, robot.root.translation, robot.root.rotation, np.zeros(len(robot.links)))
        matrices = np.array([np.block([[r, p[:, None]], [np.zeros((1, 3)), np.ones((1, 1))]]) for p, r in poses])
        client.call("set_poses", poses={"humanoid": matrices, "floor": np.eye(4)[None]})
        head = client.call("ray", origin=[0.0, 0.0, 3.0], direction=[0.0, 0.0, -1.0], bodies=["humanoid"])
        floor = client.call("ray", origin=[3.0, 0.0, 1.0], direction=[0.0, 0.0, -1.0], bodies=["floor"])
    top_of_head = 1.5 + 0.19 + 0.09  # torso at 1.5 m, the head 0.19 m above it, a 0.09 m sphere
    np.testing.assert_allclose(head["distance"], 3.0 - top_of_head, atol=1e-6)
    np.testing.assert_allclose(floor["distance"], 1.0, atol=1e-9)


@pytest.mark.parametrize("engine", ["ode", "mujoco"])
def test_a_project_of_the_robot_on_its_own_floor_runs(engine: str, tmp_path: Path, humanoid: Path) -> None:
    project = tmp_path / "humanoid.yaml"
    project.write_text(PROJECT.format(end=2.0, engine=engine))
    with hrpsim.Simulation(project) as sim:
        start = sim.state("humanoid").root_position[2]
        sim.run()
        end = sim.state("humanoid").root_position[2]
    assert start == pytest.approx(1.5, abs=1e-3)
    assert 0.05 < end < 0.6  # fallen onto the floor, not through it
