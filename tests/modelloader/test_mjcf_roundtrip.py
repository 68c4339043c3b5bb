"""``hrpsim model convert`` of MJCF files (real processes): back to MJCF, the BodyInfo read again is
the one read first (to the six digits MuJoCo writes); to URDF, the tree, joints and masses stay."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from mjcf_helpers import suite_file
from process_helpers import REPO

from hrpsim.bodyinfo import bodies_equal
from hrpsim.modelloader import load_body

pytest.importorskip("mujoco")

WRITTEN_DIGITS = {"rtol": 1e-4, "atol": 1e-6}  # MuJoCo writes six significant digits


def convert(source: Path, out: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "hrpsim", "model", "convert", str(source), str(out)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("name", ["humanoid.xml", "cheetah.xml", "walker.xml", "acrobot.xml"])
def test_mjcf_to_mjcf_reads_back_the_same_body(name: str, tmp_path: Path) -> None:
    first = load_body(suite_file(name))
    out = tmp_path / name
    convert(suite_file(name), out)
    again = load_body(out)
    assert again.source == str(out)
    first.source = again.source
    first.metadata = again.metadata = {}
    assert bodies_equal(first, again, **WRITTEN_DIGITS)


def test_mjcf_to_urdf_keeps_the_tree_joints_and_masses(tmp_path: Path) -> None:
    first = load_body(suite_file("humanoid.xml"))
    out = tmp_path / "humanoid.urdf"
    convert(suite_file("humanoid.xml"), out)
    again = load_body(out)
    assert sorted(lk.name for lk in again.links) == sorted(lk.name for lk in first.links)  # URDF orders its own way
    assert again.joint_names == first.joint_names and again.dof == first.dof == 21
    assert again.total_mass == pytest.approx(first.total_mass, rel=1e-9)
    for a in first.links:
        b = again.links[again.link_index(a.name)]
        assert again.links[b.parent].name == first.links[a.parent].name if a.parent >= 0 else b.parent == -1
        assert (a.joint_type, a.mass, a.gear_ratio) == (
            b.joint_type,
            pytest.approx(b.mass),
            pytest.approx(b.gear_ratio),
        )
