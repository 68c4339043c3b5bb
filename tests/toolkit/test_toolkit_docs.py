"""What docs/controllers.md says of the toolkit, run: its ``Reach`` example reaches the wrist's goal,
and ``zmp()`` without accelerations is the ZMP of the current velocities (under the centre of mass
only at rest)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
from process_helpers import MODELS, REPO

import hrpsim
from hrpsim.modelloader import load_body
from hrpsim.toolkit.model import RobotModel

DOC = REPO / "docs" / "controllers.md"
PROJECT = f"""world: {{timestep: 0.002, gravity: [0, 0, -9.8], sync: lockstep}}
models:
  - {{name: floor, file: {MODELS}/openhrp3/model/floor.wrl, static: true, position: [0, 0, -0.1]}}
  - {{name: robot, file: {MODELS}/openhrp3/model/sample1.wrl, position: [0, 0, 0.7235], drive: torque}}
collisions:
  - {{a: floor, b: robot, friction: 0.5}}
"""


def documented_controller(name: str) -> type:
    """The class ``name`` of the docs page's Python block that defines it."""
    blocks = re.findall(r"^```python\n(.*?)^```$", DOC.read_text(), re.M | re.S)
    source = next(b for b in blocks if f"class {name}(Controller)" in b)
    namespace: dict = {"__name__": f"docs_{name.lower()}"}
    exec(compile(source, f"{DOC}:{name}", "exec"), namespace)  # the block as the docs give it
    return namespace[name]


def test_the_documented_reach_puts_the_wrist_where_it_asked(tmp_path: Path) -> None:
    project = tmp_path / "reach.yaml"
    project.write_text(PROJECT)
    with hrpsim.Simulation(project) as sim:
        reach = documented_controller("Reach")()
        sim.attach(reach, robot="robot", period=0.002)
        start = RobotModel(sim.bodies["robot"])
        start.update(sim.state("robot"))
        wrist = start.link_pose("RARM_WRIST_R")
        sim.step(1000)  # 2 s
        state = sim.state("robot")
        arm = [reach.joints.index(name) for name in reach.joints.names if name.startswith("RARM")]
        assert np.abs(state.q[arm] - reach.q_ref[arm]).max() < 0.02  # the arm went where IK put it
        assert np.abs(state.q[arm] - start.q[start.joint_q_index][arm]).max() > 0.3  # and it moved
    root = start.root_pose
    start.set(reach.q_ref, root_position=root.position, root_rotation=root.rotation)
    assert np.allclose(start.link_pose("RARM_WRIST_R").position, wrist.position + np.array([0.1, 0.0, 0.1]), atol=1e-6)
    assert np.allclose(start.link_pose("RARM_WRIST_R").rotation, wrist.rotation, atol=1e-6)


def test_zmp_without_accelerations_uses_the_current_velocities() -> None:
    model = RobotModel(load_body(str(MODELS / "openhrp3/model/sample1.wrl")))
    q = np.zeros(len(model.joint_names))
    model.set(q)
    at_rest = model.zmp()
    assert np.allclose(at_rest[:2], model.com()[:2], atol=1e-12)  # at rest: under the centre of mass
    rates = np.zeros_like(q)
    rates[model.joint_names.index("RARM_SHOULDER_P")] = 5.0  # the right arm swings: it pulls on its shoulder
    model.set(q, rates)
    moving = model.zmp()
    assert np.linalg.norm(moving[:2] - model.com()[:2]) > 1e-3
    assert np.allclose(moving, model.zmp(np.zeros(model.nv)), atol=1e-12)  # the same as asking ddq = 0
