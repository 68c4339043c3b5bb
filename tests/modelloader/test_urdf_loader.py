"""The URDF reader against SR1.urdf (Choreonoid) and small files exercising each URDF feature."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import trimesh
from urdf_helpers import SR1, facts, inertial, robot, write

from hrpsim.modelloader.urdf import load_urdf

SR1_FACTS = facts("choreonoid/model/SR1/SR1.urdf")


@pytest.fixture(scope="module")
def sr1():
    return load_urdf(SR1)


def test_sr1_matches_the_corpus_facts(sr1):
    assert sr1.name == SR1_FACTS["model_name"]
    assert [lk.name for lk in sr1.links] == SR1_FACTS["link_names_preorder"]
    assert sr1.joint_names == SR1_FACTS["joint_names_in_order"]
    assert sr1.dof == SR1_FACTS["dof"]
    assert sr1.total_mass == pytest.approx(SR1_FACTS["total_mass"], rel=1e-12)
    assert sr1.root.name == SR1_FACTS["root_link"]
    assert sr1.root.joint_type == "free"
    assert sr1.sensors == []
    assert sr1.format == "urdf"
    assert sr1.metadata["files"] == [str(SR1)]


def test_sr1_joints_carry_axis_limits_and_parent(sr1):
    by_name = {lk.joint_label: lk for lk in sr1.links}
    for joint in SR1_FACTS["joints"]:
        link = by_name[joint["name"]]
        assert link.joint_type == "rotate"
        assert np.allclose(link.joint_axis, joint["axis"])
        assert sr1.links[link.parent].name == joint["parent"]
        assert link.mass == pytest.approx(joint["child_mass"])
        assert link.q_lower == pytest.approx(joint["limit"]["lower"])
        assert link.q_upper == pytest.approx(joint["limit"]["upper"])
        assert link.torque_upper == pytest.approx(joint["limit"]["effort"])
        if joint["limit"]["velocity"] > 0:
            assert link.dq_upper == pytest.approx(joint["limit"]["velocity"])
        else:  # RARM_ELBOW says velocity="0.0": no limit given, not a frozen joint
            assert link.dq_upper == math.inf


def test_sr1_joint_declared_before_its_parent_link(sr1):
    shoulder = sr1.links[sr1.link_index("RARM_SHOULDER_P")]
    assert sr1.links[shoulder.parent].name == "CHEST"


def test_sr1_material_used_before_its_definition_gets_its_colour(sr1):
    link = sr1.links[sr1.link_index("RARM_SHOULDER_R")]
    assert np.allclose(link.visuals[0].appearance.diffuse, [0.6, 0.8, 0.6])
    assert "warnings" not in sr1.metadata


def test_cylinders_are_turned_onto_the_y_axis(tmp_path: Path):
    text = robot(
        '<link name="a"><collision><origin xyz="1 2 3" rpy="0 1.5707963267948966 0"/>'
        '<geometry><cylinder radius="0.1" length="0.4"/></geometry></collision></link>'
    )
    cylinder = load_urdf(write(tmp_path, "c.urdf", text)).links[0].shapes[0]
    assert (cylinder.kind, cylinder.radius, cylinder.height) == ("cylinder", 0.1, 0.4)
    # URDF's axis is Z of the origin frame, pitched onto +X here; BodyInfo's is the shape's Y
    assert np.allclose(cylinder.rotation @ [0.0, 1.0, 0.0], [1.0, 0.0, 0.0])
    assert np.allclose(cylinder.translation, [1, 2, 3])


def test_inertial_origin_rotation_is_taken_into_the_link_frame(tmp_path: Path):
    text = robot(
        '<link name="a"><inertial><origin xyz="0.1 0.2 0.3" rpy="0 0 1.5707963267948966"/>'
        '<mass value="2"/><inertia ixx="1" ixy="0" ixz="0" iyy="2" iyz="0" izz="3"/></inertial></link>'
    )
    body = load_urdf(write(tmp_path, "a.urdf", text))
    link = body.links[0]
    assert np.allclose(link.com, [0.1, 0.2, 0.3])
    assert np.allclose(link.inertia, np.diag([2.0, 1.0, 3.0]))


def test_joint_types_mimic_default_axis_and_controller_order(tmp_path: Path):
    links = "".join(f'<link name="{n}">{inertial()}</link>' for n in "abcdef")
    joints = """
      <joint name="jc" type="continuous"><parent link="a"/><child link="c"/></joint>
      <joint name="jb" type="prismatic"><parent link="a"/><child link="b"/><axis xyz="0 0 2"/>
        <limit lower="-0.1" upper="0.2" velocity="1" effort="10"/></joint>
      <joint name="jd" type="revolute"><parent link="c"/><child link="d"/>
        <limit lower="-1" upper="1" velocity="2" effort="3"/><mimic joint="jc" multiplier="2" offset="0.5"/></joint>
      <joint name="je" type="fixed"><parent link="d"/><child link="e"/><origin xyz="1 2 3" rpy="0 0 0"/></joint>
      <joint name="jf" type="floating"><parent link="a"/><child link="f"/></joint>
    """
    body = load_urdf(write(tmp_path, "t.urdf", robot(links + joints)))
    kinds = {lk.joint_label: lk.joint_type for lk in body.links[1:]}
    assert kinds == {"jc": "rotate", "jb": "slide", "jd": "rotate", "je": "fixed", "jf": "free"}
    assert body.joint_names == ["jc", "jb"]
    assert body.dof == 2
    jc = body.links[body.link_index("c")]
    assert np.allclose(jc.joint_axis, [1, 0, 0]) and jc.q_upper == math.inf
    jb = body.links[body.link_index("b")]
    assert np.allclose(jb.joint_axis, [0, 0, 1]) and (jb.q_lower, jb.q_upper) == (-0.1, 0.2)
    jd = body.links[body.link_index("d")]
    assert jd.joint_id == -1 and jd.mimic is not None
    assert (jd.mimic.joint, jd.mimic.multiplier, jd.mimic.offset) == ("jc", 2.0, 0.5)
    assert np.allclose(body.links[body.link_index("e")].translation, [1, 2, 3])
    # pre-order, children in joint file order
    assert [lk.name for lk in body.links] == ["a", "c", "d", "e", "b", "f"]


def test_a_root_fixed_to_world_is_a_fixed_root(tmp_path: Path):
    text = robot(
        f'<link name="world"/><link name="base">{inertial()}</link>'
        '<joint name="anchor" type="fixed"><parent link="world"/><child link="base"/>'
        '<origin xyz="0 0 0.5"/></joint>'
    )
    body = load_urdf(write(tmp_path, "w.urdf", text))
    assert [lk.name for lk in body.links] == ["base"]
    assert body.root.joint_type == "fixed"
    assert np.allclose(body.root.translation, [0, 0, 0.5])


def test_package_and_relative_meshes_are_found_and_scaled(tmp_path: Path, monkeypatch):
    package = tmp_path / "my_robot"
    (package / "meshes").mkdir(parents=True)
    trimesh.creation.box(extents=(1, 1, 1)).export(package / "meshes" / "cube.stl")
    text = robot(
        '<link name="a"><visual><geometry><mesh filename="package://my_robot/meshes/cube.stl" scale="2 1 1"/>'
        '</geometry></visual><collision><geometry><mesh filename="../meshes/cube.stl"/></geometry></collision></link>'
    )
    monkeypatch.delenv("ROS_PACKAGE_PATH", raising=False)
    path = write(package / "urdf", "a.urdf", text)
    body = load_urdf(path)
    visual, collision = body.links[0].visuals[0], body.links[0].shapes[0]
    assert visual.kind == "mesh" and len(visual.triangles) == 12
    assert np.allclose(visual.vertices.max(axis=0), [1.0, 0.5, 0.5])
    assert np.allclose(collision.vertices.max(axis=0), [0.5, 0.5, 0.5])
    assert str((package / "meshes" / "cube.stl").resolve()) in body.metadata["files"]


def test_a_mesh_named_by_visual_and_collision_is_read_once(tmp_path: Path, monkeypatch):
    """As in PyBullet's random objects: both elements name one file at one scale. A second link
    naming it at another scale needs its own read."""
    from hrpsim.modelloader import urdf_geometry

    trimesh.creation.box(extents=(1, 1, 1)).export(tmp_path / "cube.obj")
    reads: list[tuple[float, ...]] = []
    real_load_mesh = urdf_geometry.load_mesh

    def counting_load_mesh(path: Path, scale=None):
        reads.append(tuple(float(s) for s in scale))
        return real_load_mesh(path, scale)

    monkeypatch.setattr(urdf_geometry, "load_mesh", counting_load_mesh)
    geometry = '<geometry><mesh filename="cube.obj" scale="{0}"/></geometry>'
    link_xml = "<link name='{0}'><visual>{1}</visual><collision>{1}</collision></link>"
    text = robot(
        link_xml.format("a", geometry.format("2 1 1"))
        + link_xml.format("b", geometry.format("1 1 3"))
        + '<joint name="j" type="fixed"><parent link="a"/><child link="b"/></joint>'
    )
    body = load_urdf(write(tmp_path, "object.urdf", text))
    assert sorted(reads) == [(1.0, 1.0, 3.0), (2.0, 1.0, 1.0)]
    a, b = body.links
    for link, half_size in ((a, [1.0, 0.5, 0.5]), (b, [0.5, 0.5, 1.5])):
        for shape in (link.visuals[0], link.shapes[0]):
            assert shape.kind == "mesh" and len(shape.triangles) == 12
            assert np.allclose(shape.vertices.max(axis=0), half_size)
    assert body.metadata["files"].count(str((tmp_path / "cube.obj").resolve())) == 1


def test_ros_package_path_is_searched_first(tmp_path: Path, monkeypatch):
    elsewhere = tmp_path / "ws" / "pkgs" / "parts"
    elsewhere.mkdir(parents=True)
    trimesh.creation.box(extents=(3, 3, 3)).export(elsewhere / "big.stl")
    monkeypatch.setenv("ROS_PACKAGE_PATH", str(tmp_path / "ws" / "pkgs"))
    text = robot(
        '<link name="a"><collision><geometry><mesh filename="package://parts/big.stl"/></geometry></collision></link>'
    )
    body = load_urdf(write(tmp_path / "elsewhere", "a.urdf", text))
    assert np.allclose(body.links[0].shapes[0].vertices.max(axis=0), [1.5, 1.5, 1.5])


def test_forgiving_where_real_files_differ_from_the_spec(tmp_path: Path):
    """Real files write version="0.0" declarations, lower > upper for "no limit", capsules and
    planes: read them, with a warning where the meaning is a guess."""
    text = '<?xml version="0.0" ?>\n' + robot(
        '<link name="a"><collision><geometry><plane normal="1 0 0"/></geometry></collision></link>'
        '<link name="b"><collision><geometry><capsule radius="0.1" length="0.5"/></geometry></collision></link>'
        '<joint name="j" type="revolute"><parent link="a"/><child link="b"/>\n'
        '<limit lower="1" upper="-1" effort="1" velocity="1"/></joint>'
    )
    body = load_urdf(write(tmp_path, "f.urdf", text))
    plane, capsule = body.links[0].shapes[0], body.links[1].shapes[0]
    assert plane.kind == "plane" and np.allclose(plane.rotation @ [0, 0, 1], [1, 0, 0])
    assert (capsule.kind, capsule.radius, capsule.height) == ("capsule", 0.1, 0.5)
    assert np.allclose(capsule.rotation @ [0, 1, 0], [0, 0, 1])
    joint = body.links[1]
    assert (joint.q_lower, joint.q_upper) == (-math.inf, math.inf)
    (warning,) = body.metadata["warnings"]
    assert ":4: " in warning and "taken as unlimited" in warning


def test_collada_mesh_files_are_read_with_their_scene_transforms(tmp_path: Path):
    from test_collada_extensions import DOC

    (tmp_path / "part.dae").write_text(DOC)
    mesh = '<mesh filename="part.dae" scale="2 2 2"/>'
    text = robot(f'<link name="a"><collision><geometry>{mesh}</geometry></collision></link>')
    shape = load_urdf(write(tmp_path, "m.urdf", text)).links[0].shapes[0]
    assert shape.kind == "mesh" and len(shape.triangles) == 3
    # the scene places the part at (0.5, 0, 1); the URDF scale doubles that
    assert np.allclose(shape.vertices.min(axis=0), [1.0, 0.0, 2.0])


def test_a_mimic_of_a_mimic_is_resolved_to_the_independent_joint(tmp_path: Path):
    links = "".join(f'<link name="{n}"/>' for n in "abcd")
    joints = """
      <joint name="ja" type="continuous"><parent link="a"/><child link="b"/></joint>
      <joint name="jb" type="continuous"><parent link="b"/><child link="c"/>
        <mimic joint="ja" multiplier="2" offset="1"/></joint>
      <joint name="jc" type="continuous"><parent link="c"/><child link="d"/>
        <mimic joint="jb" multiplier="3" offset="0.5"/></joint>
    """
    body = load_urdf(write(tmp_path, "m.urdf", robot(links + joints)))
    mimic = body.links[body.link_index("d")].mimic
    assert (mimic.joint, mimic.multiplier, mimic.offset) == ("ja", 6.0, 3.5)  # 3 (2 q + 1) + 0.5
    assert body.dof == 1
