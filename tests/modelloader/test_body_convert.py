"""``hrpsim model convert`` of Choreonoid body files (real processes): MJCF that MuJoCo's own
compiler loads with the body's masses and joints, and URDF that reads back to the same links
(every loadable body of the corpus goes through the URDF round trip in test_convert_roundtrip.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from modelloader_helpers import MODELS, REPO

from hrpsim.modelloader import load_body

mujoco = pytest.importorskip("mujoco")

BODIES = ["choreonoid-body/GR001/GR001.body", "choreonoid-body/SR1/SR1.body", "choreonoid-body/PA10/PA10.body"]


def convert(source: Path, out: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "hrpsim", "model", "convert", str(source), str(out)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.parametrize("rel", BODIES)
def test_body_as_mjcf_loads_in_mujoco_with_its_masses_and_joints(rel: str, tmp_path: Path) -> None:
    source = MODELS / rel
    out = tmp_path / "body.xml"
    done = convert(source, out)
    assert done.returncode == 0, done.stderr
    body = load_body(source)
    model = mujoco.MjModel.from_xml_path(str(out))
    assert model.body_mass.sum() == pytest.approx(body.total_mass, rel=1e-9)
    for kind, mj_kind in (("rotate", mujoco.mjtJoint.mjJNT_HINGE), ("slide", mujoco.mjtJoint.mjJNT_SLIDE)):
        written = [model.joint(i).name for i in range(model.njnt) if model.jnt_type[i] == mj_kind]
        assert sorted(written) == sorted(f"{body.name}/{lk.joint_label}" for lk in body.joints if lk.joint_type == kind)
    for link in body.links:
        assert model.body(f"{body.name}/{link.name}").mass[0] == pytest.approx(link.mass, rel=1e-9)


def test_body_as_urdf_reads_back_with_the_same_tree(tmp_path: Path) -> None:
    source = MODELS / "choreonoid-body/GR001/GR001.body"
    out = tmp_path / "gr001.urdf"
    done = convert(source, out)
    assert done.returncode == 0, done.stderr
    original, again = load_body(source), load_body(out)
    assert [lk.name for lk in again.links] == [lk.name for lk in original.links]
    assert again.joint_names == original.joint_names
    assert again.total_mass == pytest.approx(original.total_mass, rel=1e-12)
    collision_meshes = list((tmp_path / "gr001_meshes").glob("*_collision*.stl"))
    assert len(collision_meshes) == sum(len(lk.shapes) for lk in original.links)
