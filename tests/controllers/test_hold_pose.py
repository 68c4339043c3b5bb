"""The stock hold controller (examples/controllers/hold_pose.py) holds every standing robot of the
corpus and an arm on both engines with gains from the robot's model; gains beyond the stability bound
explode, and the error names the joint and the bound (docs/physics.md, *Stable PD gains*)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from process_helpers import MODELS

from hrpsim.engines.stability import joint_inertia
from hrpsim.errors import SimulationError
from hrpsim.modelloader import load_body
from hrpsim.pd_stability import is_stable, max_damping, max_stiffness
from hrpsim.project import load_project
from hrpsim.simulation import Simulation
from hrpsim.toolkit.gains import hold_gains, joint_inertias
from hrpsim.toolkit.model import RobotModel

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "examples" / "controllers"))
from hold_pose import HoldPose  # noqa: E402

pytest.importorskip("pinocchio")

HOLDS = ["gr001_hold.yaml", "sr1_hold.yaml", "sample_hold.yaml", "jaco2_hold.yaml"]
ENGINES = [
    "ode",
    pytest.param(
        "mujoco", marks=pytest.mark.skipif(not __import__("importlib").util.find_spec("mujoco"), reason="no MuJoCo")
    ),
]


def held_simulation(project: str, engine: str, **gains: float) -> tuple[Simulation, HoldPose]:
    loaded = load_project(REPO / "examples" / project)
    loaded.world.engine = engine
    loaded.world.end_time = max(loaded.world.end_time, 5.0)  # a step stops at the run's end time
    loaded.controllers = []  # the same controller, attached in this process
    sim = Simulation(loaded)
    controller = HoldPose(**gains)
    sim.attach(controller, robot="robot", name="hold", period=0.002)
    return sim, controller


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("project", HOLDS)
def test_the_stock_hold_controller_holds_the_robot_five_seconds(project: str, engine: str) -> None:
    sim, _ = held_simulation(project, engine)
    with sim:
        start = sim.state("robot")
        q0, z0 = start.q.copy(), float(start.root_position[2])
        worst = 0.0
        while sim.time < 5.0 - 1e-9:
            sim.step(100)
            state = sim.state("robot")
            worst = max(worst, float(np.abs(state.q - q0).max()))
        assert worst < 0.1, f"a joint left its pose by {worst:.3f} rad"
        assert state.root_rotation[2, 2] > 0.99  # upright
        assert abs(float(state.root_position[2]) - z0) < 0.02


def test_the_gains_are_inside_the_bound_of_every_joint() -> None:
    for path in [
        "choreonoid-body/GR001/GR001.body",
        "choreonoid-body/SR1/SR1.body",
        "choreonoid-body/JACO2/JACO2.body",
    ]:
        model = RobotModel(load_body(MODELS / path))
        p, d = hold_gains(model, 0.002)
        inertias, coupling = joint_inertias(model)
        for stiffness, damping, inertia in zip(p, d, inertias, strict=True):
            # the stiffest coupled mode sees the joint's inertia divided by the coupling factor
            assert is_stable(inertia / coupling, 0.002, stiffness, damping)
            assert damping == pytest.approx(max_damping(inertia / coupling, 0.002) / 2)


def test_a_body_without_joints_has_no_gains() -> None:
    p, d = hold_gains(RobotModel(load_body(MODELS / "openhrp3" / "model" / "box2.wrl")), 0.002)
    assert p.shape == d.shape == (0,)


@pytest.mark.parametrize("scale, stable", [(0.98, True), (1.02, False)])
def test_the_bound_is_where_a_held_pd_law_starts_to_explode(scale: float, stable: bool) -> None:
    """A joint integrated as the engines do (semi-implicit, torque held for a step) on both sides of
    D = 2 I / h and P = 4 I / h^2 - 2 D / h."""
    inertia, h = 0.0163, 0.002
    for damping, stiffness in [(scale * max_damping(inertia, h), 10.0), (5.0, scale * max_stiffness(inertia, h, 5.0))]:
        q, dq = 0.01, 0.1
        for _ in range(5000):
            dq += h * (-stiffness * q - damping * dq) / inertia
            q += h * dq
        assert (abs(q) < 0.01 and abs(dq) < 0.1) is stable, (damping, stiffness, q, dq)


@pytest.mark.parametrize("engine", ENGINES)
def test_an_exploding_joint_is_told_its_gain_bound(engine: str) -> None:
    """JACO2's fingers (0.01 kg m^2 of rotor) take at most D = 10 N m s/rad at 2 ms: D = 20 explodes one."""
    sim, _ = held_simulation("jaco2_hold.yaml", engine, p_gain=400.0, d_gain=20.0)
    with sim, pytest.raises(SimulationError) as caught:
        sim.step(2500)
    message = str(caught.value)
    found = re.search(
        r"joint '([^']+)', in torque mode, moves about ([0-9.e+-]+) kg m\^2.*D < 2 I / h = ([0-9.e+-]+)", message
    )
    assert found, message
    body = sim.engine.body("robot")
    index = next(i for i, link in enumerate(body.links) if link.joint_label == found.group(1))
    inertia = sum(joint_inertia(body, index))
    assert float(found.group(3)) == pytest.approx(max_damping(inertia, 0.002), rel=1e-2)
    assert float(found.group(3)) < 20.0 and "hold_pose.py" in message


def test_a_launched_humanoid_holds_under_the_stock_controller(tmp_path: Path) -> None:
    summary = tmp_path / "summary.json"
    done = subprocess.run(
        [sys.executable, "-m", "hrpsim", "launch", "examples/sr1_hold.yaml", "--until", "2", "--summary", str(summary)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    result = json.loads(summary.read_text())
    assert result["error"] is None
    robot = result["robots"]["robot"]
    assert robot["min_root_z"] > robot["root_start"][2] - 0.02
    assert result["controllers"]["hold"]["ticks"] >= 999
