"""The COLLADA reader against OpenRAVE's pumaarm.zae and barrett-wam-sensors.zae, and small
documents exercising units, indirection and the OpenRAVE extensions."""

from __future__ import annotations

import math
import zipfile
from pathlib import Path

import numpy as np
import pytest
from urdf_helpers import PUMA, WAM, facts

from hrpsim.modelloader.collada import load_collada

PUMA_FACTS = facts("openrave/robots/pumaarm.zae")
WAM_FACTS = facts("openrave/robots/barrett-wam-sensors.zae")
SENSOR_TYPES = {"BaseLaser2D": "range", "BaseCamera": "vision"}


@pytest.fixture(scope="module")
def puma():
    return load_collada(PUMA)


@pytest.fixture(scope="module")
def wam():
    return load_collada(WAM)


@pytest.mark.parametrize("which", ["puma", "wam"])
def test_matches_the_corpus_facts(which, request):
    body, expected = request.getfixturevalue(which), {"puma": PUMA_FACTS, "wam": WAM_FACTS}[which]
    assert body.name == expected["model_name"]
    assert [lk.name for lk in body.links] == expected["link_names"]
    assert body.joint_names == expected["joint_names_in_order"]
    assert body.dof == expected["dof"]
    assert body.total_mass == pytest.approx(expected["total_mass"], rel=1e-9)
    assert body.root.name == expected["root_link"]
    assert body.format == "collada"
    assert body.metadata["files"] == [str(PUMA if which == "puma" else WAM)]
    got = [(s.name, s.type, body.links[s.link].name) for s in body.sensors]
    assert got == [(s["name"], SENSOR_TYPES[s["type"]], s["parent_link"]) for s in expected["sensors"]]
    assert [(m.name, m.base, m.effector, m.gripper_joints) for m in body.manipulators] == [
        (m["name"], m["base_link"], m["tip_link"], m["gripper_joints"]) for m in expected["manipulators"]
    ]
    assert len(body.actuators) == expected["num_actuators"]


@pytest.mark.parametrize("which", ["puma", "wam"])
def test_joint_limits_and_speeds_become_radians(which, request):
    body, expected = request.getfixturevalue(which), {"puma": PUMA_FACTS, "wam": WAM_FACTS}[which]
    by_name = {lk.joint_label: lk for lk in body.links}
    for joint in expected["joints"]:
        link = by_name[joint["name"]]
        assert link.joint_type == "rotate"
        assert body.links[link.parent].name == joint["parent_link"]
        assert link.q_lower == pytest.approx(math.radians(joint["min"]))
        assert link.q_upper == pytest.approx(math.radians(joint["max"]))
        assert link.dq_upper == pytest.approx(math.radians(joint["max_speed"]))
        assert link.joint_id == joint["openrave_index"]
        assert np.linalg.norm(link.joint_axis) == pytest.approx(1.0)


def test_wam_mimic_formulas_keep_radian_constants(wam):
    mimics = {lk.joint_label: lk.mimic for lk in wam.links if lk.mimic is not None}
    assert sorted(mimics) == sorted(WAM_FACTS["mimic_joints"])
    jf3, jf4 = mimics["JF3mimic"], mimics["JF4mimic"]
    assert (jf3.joint, jf3.multiplier, jf3.offset) == ("JF3", 0.333333, 0.8727)
    assert (jf4.joint, jf4.multiplier, jf4.offset) == ("JF4", 1.0, 0.0)
    # JF3 at its upper limit drives JF3mimic to just inside the mimic joint's own 97 degree limit
    jf3 = wam.links[wam.link_index("Finger2-1")]
    jf3_mimic = wam.links[wam.link_index("Finger2-2")]
    driven = mimics["JF3mimic"].multiplier * jf3.q_upper + mimics["JF3mimic"].offset
    assert driven == pytest.approx(math.radians(96.7), abs=1e-3)
    assert driven <= jf3_mimic.q_upper


def test_wam_sensors_manipulator_and_exclusions(wam):
    laser, camera = wam.sensors
    assert (laser.type, laser.id) == ("range", 0) and (camera.type, camera.id) == ("vision", 0)
    assert np.allclose(laser.translation, [0.2, 0.0, -0.1])
    assert (camera.params["width"], camera.params["height"]) == (640, 480)
    assert camera.params["frameRate"] == pytest.approx(5.0, rel=1e-6)
    # rotate 0 1 0 90 (degrees) about Y
    assert np.allclose(camera.rotation @ [1.0, 0.0, 0.0], [0.0, 0.0, -1.0], atol=1e-9)
    arm = wam.manipulators[0]
    assert arm.closing_directions == [1.0, 1.0, 1.0, 0.0]
    assert np.allclose(arm.tip_translation, [0, 0, 0.22])
    assert ("wam1", "wam3") in wam.collision_exclusions and len(wam.collision_exclusions) == 13
    assert wam.metadata["interface_type"] == "GenericRobot"


