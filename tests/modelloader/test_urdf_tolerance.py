"""URDF files that ROS, PyBullet and Gazebo load are loaded too, with one warning per deviation
naming the file, the line and what was assumed; what no tool could use stays an error."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from urdf_helpers import inertial, robot, write

from hrpsim.errors import ModelError
from hrpsim.modelloader.urdf import load_urdf

TWO_LINKS = '<link name="base">{base}</link>\n<link name="arm">' + inertial() + "</link>\n"


def _revolute(limit: str = '<limit lower="-1" upper="1" effort="5" velocity="2"/>', extra: str = "") -> str:
    return f'<joint name="j" type="revolute"><parent link="base"/><child link="arm"/>\n{limit}{extra}</joint>\n'


def _line_of(text: str, needle: str) -> int:
    return text[: text.index(needle)].count("\n") + 1


def _load(tmp_path: Path, text: str) -> tuple[Path, list[str], object]:
    path = write(tmp_path, "odd.urdf", text)
    body = load_urdf(path)
    return path, body.metadata.get("warnings", []), body


def _only_warning(tmp_path: Path, text: str, needle: str) -> tuple[str, object]:
    path, warnings, body = _load(tmp_path, text)
    (warning,) = warnings
    assert warning.startswith(f"{path}:{_line_of(text, needle)}: "), warning
    return warning, body


def test_a_massless_link_loads_with_a_warning(tmp_path: Path):
    text = robot(
        TWO_LINKS.format(
            base='\n<inertial><mass value="0"/><inertia ixx="0" ixy="0" ixz="0" iyy="0" iyz="0" izz="0"/></inertial>'
        )
        + _revolute()
    )
    warning, body = _only_warning(tmp_path, text, '<mass value="0"')
    assert "mass 0: a massless link" in warning
    assert body.links[0].mass == 0.0 and body.links[1].mass == 1.0


def test_xacro_optenv_leftovers_take_their_default(tmp_path: Path, monkeypatch):
    monkeypatch.delenv("IMU_XYZ", raising=False)
    joint = (
        '<joint name="imu" type="fixed"><parent link="base"/><child link="arm"/>\n'
        '<origin xyz="$(optenv IMU_XYZ 0.19 0 0.149)"/></joint>'
    )
    warning, body = _only_warning(tmp_path, robot(TWO_LINKS.format(base="") + joint), "<origin")
    assert "left over from xacro; read as '0.19 0 0.149'" in warning
    assert body.links[1].translation.tolist() == [0.19, 0.0, 0.149]
    monkeypatch.setenv("IMU_XYZ", "1 2 3")
    assert load_urdf(tmp_path / "odd.urdf").links[1].translation.tolist() == [1.0, 2.0, 3.0]


def test_xacro_expressions_still_need_xacro(tmp_path: Path):
    joint = '<joint name="j" type="fixed"><parent link="base"/><child link="arm"/><origin xyz="${offset} 0 0"/></joint>'
    with pytest.raises(ModelError, match=r"odd\.urdf:\d+: .*xacro expression: run xacro"):
        load_urdf(write(tmp_path, "odd.urdf", robot(TWO_LINKS.format(base="") + joint)))


def test_a_material_inside_geometry_is_ignored_with_a_warning(tmp_path: Path):
    visual = '<visual><geometry><box size="1 2 3"/>\n<material name="grey"/></geometry></visual>'
    warning, body = _only_warning(tmp_path, robot(TWO_LINKS.format(base=visual) + _revolute()), "<material")
    assert "unknown element <material> inside <geometry> ignored" in warning
    assert body.links[0].visuals[0].size.tolist() == [1.0, 2.0, 3.0]


def test_a_reduction_that_is_not_a_number_is_ignored_with_a_warning(tmp_path: Path):
    transmission = (
        '<transmission name="t"><type>SimpleTransmission</type><joint name="j"/>\n'
        '<actuator name="m"><mechanicalReduction>reduction</mechanicalReduction></actuator>'
        "</transmission>"
    )
    text = robot(TWO_LINKS.format(base="") + _revolute() + transmission)
    warning, body = _only_warning(tmp_path, text, "<actuator")
    assert "mechanicalReduction 'reduction' is not a number; ignored" in warning
    assert body.links[1].gear_ratio == 1.0


def test_a_limit_with_a_trailing_dot_reads_its_number(tmp_path: Path):
    text = robot(TWO_LINKS.format(base="") + _revolute('<limit lower="-1.57." upper="1.57" effort="5" velocity="2"/>'))
    warning, body = _only_warning(tmp_path, text, "<limit")
    assert "lower '-1.57.' read as -1.57" in warning
    assert body.links[1].q_lower == -1.57 and body.links[1].q_upper == 1.57


def test_surplus_numbers_are_dropped_with_a_warning(tmp_path: Path):
    joint = '<joint name="j" type="fixed"><parent link="base"/><child link="arm"/><origin rpy="0 0 0 0"/></joint>'
    warning, _ = _only_warning(tmp_path, robot(TWO_LINKS.format(base="") + joint), "<origin")
    assert "rpy '0 0 0 0' has 4 numbers; the first 3 used" in warning


def test_unknown_elements_and_attributes_are_ignored_one_warning_each(tmp_path: Path):
    base = '<self_collision_checking/>\n<inertial colour="red"><mass value="2"/>' + inertial()[10:]
    path, warnings, body = _load(tmp_path, robot(TWO_LINKS.format(base=base) + _revolute()))
    assert len(warnings) == 2
    assert any("unknown element <self_collision_checking> ignored" in w for w in warnings)
    assert any("unknown attribute 'colour' of <inertial> ignored" in w for w in warnings)
    assert all(w.startswith(f"{path}:") for w in warnings)
    assert body.links[0].mass == 2.0


def test_an_undeclared_namespace_prefix_is_read_as_written(tmp_path: Path):
    text = robot(TWO_LINKS.format(base="") + _revolute() + '<xacro:property name="x" value="1"/>')
    _path, warnings, body = _load(tmp_path, text)
    assert any("Namespace prefix xacro" in w for w in warnings)
    assert any("unknown element <xacro:property> ignored" in w for w in warnings)
    assert len(body.links) == 2


def test_a_mimic_of_a_joint_the_file_lacks_is_an_independent_joint(tmp_path: Path):
    text = robot(TWO_LINKS.format(base="") + _revolute(extra='<mimic joint="elsewhere"/>'))
    warning, body = _only_warning(tmp_path, text, "<mimic")
    assert "mimic names 'elsewhere'" in warning
    assert body.links[1].mimic is None and body.joint_names == ["j"]


def test_an_unreadable_visual_mesh_is_left_out_a_collision_mesh_is_an_error(tmp_path: Path):
    visual = '<visual><geometry><mesh filename="file:///nowhere/part.stl"/></geometry></visual>'
    warning, body = _only_warning(tmp_path, robot(TWO_LINKS.format(base=visual) + _revolute()), "<mesh")
    assert "not found" in warning and "left out" in warning and body.links[0].visuals == []
    collision = visual.replace("visual", "collision")
    with pytest.raises(ModelError, match=r"part\.stl' not found"):
        load_urdf(write(tmp_path, "odd.urdf", robot(TWO_LINKS.format(base=collision) + _revolute())))


def test_gazebo_and_transmission_blocks_give_what_the_simulation_uses(tmp_path: Path):
    blocks = (
        '<gazebo><static>true</static><plugin name="x"><anything/></plugin></gazebo>\n'
        '<gazebo reference="arm"><mu1>0.2</mu1></gazebo>\n'
        '<transmission name="t"><type>transmission_interface/SimpleTransmission</type>'
        '<joint name="j"><hardwareInterface>EffortJointInterface</hardwareInterface></joint>'
        '<actuator name="m"><mechanicalReduction>50</mechanicalReduction></actuator></transmission>'
    )
    _path, warnings, body = _load(tmp_path, robot(TWO_LINKS.format(base="") + _revolute() + blocks))
    assert warnings == []
    assert body.static and body.links[1].gear_ratio == 50.0


def test_drake_rotor_inertia_and_gear_ratio_are_read(tmp_path: Path):
    transmission = (
        '<transmission name="t"><joint name="j"/><actuator name="m">'
        '<drake:rotor_inertia value="0.002"/><drake:gear_ratio value="120"/></actuator></transmission>'
    )
    text = robot(TWO_LINKS.format(base="") + _revolute() + transmission).replace(
        "<robot ", '<robot xmlns:drake="http://drake.mit.edu" '
    )
    _path, warnings, body = _load(tmp_path, text)
    assert warnings == []
    arm = body.links[1]
    assert (arm.rotor_inertia, arm.gear_ratio) == (0.002, 120.0)
    assert np.isclose(arm.reflected_inertia, 0.002 * 120.0**2)


def test_an_inertia_that_is_not_positive_semi_definite_is_its_nearest_one(tmp_path: Path):
    """A warning, not an error: PyBullet and ROS load such files (tiago's and romeo's among them)."""
    text = robot(
        '<link name="a">\n<inertial><mass value="1"/>\n'
        '<inertia ixx="0.1" ixy="0" ixz="0" iyy="-0.2" iyz="0" izz="0.1"/></inertial>\n</link>'
    )
    path = write(tmp_path, "odd.urdf", text)
    body = load_urdf(path)
    (warning,) = body.metadata["warnings"]
    where = f"{path}:{_line_of(text, '<inertia ')}: /robot(name='r')/link(name='a')/inertial/inertia"
    assert warning.startswith(f"{where}: inertia is not positive semi-definite (eigenvalues -0.2, 0.1, 0.1)")
    assert np.allclose(body.links[0].inertia, np.diag([0.1, 0.0, 0.1]))
