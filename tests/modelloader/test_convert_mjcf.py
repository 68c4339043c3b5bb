"""``hrpsim model convert X.wrl X.xml``: MJCF that MuJoCo loads, with the model's masses, rotor
inertia as armature, sensors and closed loops; run as a real process."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from hrpsim.modelloader import load_body

mujoco = pytest.importorskip("mujoco")

REPO = Path(__file__).resolve().parents[2]


def convert(source: Path, out: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "hrpsim", "model", "convert", str(source), str(out)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_sample1_as_mjcf_keeps_masses_rotor_inertia_and_sensors(models_dir: Path, tmp_path: Path) -> None:
    source = models_dir / "openhrp3/model/sample1.wrl"
    out = tmp_path / "sample1.xml"
    done = convert(source, out)
    assert done.returncode == 0, done.stderr
    assert "(MJCF)" in done.stdout
    body = load_body(source)
    model = mujoco.MjModel.from_xml_path(str(out))
    assert model.body_mass.sum() == pytest.approx(body.total_mass)
    for link in body.joints:
        joint = model.joint(f"{body.name}/{link.joint_label}")
        assert joint.armature[0] == pytest.approx(link.rotor_inertia * link.gear_ratio**2)
    assert np.count_nonzero(model.dof_armature) > 0
    for sensor in body.sensors:
        if sensor.type in ("force", "gyro", "accel"):
            assert (
                model.site(f"{body.name}/sensor/{sensor.name}").bodyid[0]
                == model.body(f"{body.name}/{body.links[sensor.link].name}").id
            )


def test_closed_loop_and_meshes_survive_the_conversion(models_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "closed.xml"
    done = convert(models_dir / "openhrp3/model/closed-link-sample.wrl", out)
    assert done.returncode == 0, done.stderr
    model = mujoco.MjModel.from_xml_path(str(out))
    assert model.neq == 1 and model.eq_type[0] == mujoco.mjtEq.mjEQ_CONNECT
    assert model.nmesh == 4
    data = mujoco.MjData(model)
    for _ in range(200):  # the free slide of the xy loop settles along its axis, then the loop holds
        mujoco.mj_step(model, data)
    assert np.abs(data.efc_pos[data.efc_type == mujoco.mjtConstraint.mjCNSTR_EQUALITY]).max() < 1e-3


def test_a_wrong_output_suffix_is_refused(models_dir: Path, tmp_path: Path) -> None:
    done = convert(models_dir / "openhrp3/model/box2.wrl", tmp_path / "box.mjcf")
    assert done.returncode == 2
    assert "must end in .urdf or .xml" in done.stderr
