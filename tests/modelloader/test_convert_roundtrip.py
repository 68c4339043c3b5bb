"""Write-then-reload: every corpus model that loads converts to URDF and reads back with the same
links, joints, dof, masses, inertias and limits; and the ``hrpsim model convert`` command."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from lxml import etree
from urdf_helpers import MODELS, SR1, WAM, corpus_models

from hrpsim.modelloader import load_body
from hrpsim.modelloader.urdf import load_urdf
from hrpsim.modelloader.urdf_export import write_urdf

MODEL_PATHS = corpus_models()


def _movable(body):
    return [lk.joint_label for lk in body.joints if lk.joint_type in ("rotate", "slide")]


def _movable_after_urdf(body):
    """URDF gives every movable joint a controller index: those the original left without a
    jointId (a Choreonoid body may) come after the numbered ones."""
    unnumbered = [
        lk.joint_label
        for lk in body.links
        if lk.joint_type in ("rotate", "slide") and lk.joint_id < 0 and lk.mimic is None
    ]
    return _movable(body) + unnumbered


def _expected_type(link):
    return "fixed" if link.joint_type == "crawler" else link.joint_type  # URDF has no crawler joint


@pytest.mark.parametrize("path", MODEL_PATHS, ids=[str(p.relative_to(MODELS)) for p in MODEL_PATHS])
def test_every_corpus_model_survives_a_urdf_round_trip(path: Path, tmp_path: Path):
    original = load_body(path)
    written = write_urdf(original, tmp_path / "out.urdf")
    again = load_urdf(written)
    assert again.name == original.name
    assert sorted(lk.name for lk in again.links) == sorted(lk.name for lk in original.links)
    assert again.root.name == original.root.name
    assert again.root.joint_type == original.root.joint_type
    assert sorted(_movable(again)) == sorted(_movable_after_urdf(original))
    if _movable(original) == _movable_after_urdf(original):
        assert _movable(again) == _movable(original)
    assert again.dof == original.dof
    assert again.total_mass == pytest.approx(original.total_mass, rel=1e-9)
    for link in original.links:
        back = again.links[again.link_index(link.name)]
        _same_link(original, link, again, back)


def _same_link(original, link, again, back):
    name = link.name
    parent = original.links[link.parent].name if link.parent >= 0 else None
    assert (again.links[back.parent].name if back.parent >= 0 else None) == parent, name
    assert back.joint_type == _expected_type(link), name
    assert np.allclose(back.translation, link.translation, atol=1e-12), name
    assert np.allclose(back.rotation, link.rotation, atol=1e-12), name
    assert back.mass == pytest.approx(link.mass, rel=1e-9), name
    if link.mass > 0:
        assert np.allclose(back.com, link.com, atol=1e-12), name
        assert np.allclose(back.inertia, link.inertia, rtol=1e-9, atol=1e-15), name
    if link.joint_type in ("rotate", "slide"):
        assert back.gear_ratio == link.gear_ratio, name
        assert np.allclose(back.joint_axis, link.joint_axis / np.linalg.norm(link.joint_axis)), name
        assert (back.q_lower, back.q_upper) == (link.q_lower, link.q_upper), name
        for low, high, back_low, back_high in (
            (link.dq_lower, link.dq_upper, back.dq_lower, back.dq_upper),
            (link.torque_lower, link.torque_upper, back.torque_lower, back.torque_upper),
        ):
            bound = min(abs(low), abs(high))  # URDF keeps one symmetric bound
            assert back_high == (math.inf if bound in (0.0, math.inf) else bound), name
            assert back_low == -back_high, name
        if link.mimic is not None:
            assert back.mimic == link.mimic, name
    assert len(back.shapes) == len([s for s in link.shapes if s.kind != "plane"]), name


def test_meshes_are_written_beside_the_urdf_and_read_back(tmp_path: Path):
    original = load_body(WAM)
    written = write_urdf(original, tmp_path / "wam.urdf")
    meshes = sorted((tmp_path / "wam_meshes").glob("*.stl"))
    assert meshes, "expected STL files in wam_meshes/"
    again = load_urdf(written)
    before = sum(len(s.triangles) for lk in original.links for s in lk.shapes)
    after = sum(len(s.triangles) for lk in again.links for s in lk.shapes)
    assert after == before
    assert str(meshes[0].resolve()) in again.metadata["files"]


def test_urdf_written_is_well_formed_and_names_every_joint_once(tmp_path: Path):
    written = write_urdf(load_urdf(SR1), tmp_path / "sr1.urdf")
    robot = etree.parse(str(written)).getroot()
    names = [j.get("name") for j in robot.findall("joint")]
    assert len(names) == len(set(names)) == 29


def test_convert_command_writes_urdf(tmp_path: Path):
    out = tmp_path / "puma.urdf"
    source = MODELS / "openhrp3" / "model" / "PA10" / "pa10.main.wrl"
    done = subprocess.run(
        [sys.executable, "-m", "hrpsim", "model", "convert", str(source), str(out)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert load_urdf(out).dof == load_body(source).dof == 9


def test_convert_command_says_what_urdf_cannot_hold(tmp_path: Path):
    source = MODELS / "openhrp3" / "model" / "sample1.wrl"
    done = subprocess.run(
        [sys.executable, "-m", "hrpsim", "model", "convert", str(source), str(tmp_path / "s.urdf")],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "left out (no URDF form): 8 sensors" in done.stdout
    assert "rotor" not in done.stdout  # rotor inertia and gear ratio have a URDF form: the transmission


def test_convert_command_reports_a_broken_input(tmp_path: Path):
    broken = tmp_path / "broken.urdf"
    broken.write_text("<robot name='x'><link name='a'></robot>")
    done = subprocess.run(
        [sys.executable, "-m", "hrpsim", "model", "convert", str(broken), str(tmp_path / "o.urdf")],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 1
    assert "broken.urdf:1" in done.stderr and "malformed XML" in done.stderr


def test_shapes_urdf_has_no_primitive_for_become_meshes(tmp_path: Path):
    from hrpsim.bodyinfo import Body, Link, Shape
    from hrpsim.modelloader.urdf_xml import rpy_matrix

    turned = rpy_matrix(np.array([0.3, -0.2, 1.0]))
    shapes = [
        Shape(kind="cylinder", radius=0.1, height=0.4, rotation=turned, translation=np.array([1.0, 2.0, 3.0])),
        Shape(kind="cone", radius=0.2, height=0.6),
        Shape(kind="capsule", radius=0.1, height=0.5),
        Shape(kind="plane"),
        Shape(kind="sphere", radius=0.3),
    ]
    root = Link(name="base", joint_type="fixed", translation=np.array([0.0, 0.0, 0.25]), mass=1.0, shapes=shapes)
    track = Link(name="track", parent=0, joint_type="crawler", joint_id=0, mass=1.0)
    slider = Link(name="slider", parent=0, joint_type="slide", joint_id=1, joint_axis=np.array([0.0, 1.0, 0.0]))
    original = Body(name="shapes", links=[root, track, slider])
    again = load_urdf(write_urdf(original, tmp_path / "shapes.urdf"))
    kinds = [s.kind for s in again.links[0].shapes]
    assert kinds == ["cylinder", "mesh", "mesh", "sphere"]  # the infinite plane is left out
    cylinder, cone, capsule, _sphere = again.links[0].shapes
    assert np.allclose(cylinder.rotation, turned) and np.allclose(cylinder.translation, [1, 2, 3])
    # cones and capsules keep BodyInfo's Y axis and are centred on their origin
    assert np.allclose(cone.vertices.min(axis=0), [-0.2, -0.3, -0.2], atol=1e-6)
    assert np.allclose(cone.vertices.max(axis=0), [0.2, 0.3, 0.2], atol=1e-6)
    assert np.allclose(capsule.vertices.max(axis=0), [0.1, 0.35, 0.1], atol=1e-6)
    assert again.root.joint_type == "fixed" and np.allclose(again.root.translation, [0, 0, 0.25])
    assert again.links[again.link_index("track")].joint_type == "fixed"  # URDF has no crawler joint
    slider_back = again.links[again.link_index("slider")]
    assert (slider_back.q_lower, slider_back.q_upper) == (-math.inf, math.inf)
    assert again.joint_names == ["slider"]
