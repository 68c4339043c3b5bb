"""Sensors without a name (Choreonoid allows them) get ``LINK/TYPEk``, the same name everywhere a name
appears: the loader's BodyInfo, ``hrpsim model info``, both engines' readings, the MJCF and URDF exports.
A name the file gives twice is an error naming the file and the line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from modelloader_helpers import MODELS, REPO

from hrpsim.errors import ModelError
from hrpsim.modelloader import load_body
from hrpsim.simulation import Simulation

# An IMU on the waist with no names, as Choreonoid's own humanoids write it, and a named foot sensor.
BODY = """format: ChoreonoidBody
format_version: 2.0
angle_unit: degree
name: imu_robot
root_link: WAIST
links:
  - name: WAIST
    joint_type: free
    mass: 5.0
    inertia: [0.05, 0, 0, 0, 0.05, 0, 0, 0, 0.05]
    elements:
      - {type: Shape, geometry: {type: Box, size: [0.2, 0.2, 0.2]}}
      - {type: AccelerationSensor, id: 0, translation: [0, 0, 0.05]}
      - {type: RateGyroSensor, id: 0, translation: [0, 0, 0.05]}
  - name: LEG
    parent: WAIST
    joint_type: revolute
    joint_id: 0
    joint_axis: [0, 1, 0]
    translation: [0, 0, -0.1]
    mass: 1.0
    inertia: [0.01, 0, 0, 0, 0.01, 0, 0, 0, 0.01]
    elements:
      - {type: Shape, translation: [0, 0, -0.2], geometry: {type: Box, size: [0.1, 0.1, 0.4]}}
      - {type: ForceSensor, name: %(foot)s, id: 0, translation: [0, 0, -0.4]}
      - {type: AccelerationSensor, id: 1}
"""
NAMES = ["WAIST/accel0", "WAIST/gyro0", "foot", "LEG/accel0"]


def write_body(folder: Path, foot: str = "foot") -> Path:
    path = folder / "imu_robot.body"
    path.write_text(BODY % {"foot": foot})
    return path


def hrpsim(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "hrpsim", *args], cwd=REPO, capture_output=True, text=True, timeout=300
    )


def test_unnamed_sensors_are_named_after_their_link_and_type(tmp_path: Path) -> None:
    body = load_body(write_body(tmp_path))
    assert [s.name for s in body.sensors] == NAMES
    info = hrpsim("model", "info", str(write_body(tmp_path)), "--json")
    assert info.returncode == 0, info.stderr
    assert [s["name"] for s in json.loads(info.stdout)["sensors"]] == NAMES


def test_a_generated_name_steps_over_one_the_file_uses(tmp_path: Path) -> None:
    body = load_body(write_body(tmp_path, foot="LEG/accel0"))
    assert [s.name for s in body.sensors] == ["WAIST/accel0", "WAIST/gyro0", "LEG/accel0", "LEG/accel1"]


def test_a_corpus_force_sensor_without_a_name_is_named() -> None:
    body = load_body(MODELS / "choreonoid-body/SR1/SR1Hand.body")
    names = [s.name for s in body.sensors]
    assert "LARM_WRIST_P/force0" in names and "" not in names
    assert len(set(names)) == len(names)


def test_a_name_given_twice_is_an_error_at_its_line(tmp_path: Path) -> None:
    path = tmp_path / "twice.body"
    path.write_text(BODY.replace("name: %(foot)s", "name: gsensor").replace("id: 1}", "id: 1, name: gsensor}"))
    with pytest.raises(ModelError) as caught:
        load_body(path)
    message = str(caught.value)
    second = next(i for i, line in enumerate(path.read_text().splitlines(), 1) if "id: 1, name: gsensor" in line)
    assert f"{path}:{second}:" in message
    assert "'gsensor'" in message and "unique" in message


@pytest.mark.parametrize("engine", ["ode", "mujoco"])
def test_both_engines_read_every_sensor_by_its_name(tmp_path: Path, engine: str) -> None:
    if engine == "mujoco":
        pytest.importorskip("mujoco")
    project = tmp_path / "p.yaml"
    project.write_text(
        f"world: {{timestep: 0.002, end_time: 1.0, engine: {engine}}}\n"
        f"models:\n  - {{name: robot, file: {write_body(tmp_path)}, position: [0, 0, 1.0]}}\n"
        "services: {loader: local}\n"
    )
    with Simulation(project) as sim:
        sim.step(50)
        readings = sim.state("robot").sensors
    assert sorted(readings) == sorted(NAMES)
    assert readings["WAIST/accel0"][2] == pytest.approx(0.0, abs=0.5)  # in free fall


def test_exports_carry_the_names(tmp_path: Path) -> None:
    pytest.importorskip("mujoco")
    source = write_body(tmp_path)
    mjcf, urdf = tmp_path / "x.xml", tmp_path / "x.urdf"
    told = {}
    for out in (mjcf, urdf):
        done = hrpsim("model", "convert", str(source), str(out))
        assert done.returncode == 0, done.stderr
        told[out] = done.stdout
    assert [s.name for s in load_body(mjcf).sensors] == NAMES
    assert "4 sensors (WAIST/accel0, WAIST/gyro0, foot, LEG/accel0)" in told[urdf]
