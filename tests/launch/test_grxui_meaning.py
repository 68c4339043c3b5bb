"""GrxUI projects run with the physics GrxUI gives them: extra-joint items close loops (here
between two models), only the listed collision pairs collide, and a property for a joint the
model lacks is a note, not a refusal; `hrpsim launch` prints one line per item not carried over."""

from __future__ import annotations

from pathlib import Path

import pytest
from process_helpers import launch_summary
from sim_helpers import FLOOR_URDF

from hrpsim.project import CollisionPair, ModelConfig, Project, load_project

ITEM = "com.generalrobotix.ui.item."


def _model(name: str, url: Path, z: float, *, robot: bool, extra: str = "") -> str:
    return (
        f'<item class="{ITEM}GrxModelItem" name="{name}" url="{url}">\n'
        f'<property name="isRobot" value="{str(robot).lower()}"/>\n'
        f'<property name="WAIST.translation" value="0.0 0.0 {z}"/>\n'
        f'<property name="WAIST.rotation" value="0.0 0.0 1.0 0.0"/>\n{extra}</item>\n'
    )


def _project(tmp_path: Path, *items: str) -> Path:
    path = tmp_path / "grx.xml"
    path.write_text(
        '<grxui><mode name="Simulation">\n'
        f'<item class="{ITEM}GrxSimulationItem" name="sim">\n'
        '<property name="totalTime" value="1.0"/><property name="timeStep" value="0.001"/>\n'
        '<property name="gravity" value="9.8"/></item>\n' + "".join(items) + "</mode></grxui>\n"
    )
    return path


@pytest.fixture
def box_files(models_dir: Path) -> tuple[Path, Path]:
    return models_dir / "openhrp3/model/box.wrl", models_dir / "openhrp3/model/box2.wrl"


def test_an_extra_joint_item_holds_a_box_to_another_model(tmp_path: Path, box_files) -> None:
    anchor, box = box_files
    joint = (
        f'<item class="{ITEM}GrxExtraJointItem" name="hook">\n'
        '<property name="object1Name" value="anchor"/><property name="link1Name" value="WAIST"/>\n'
        '<property name="object2Name" value="box"/><property name="link2Name" value="WAIST"/>\n'
        '<property name="link1LocalPos" value="0.0 0.0 -0.4"/>\n'
        '<property name="link2LocalPos" value="0.0 0.0 0.1"/>\n'
        '<property name="jointType" value="ball"/></item>\n'
    )
    project = _project(tmp_path, _model("anchor", anchor, 2.0, robot=False), _model("box", box, 1.5, robot=True), joint)
    (loop,) = load_project(project).extra_joints
    assert (loop.model1, loop.link1, loop.model2, loop.link2, loop.type) == ("anchor", "WAIST", "box", "WAIST", "ball")
    summary = launch_summary(project, tmp_path).summary
    assert summary["robots"]["box"]["root_end"][2] == pytest.approx(1.5, abs=0.05)  # hangs; free, it would fall 4.9 m


def test_only_the_listed_pairs_collide(tmp_path: Path, box_files, models_dir: Path) -> None:
    floor = models_dir / "openhrp3/model/floor.wrl"
    _, box = box_files
    project = _project(tmp_path, _model("floor", floor, -0.1, robot=False), _model("box", box, 0.5, robot=True))
    assert load_project(project).collision_pairs() == []
    summary = launch_summary(project, tmp_path).summary
    assert summary["robots"]["box"]["root_end"][2] < -1.0  # GrxUI checks no pair: the box falls through


def test_a_yaml_project_lists_its_pairs_or_lets_every_two_models_collide(tmp_path: Path, box_files) -> None:
    anchor, box = box_files
    models = [ModelConfig("a", str(anchor)), ModelConfig("b", str(box)), ModelConfig("c", str(box))]
    assert {(p.a, p.b) for p in Project("p", models=models).collision_pairs()} == {("a", "b"), ("a", "c"), ("b", "c")}
    listed = Project("p", models=models, collisions=[CollisionPair("a", "b")], only_listed_pairs=True)
    assert [(p.a, p.b) for p in listed.collision_pairs()] == [("a", "b")]
    path = tmp_path / "none.yaml"
    path.write_text(f"models:\n  - {{name: a, file: {anchor}}}\n  - {{name: b, file: {box}}}\ncollisions: []\n")
    assert load_project(path).collision_pairs() == []


def test_properties_of_joints_the_model_lacks_are_notes_printed_by_launch(tmp_path: Path, box_files) -> None:
    _, box = box_files
    leftovers = '<property name="J0.angle" value="-0.785398"/>\n<property name="J0.mode" value="Torque"/>\n'
    rts = (
        f'<item class="{ITEM}GrxRTSItem" name="rts">\n'
        '<property name="connection" value="Robot.angle:Controller.angle"/></item>\n'
    )
    project = _project(tmp_path, _model("box", box, 0.5, robot=True, extra=leftovers), rts)
    loaded = load_project(project)
    assert loaded.models[0].joints == {} and loaded.models[0].drive == "torque"
    not_carried = [note for note in loaded.notes if "grx.xml:" in note]
    assert len(not_carried) == 3  # J0.angle, J0.mode, the RT system
    assert sum("no joint 'J0'" in note for note in not_carried) == 2
    printed = launch_summary(project, tmp_path).stderr
    lines = [line for line in printed.splitlines() if line.startswith("launch: note: ")]
    assert lines == [f"launch: note: {note}" for note in loaded.notes]


TWO_BOXES = """<robot name="tower">
  <link name="upper"><inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/>
    </inertial><collision><geometry><box size="0.2 0.2 0.2"/></geometry></collision></link>
  <link name="lower"><inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/>
    </inertial><collision><geometry><box size="0.2 0.2 0.2"/></geometry></collision></link>
  <joint name="stack" type="fixed"><parent link="upper"/><child link="lower"/><origin xyz="0 0 -0.3"/></joint>
</robot>
"""


@pytest.mark.parametrize(("links", "rest"), [("[]", 0.4), ("[upper]", 0.1)])
def test_a_pair_naming_a_link_collides_that_link_only(tmp_path: Path, links: str, rest: float) -> None:
    (tmp_path / "tower.urdf").write_text(TWO_BOXES)
    (tmp_path / "floor.urdf").write_text(FLOOR_URDF)
    project = tmp_path / "tower.yaml"
    project.write_text(
        "world: {timestep: 0.001, end_time: 1.5}\n"
        "models:\n  - {name: floor, file: floor.urdf, static: true}\n"
        "  - {name: tower, file: tower.urdf, position: [0, 0, 1.0]}\n"
        f"collisions:\n  - {{a: floor, b: tower, links_b: {links}}}\n"
    )
    summary = launch_summary(project, tmp_path).summary
    assert summary["robots"]["tower"]["root_end"][2] == pytest.approx(rest, abs=5e-3)


def test_link_pairs_of_a_grxui_project_are_kept(models_dir: Path) -> None:
    project = load_project(models_dir / "openhrp3/project/SampleRobot_inHouse.xml")
    (pair,) = [p for p in project.collisions if {p.a, p.b} == {"box", "Robot"}]
    links = {pair.a: pair.links_a, pair.b: pair.links_b}
    assert links == {"box": ["WAIST"], "Robot": ["RARM_WRIST_R", "RARM_WRIST_P"]}
