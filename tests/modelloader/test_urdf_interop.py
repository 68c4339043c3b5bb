"""Interoperation with a real tool: Debian's collada-urdf-tools ``urdf_to_collada`` (urdfdom +
collada-dom) converts URDF to COLLADA; our reading of the URDF and of its COLLADA agree."""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest
from urdf_helpers import PUMA, SR1, URDF_TO_COLLADA

from hrpsim.modelloader.collada import load_collada
from hrpsim.modelloader.urdf import load_urdf
from hrpsim.modelloader.urdf_export import write_urdf


def _urdf_to_collada(urdf: Path, out: Path) -> Path:
    if not URDF_TO_COLLADA.exists():
        pytest.fail(f"{URDF_TO_COLLADA} is missing: install collada-urdf-tools (scripts/bootstrap.sh does)")
    done = subprocess.run([str(URDF_TO_COLLADA), str(urdf), str(out)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and out.exists(), done.stdout + done.stderr
    return out


def _assert_same_model(from_urdf, from_collada):
    assert from_collada.name == from_urdf.name
    assert sorted(lk.name for lk in from_collada.links) == sorted(lk.name for lk in from_urdf.links)
    assert from_collada.root.name == from_urdf.root.name
    assert sorted(from_collada.joint_names) == sorted(from_urdf.joint_names)
    assert from_collada.dof == from_urdf.dof
    assert from_collada.total_mass == pytest.approx(from_urdf.total_mass, rel=1e-9)
    for link in from_urdf.links:
        other = from_collada.links[from_collada.link_index(link.name)]
        parent = from_urdf.links[link.parent].name if link.parent >= 0 else None
        assert (from_collada.links[other.parent].name if other.parent >= 0 else None) == parent
        assert other.joint_label == link.joint_label or link.parent < 0
        assert other.joint_type == link.joint_type
        assert np.allclose(other.translation, link.translation, atol=1e-6), link.name
        assert np.allclose(other.rotation, link.rotation, atol=1e-6), link.name
        assert other.mass == pytest.approx(link.mass, rel=1e-9), link.name
        assert np.allclose(other.com, link.com, atol=1e-6), link.name
        assert np.allclose(other.inertia, link.inertia, rtol=1e-6, atol=1e-9), link.name
        if link.joint_type in ("rotate", "slide"):
            assert np.allclose(other.joint_axis, link.joint_axis, atol=1e-9), link.name
            # the tool writes limits in degrees; we read them back in radians
            assert other.q_lower == pytest.approx(link.q_lower, abs=1e-9), link.name
            assert other.q_upper == pytest.approx(link.q_upper, abs=1e-9), link.name


def test_sr1_urdf_and_its_collada_agree(tmp_path: Path):
    from_urdf = load_urdf(SR1)
    from_collada = load_collada(_urdf_to_collada(SR1, tmp_path / "sr1.dae"))
    _assert_same_model(from_urdf, from_collada)


def test_our_urdf_export_is_read_by_urdfdom(tmp_path: Path):
    """Our URDF of the PUMA arm (from COLLADA) goes through urdfdom and back to the same model."""
    original = load_collada(PUMA)
    urdf = write_urdf(original, tmp_path / "puma.urdf", file_urls=True)  # the tool takes urls only
    from_urdf = load_urdf(urdf)
    from_collada = load_collada(_urdf_to_collada(urdf, tmp_path / "puma.dae"))
    _assert_same_model(from_urdf, from_collada)
    assert from_collada.joint_names == original.joint_names
    # the tool read every mesh file we wrote
    triangles = sum(len(s.triangles) for lk in original.links for s in lk.shapes)
    assert sum(len(s.triangles) for lk in from_collada.links for s in lk.shapes) == triangles


def test_vrml_sample_robot_through_our_urdf_and_urdfdom(tmp_path: Path):
    """OpenHRP's sample1.wrl written as URDF (with transmissions for its gear ratios) is read by
    urdfdom; its COLLADA agrees with our reading of that URDF."""
    from urdf_helpers import MODELS

    from hrpsim.modelloader import load_body

    body = load_body(MODELS / "openhrp3" / "model" / "sample1.wrl")
    # the tool does not read hrpsim:root_origin (the root's pose in the VRML file): compare at the origin
    body.root.translation[:] = 0.0
    body.root.rotation[:] = np.eye(3)
    urdf = write_urdf(body, tmp_path / "sample1.urdf")
    from_urdf = load_urdf(urdf)
    assert [lk.gear_ratio for lk in from_urdf.joints] == [lk.gear_ratio for lk in body.joints]
    _assert_same_model(from_urdf, load_collada(_urdf_to_collada(urdf, tmp_path / "sample1.dae")))
