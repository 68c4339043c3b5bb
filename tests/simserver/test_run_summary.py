"""The run summary's verdict fits the robot: "stayed up" or "FELL" only for a standing robot (a free
root on joints, upright, taller than its stance is wide); a fixed-root model reports the links that
moved, a free body on many legs its root's height band, and neither gets a verdict. ``hrpsim sim
summary`` prints the summary ``hrpsim launch`` prints, verdict included."""

from __future__ import annotations

import math
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from mjcf_helpers import suite_folder
from process_helpers import HRPSIM, REPO, launch_summary
from sim_helpers import start_simserver, wait_finished

from hrpsim.simulation import Simulation
from hrpsim.summary_report import FIXED_ROOT, FREE_BODY, STANDING, fallen, format_summary, model_kind, upright


def rotation_about_x(angle: float) -> np.ndarray:
    c, s = math.cos(angle), math.sin(angle)
    return np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])


def robot(joints: int, tilt: float, lowest: float) -> dict:
    return {
        "root_start": [0.0, 0.0, 1.0],
        "root_end": [0.0, 0.0, lowest],
        "min_root_z": lowest,
        "has_joints": joints > 0,
        "upright_start": upright(rotation_about_x(tilt)),
    }


@pytest.mark.parametrize(
    "entry, verdict",
    [
        (robot(joints=12, tilt=0.0, lowest=0.2), True),
        (robot(joints=12, tilt=0.0, lowest=0.9), False),
        (robot(joints=0, tilt=0.0, lowest=0.2), None),  # a dropped box
        (robot(joints=12, tilt=math.pi / 2, lowest=0.2), None),  # started lying on its side
    ],
)
def test_a_summary_without_kinds_keeps_its_old_verdicts(entry: dict, verdict: bool | None) -> None:
    assert fallen(entry) is verdict
    line = format_summary({"robots": {"r": entry}}).splitlines()[3]
    assert ("FELL" in line, "stayed up" in line) == (verdict is True, verdict is False)


HUMANOID = [[0, 0, 0.72], [0, 0.09, 0.4], [0, -0.09, 0.4], [0, 0.09, 0.1], [0, -0.09, 0.1]]  # waist, knees, ankles
ANT = [[0, 0, 0.75], [0.4, 0.4, 0.75], [-0.4, 0.4, 0.75], [0.4, -0.4, 0.75], [-0.4, -0.4, 0.75]]  # torso, hips
UPRIGHT = np.eye(3)


@pytest.mark.parametrize(
    "free_root, joints, rotation, links, kind",
    [
        (True, True, UPRIGHT, HUMANOID, STANDING),
        (True, True, UPRIGHT, ANT, FREE_BODY),  # wider than tall: it settles, it does not fall
        (True, True, rotation_about_x(math.pi / 2), HUMANOID, FREE_BODY),  # lying down
        (True, False, UPRIGHT, HUMANOID[:1], FREE_BODY),  # a box
        (False, True, UPRIGHT, HUMANOID, FIXED_ROOT),  # an arm, or a hopper held by the world
    ],
)
def test_what_a_model_is(free_root: bool, joints: bool, rotation: np.ndarray, links: list, kind: str) -> None:
    assert model_kind(free_root=free_root, has_joints=joints, root_rotation=rotation, link_positions=links) == kind


def mjcf_project(folder: Path, model: str, engine: str) -> Path:
    project = folder / f"{model}-{engine}.yaml"
    project.write_text(
        f"world: {{timestep: 0.002, end_time: 2.0, joint_limits: true, engine: {engine}}}\n"
        "models:\n"
        f"  - {{name: floor, file: {model}.xml, static: true, options: {{world: true}}}}\n"
        f"  - {{name: {model}, file: {model}.xml}}\n"
        f"collisions:\n  - {{a: floor, b: {model}, friction: 0.7}}\n"
        "services: {loader: local}\n"
    )
    return project


ENGINES = [
    "ode",
    pytest.param(
        "mujoco", marks=pytest.mark.skipif(not __import__("importlib").util.find_spec("mujoco"), reason="no MuJoCo")
    ),
]


@pytest.mark.parametrize("engine", ENGINES)
def test_a_many_legged_body_settling_on_its_legs_gets_its_height_band_and_no_verdict(
    tmp_path: Path, engine: str
) -> None:
    pytest.importorskip("mujoco")  # the MJCF reader
    shutil.copy(REPO / "examples" / "models" / "ant.xml", tmp_path / "ant.xml")  # a free torso on four legs
    with Simulation(mjcf_project(tmp_path, "ant", engine)) as sim:
        summary = sim.run()
    ant = summary["robots"]["ant"]
    assert ant["kind"] == FREE_BODY and ant["verdict"] is None
    assert ant["min_root_z"] < ant["root_start"][2] - 0.1  # it settled onto its legs
    assert ant["max_root_z"] >= ant["root_start"][2]
    line = next(line for line in format_summary(summary).splitlines() if "robot ant:" in line)
    assert "FELL" not in line and "stayed up" not in line
    assert f"root height {ant['min_root_z']:.3f}-{ant['max_root_z']:.3f} m" in line


@pytest.mark.parametrize("engine", ENGINES)
def test_a_hopper_held_by_the_world_reports_its_moving_links(tmp_path: Path, engine: str) -> None:
    pytest.importorskip("mujoco")
    shutil.copy(suite_folder() / "hopper.xml", tmp_path / "hopper.xml")
    shutil.copytree(suite_folder() / "common", tmp_path / "common")
    with Simulation(mjcf_project(tmp_path, "hopper", engine)) as sim:
        summary = sim.run()
    hopper = summary["robots"]["hopper"]
    assert hopper["kind"] == FIXED_ROOT and hopper["verdict"] is None
    moved = hopper["moved_links"]
    assert "torso" in moved and len(moved) >= 4  # it falls over: torso, thigh, leg, foot
    torso = moved["torso"]
    assert torso["end"][2] < torso["start"][2] - 0.3
    line = next(line for line in format_summary(summary).splitlines() if "robot hopper:" in line)
    assert line.startswith("  robot hopper: fixed root; links moved: ")
    assert "(0.000, 0.000, 0.000)" not in line


def test_sim_summary_prints_the_launch_summary_and_its_verdict(tmp_path: Path, nameserver: str) -> None:
    project = tmp_path / "stand.yaml"
    text = (REPO / "examples" / "sample_stand.yaml").read_text().replace("../models", str(REPO / "models"))
    project.write_text(re.sub(r"end_time: [0-9.]+", "end_time: 0.2", text) + "services: {loader: local}\n")
    proc, client, _ = start_simserver(tmp_path, nameserver, project)
    try:
        client.call("start")
        wait_finished(client)
        summary = client.call("summary")
        printed = subprocess.run(
            [*HRPSIM, "sim", "--nameserver", nameserver, "summary"],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=60,
        )
    finally:
        client.close()
        proc.stop()
    assert printed.returncode == 0, printed.stderr
    assert summary["robots"]["robot"]["verdict"] == "stayed up"
    ours = next(line for line in printed.stdout.splitlines() if "robot robot:" in line)
    assert ours.endswith("stayed up")
    (tmp_path / "launched").mkdir()
    launched = launch_summary(project, tmp_path / "launched")
    assert ours in launched.stdout  # the one summary, as hrpsim launch prints it
