"""The state a RobotModel holds: where its root stands before any state, what ``set`` accepts, and
results read off one forward pass per state that equal those of a model given only that state."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from process_helpers import MODELS, launch_summary

import hrpsim
from hrpsim.controllers.state import JointIndex, State
from hrpsim.errors import RequestError
from hrpsim.modelloader import load_body
from hrpsim.project import load_project
from hrpsim.toolkit.model import RobotModel
from hrpsim.transforms import axis_angle_matrix

SAMPLE1 = MODELS / "openhrp3/model/sample1.wrl"
PA10 = MODELS / "openhrp3/model/PA10/pa10.main.wrl"
CLOSED_LINK = MODELS / "openhrp3/model/closed-link-sample.wrl"  # a fixed root its file turns -90 deg about x
SR1 = MODELS / "choreonoid/model/SR1/SR1.urdf"


def test_a_new_model_s_fixed_root_stands_where_its_file_places_it(tmp_path: Path) -> None:
    project = tmp_path / "loop.yaml"
    project.write_text(
        f"world: {{timestep: 0.001, gravity: [0, 0, 0]}}\nmodels:\n  - {{name: loop, file: {CLOSED_LINK}}}\n"
    )
    with hrpsim.Simulation(project) as sim:
        body = sim.bodies["loop"]
        model = RobotModel(body)
        assert np.array_equal(model.root_pose.rotation, body.root.rotation)
        model.set(sim.state("loop").q)
        simulated = sim.engine.link_states("loop")
        for index, link in enumerate(body.links):  # the simulator places the root where the file does
            assert np.allclose(model.link_pose(link.name).position, simulated.positions[index], atol=1e-9), link.name


def test_a_new_model_s_free_root_stands_where_its_file_places_it_unless_told() -> None:
    body = load_body(str(SAMPLE1))
    assert np.array_equal(RobotModel(body).root_pose.position, body.root.translation)  # 0.7235 m up
    turned = axis_angle_matrix([0.0, 0.0, 1.0], 0.5)
    told = RobotModel(body, root_position=[1.0, 2.0, 0.8], root_rotation=turned)
    assert np.allclose(told.root_pose.position, [1.0, 2.0, 0.8]) and np.allclose(told.root_pose.rotation, turned)


CONTROLLER = """
import json
import sys

from hrpsim.controllers import Controller, run_main


class WhereAmI(Controller):
    def start(self, body):
        hand = self.model.link_pose("J7")  # before any state: where the project put the robot
        with open({out!r}, "w") as out:
            json.dump({{"position": hand.position.tolist(), "rotation": hand.rotation.tolist()}}, out)

    def control(self, state):
        return None


if __name__ == "__main__":
    sys.exit(run_main(WhereAmI))
"""

PROJECT = """world: {{timestep: 0.001, gravity: [0, 0, -9.8], end_time: 0.01, sync: lockstep}}
models:
  - {{name: pa10, file: {model}, position: [0.3, -0.2, 0.1], rotation: [0, 0, 1, 0.5]}}
controllers:
  - {{name: where, robot: pa10, {how}, period: 0.001}}
