"""A Choreonoid body's ``jointAngle`` values are where its joints start, as in Choreonoid, on every
engine, unless the project's ``joints:`` names the joint (by joint or link name)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from process_helpers import MODELS
from sim_helpers import model, project

from hrpsim.engines.base import make_engine
from hrpsim.modelloader import load_body

JACO2 = MODELS / "choreonoid-body/JACO2/JACO2.body"
ENGINES = ["ode", "mujoco", "kinematic"]


def start(engine: str, tmp_path: Path, joints: dict[str, float]) -> dict[str, float]:
    if engine == "mujoco":
        pytest.importorskip("mujoco")
    body = load_body(JACO2)
    config = model("jaco", joints=joints)
    proj, bodies = project(tmp_path, [(config, body)], gravity=[0.0, 0.0, 0.0], engine=engine)
    state = make_engine(proj, bodies).read("jaco")
    return dict(zip(body.joint_names, (float(q) for q in state.q), strict=True))


@pytest.mark.parametrize("engine", ENGINES)
def test_joints_start_at_the_files_joint_angles(engine: str, tmp_path: Path) -> None:
    initial = load_body(JACO2).metadata["initial_joint_values"]
    assert initial == {  # the file's jointAngle values, in degrees there
        "ARM": pytest.approx(math.radians(180)),
        "FOREARM": pytest.approx(math.radians(180)),
        "FINGER1": pytest.approx(math.radians(55)),
        "FINGER2": pytest.approx(math.radians(55)),
        "FINGER3": pytest.approx(math.radians(55)),
    }
    q = start(engine, tmp_path, {})
    for name, value in q.items():
        assert value == pytest.approx(initial.get(name, 0.0), abs=1e-9), name


@pytest.mark.parametrize("engine", ENGINES)
def test_the_projects_joints_win_over_the_file(engine: str, tmp_path: Path) -> None:
    q = start(engine, tmp_path, {"ARM": 0.5, "FINGER1": 0.0, "SHOULDER": 0.25})
    assert (q["ARM"], q["FINGER1"], q["SHOULDER"]) == pytest.approx((0.5, 0.0, 0.25), abs=1e-9)
    assert q["FOREARM"] == pytest.approx(math.radians(180), abs=1e-9)  # not named: the file's