def test_puma_mass_frames_are_taken_from_the_scene_frame_into_link_frames(puma):
    # Puma1's mass frame is (0, 0.05, 1.371) in the scene; Puma1's joint sits at z = 1.371
    puma1 = puma.links[puma.link_index("Puma1")]
    assert np.allclose(puma1.translation, [0, 0, 1.371])
    assert np.allclose(puma1.com, [0.0, 0.05, 0.0])
    assert np.allclose(np.diag(puma1.inertia), [0.1, 0.1, 0.35])
    world_com = _world_com(puma, puma.link_index("Puma2"))
    assert np.allclose(world_com, [0.068, 0.2275, 1.377])


def test_puma_geometry_is_placed_on_its_links(puma):
    base = puma.links[0]
    assert len(base.shapes) == 3 and all(s.kind == "mesh" for s in base.shapes)
    assert sum(len(s.triangles) for lk in puma.links for s in lk.shapes) == 1861


def _world_com(body, index):
    rotation, translation = np.eye(3), np.zeros(3)
    chain = []
    while index >= 0:
        chain.append(index)
        index = body.links[index].parent
    for i in reversed(chain):
        link = body.links[i]
        translation = translation + rotation @ link.translation
        rotation = rotation @ link.rotation
    return translation + rotation @ body.links[chain[0]].com


MINIMAL = """<?xml version="1.0"?>
<COLLADA xmlns="http://www.collada.org/2008/03/COLLADASchema" version="1.5.0">
 <asset><unit meter="0.001"/><up_axis>Z_UP</up_axis></asset>
 <library_kinematics_models><kinematics_model id="k" name="slider">
  <technique_common>
   <joint name="s" sid="s"><prismatic sid="axis0"><axis>0 0 1</axis><limits><min>-100</min><max>200</max></limits>
   </prismatic></joint>
   <link sid="a" name="a"><attachment_full joint="k/s"><translate>0 0 500</translate><link sid="b" name="b"/>
   </attachment_full></link>
  </technique_common>
 </kinematics_model></library_kinematics_models>
 <library_physics_models><physics_model id="p">
  <rigid_body sid="r0" name="a"><technique_common><dynamic>false</dynamic><mass>2</mass></technique_common></rigid_body>
  <rigid_body sid="r1" name="b"><technique_common><mass>3</mass><inertia>1 2 3</inertia></technique_common></rigid_body>
 </physics_model></library_physics_models>
</COLLADA>
"""


def test_units_prismatic_joints_static_root_and_plain_dae(tmp_path: Path):
    path = tmp_path / "slider.dae"
    path.write_text(MINIMAL)
    body = load_collada(path)
    assert body.root.joint_type == "fixed"  # <dynamic>false</dynamic>
    slider = body.links[1]
    assert slider.joint_type == "slide" and slider.joint_id == 0
    assert (slider.q_lower, slider.q_upper) == pytest.approx((-0.1, 0.2))
    assert np.allclose(slider.translation, [0, 0, 0.5])
    assert body.total_mass == 5.0


def test_zae_without_manifest_uses_its_only_dae(tmp_path: Path):
    path = tmp_path / "slider.zae"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("slider.dae", MINIMAL)
    assert load_collada(path).name == "slider"


def _world_frames(body):
    frames = []
    for link in body.links:
        local = np.eye(4)
        local[:3, :3], local[:3, 3] = link.rotation, link.translation
        frames.append(local if link.parent < 0 else frames[link.parent] @ local)
    return frames


@pytest.mark.parametrize("path", [PUMA, WAM], ids=["puma", "wam"])
def test_link_geometry_at_zero_pose_matches_the_visual_scene(path: Path, tmp_path: Path):
    """Kinematics (links and joints) and the visual scene agree: every mesh placed through the
    link frames lands where the document's scene puts it."""
    from hrpsim.modelloader.collada_geometry import read_dae_mesh

    body = load_collada(path)
    placed = []
    for link, frame in zip(body.links, _world_frames(body), strict=True):
        for shape in link.shapes:
            pose = frame[:3, :3] @ shape.rotation
            placed.append(shape.vertices @ pose.T + frame[:3, :3] @ shape.translation + frame[:3, 3])
    dae = tmp_path / (path.stem + ".dae")
    with zipfile.ZipFile(path) as archive:
        dae.write_bytes(archive.read(dae.name))
    scene_vertices, _triangles = read_dae_mesh(dae)
    assert np.allclose(np.concatenate(placed), scene_vertices, atol=1e-9)


def test_a_scene_without_kinematics_is_one_static_link(tmp_path: Path):
    from test_collada_extensions import DOC

    start, end = DOC.index("<library_kinematics_models>"), DOC.index("<library_physics_models>")
    path = tmp_path / "scene.dae"
    path.write_text(DOC[:start] + DOC[end:])
    body = load_collada(path)
    assert body.static and [lk.name for lk in body.links] == ["vs"] and body.root.joint_type == "fixed"
    (shape,) = body.links[0].shapes
    assert len(shape.triangles) == 3 and np.allclose(shape.translation, [0.5, 0, 1])