"""


@pytest.mark.parametrize("in_process", [False, True], ids=["process", "in-process"])
def test_a_controller_s_model_stands_where_the_project_places_the_robot(tmp_path: Path, in_process: bool) -> None:
    out = tmp_path / "hand.json"
    controller = tmp_path / "where_am_i.py"
    controller.write_text(CONTROLLER.format(out=str(out)))
    how = f"in_process: true, file: {controller}" if in_process else f"command: python {controller}"
    project = tmp_path / "placed.yaml"
    project.write_text(PROJECT.format(model=PA10, how=how))
    if in_process:
        with hrpsim.Simulation(load_project(project)) as sim:
            sim.run()
    else:
        assert launch_summary(project, tmp_path).summary["error"] is None
    seen = json.loads(out.read_text())
    expected = RobotModel(
        load_body(str(PA10)), root_position=[0.3, -0.2, 0.1], root_rotation=axis_angle_matrix([0, 0, 1], 0.5)
    ).link_pose("J7")
    assert np.allclose(seen["position"], expected.position, atol=1e-12)
    assert np.allclose(seen["rotation"], expected.rotation, atol=1e-12)


def test_set_refuses_a_joint_vector_of_the_wrong_length_naming_the_expected_one() -> None:
    model = RobotModel(load_body(str(SAMPLE1)))
    before = model.q.copy()
    with pytest.raises(RequestError, match=r"q has shape \(1,\), expected \(29,\)"):
        model.set([0.5])
    with pytest.raises(RequestError, match=r"dq has shape \(28,\), expected \(29,\)"):
        model.set(np.zeros(29), np.zeros(28))
    assert np.array_equal(model.q, before)  # a refused configuration changes nothing


QUERIES = {
    "link_pose": lambda m: np.concatenate(
        [m.link_pose("RLEG_ANKLE_R").position, m.link_pose("RLEG_ANKLE_R").rotation.ravel()]
    ),
    "sensor_pose": lambda m: m.sensor_pose(m.body.sensors[0].name if m.body.sensors else "CHEST").position,
    "jacobian": lambda m: m.jacobian("RARM_WRIST_R"),
    "local_jacobian": lambda m: m.jacobian("LLEG_ANKLE_R", frame="local"),
    "com": lambda m: m.com(),
    "com_velocity": lambda m: m.com_velocity(),
    "com_jacobian": lambda m: m.com_jacobian(),
    "mass_matrix": lambda m: m.mass_matrix(),
    "gravity": lambda m: m.gravity(),
    "coriolis": lambda m: m.coriolis(),
    "inverse_dynamics": lambda m: m.inverse_dynamics(np.linspace(-1.0, 1.0, m.nv)),
}


def _random_state(model: RobotModel, rng: np.random.Generator) -> dict:
    n = len(model.joint_names)
    rotation = axis_angle_matrix(rng.normal(size=3), float(rng.uniform(0.0, 3.0)))
    return {
        "q": rng.uniform(-1.0, 1.0, n),
        "dq": rng.normal(size=n),
        "root_position": rng.normal(size=3),
        "root_rotation": rotation,
        "root_velocity": rng.normal(size=6),
    }


@pytest.mark.parametrize("path", [SAMPLE1, SR1], ids=["sample1", "sr1"])
def test_every_query_of_one_state_equals_a_fresh_model_s_whatever_came_before(path: Path) -> None:
    body = load_body(str(path))
    shared, rng = RobotModel(body), np.random.default_rng(7)
    names = list(QUERIES)
    for _ in range(4):
        state = _random_state(shared, rng)
        shared.set(state["q"], state["dq"], **{k: v for k, v in state.items() if k.startswith("root")})
        for name in rng.permutation(names):  # each state's queries in another order, twice
            for _ in range(2):
                fresh = RobotModel(body)
                fresh.set(state["q"], state["dq"], **{k: v for k, v in state.items() if k.startswith("root")})
                np.testing.assert_allclose(QUERIES[name](shared), QUERIES[name](fresh), rtol=0, atol=1e-12)


def test_update_reads_a_controller_s_state_as_set_reads_its_arrays() -> None:
    body = load_body(str(SAMPLE1))
    by_state, by_arrays = RobotModel(body), RobotModel(body)
    arrays = _random_state(by_state, np.random.default_rng(3))
    state = State(
        {"tick": 5, "time": 0.01, "tau": np.zeros(len(body.joint_names)), **arrays}, JointIndex(body.joint_names)
    )
    by_state.update(state)
    by_arrays.set(arrays["q"], arrays["dq"], **{k: v for k, v in arrays.items() if k.startswith("root")})
    for name, query in QUERIES.items():
        assert np.array_equal(query(by_state), query(by_arrays)), name
    assert (by_state.time, by_state.tick) == (0.01, 5)
