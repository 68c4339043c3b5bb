"""A model the project does not place starts where its file puts its root, as in GrxUI and
Choreonoid: floor.wrl's root says z = -0.1, so a box dropped on it rests at 0.1."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from process_helpers import launch_summary

from hrpsim.modelloader import load_body
from hrpsim.placement import root_placement
from hrpsim.project import ModelConfig, Project, load_project
from hrpsim.transforms import axis_angle_matrix


def test_a_box_dropped_on_an_unplaced_floor_rests_on_its_surface(tmp_path: Path, models_dir: Path) -> None:
    model = models_dir / "openhrp3" / "model"
    project = tmp_path / "drop.yaml"
    project.write_text(
        "world: {timestep: 0.001, end_time: 1.5}\n"
        "models:\n"
        f"  - {{name: floor, file: {model / 'floor.wrl'}, static: true}}\n"
        f"  - {{name: box, file: {model / 'box2.wrl'}, position: [0, 0, 1.0], rotation: [0, 0, 1, 0]}}\n"
        "collisions:\n"
        "  - {a: floor, b: box, friction: 0.5}\n"
    )
    summary = launch_summary(project, tmp_path).summary
    box = summary["robots"]["box"]
    assert box["root_end"][2] == pytest.approx(0.1, abs=2e-3)  # box2 is 0.2 m tall; the floor's top is z = 0


def test_each_of_position_and_rotation_defaults_to_the_file(models_dir: Path) -> None:
    box = load_body(models_dir / "openhrp3" / "model" / "box2.wrl")
    file_position, file_rotation = box.root.translation, box.root.rotation
    assert not np.allclose(file_rotation, np.eye(3))  # the file turns its root: the default shows
    position, rotation = root_placement(ModelConfig("box", "box2.wrl"), box)
    assert np.allclose(position, file_position) and np.allclose(rotation, file_rotation)
    position, rotation = root_placement(ModelConfig("box", "box2.wrl", position=[1.0, 2.0, 3.0]), box)
    assert position.tolist() == [1.0, 2.0, 3.0] and np.allclose(rotation, file_rotation)
    turned = ModelConfig("box", "box2.wrl", rotation=[0.0, 0.0, 1.0, 0.5])
    position, rotation = root_placement(turned, box)
    assert np.allclose(position, file_position) and np.allclose(rotation, axis_angle_matrix([0, 0, 1], 0.5))


def test_a_urdf_root_fixed_to_world_is_placed_by_its_joint(tmp_path: Path) -> None:
    urdf = tmp_path / "stand.urdf"
    urdf.write_text(
        '<robot name="stand"><link name="world"/><link name="base"/>'
        '<joint name="anchor" type="fixed"><parent link="world"/><child link="base"/>'
        '<origin xyz="0.5 0 0.25"/></joint></robot>'
    )
    position, _ = root_placement(ModelConfig("stand", str(urdf)), load_body(urdf))
    assert position.tolist() == [0.5, 0.0, 0.25]


def test_an_unplaced_model_stays_unplaced_across_the_wire(tmp_path: Path, models_dir: Path) -> None:
    project = tmp_path / "p.yaml"
    project.write_text(f"models:\n  - {{name: floor, file: {models_dir / 'openhrp3/model/floor.wrl'}}}\n")
    loaded = load_project(project)
    assert loaded.models[0].position is None and loaded.models[0].rotation is None
    again = Project.from_wire(loaded.to_wire()).models[0]
    assert again.position is None and again.rotation is None
