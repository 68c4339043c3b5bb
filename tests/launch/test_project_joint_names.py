"""A joint name a project gets wrong is reported before anything starts, once, with the joints
the model has."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from process_helpers import HRPSIM, MODELS, REPO

from hrpsim import Simulation
from hrpsim.errors import ConfigError
from hrpsim.joint_names import check_joint_names
from hrpsim.project import load_project

PA10 = MODELS / "openhrp3/model/PA10/pa10.main.wrl"
SPRING = MODELS / "openhrp3/model/springJoint.wrl"


def write_project(tmp_path: Path, model_line: str) -> Path:
    project = tmp_path / "p.yaml"
    project.write_text(
        "world: {timestep: 0.001, end_time: 0.1}\n"
        "models:\n"
        f"  - {{name: floor, file: {MODELS}/openhrp3/model/floor.wrl, static: true}}\n"
        f"  - {model_line}\n"
    )
    return project


def test_launch_names_a_wrong_joint_once_with_the_model_joints_before_starting(tmp_path: Path) -> None:
    project = write_project(tmp_path, f"{{name: arm, file: {PA10}, joints: {{J9: 0.3, J2: 0.5}}}}")
    done = subprocess.run(
        [*HRPSIM, "launch", str(project), "--nameserver", "tcp://127.0.0.1:*", "--run-dir", str(tmp_path / "run")],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    said = done.stdout + done.stderr
    assert done.returncode == 2
    assert said.count("has no joint 'J9'") == 1, said
    assert f"{project}: 1 problem(s)" in said and "models[1].joints.J9" in said
    assert "J1, J2, J3, J4, J5, J6, J7, HAND_L, HAND_R" in said
    assert "nameserver at" not in said  # nothing was started


def test_drive_names_are_checked_too(tmp_path: Path) -> None:
    project = write_project(tmp_path, f"{{name: arm, file: {PA10}, drive: {{J1: high_gain, ELBOW: torque}}}}")
    with pytest.raises(ConfigError, match=r"models\[1\]\.drive\.ELBOW: model 'arm' has no joint 'ELBOW' \(joints"):
        check_joint_names(load_project(project))


def test_a_joint_without_a_joint_id_takes_an_angle_but_no_drive_mode(tmp_path: Path) -> None:
    fine = write_project(tmp_path, f"{{name: spring, file: {SPRING}, joints: {{SPRING_JOINT: 0.01}}}}")
    check_joint_names(load_project(fine))
    with Simulation(fine) as sim:  # simulated outside the controller's arrays, from that angle
        assert sim.state("spring").joint_names == []
        values, _ = sim.engine.link_values("spring")
        assert values[1] == pytest.approx(0.01)
    driven = write_project(tmp_path, f"{{name: spring, file: {SPRING}, drive: {{SPRING_JOINT: high_gain}}}}")
    with pytest.raises(ConfigError, match=r"drive\.SPRING_JOINT: joint 'SPRING_JOINT' has no jointId"):
        check_joint_names(load_project(driven))
