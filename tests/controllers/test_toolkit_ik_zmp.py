"""Inverse kinematics, the ZMP, and the model a controller reads as ``self.model``."""

from __future__ import annotations

import numpy as np
import pytest
from process_helpers import MODELS, REPO

import hrpsim
from hrpsim.controllers import Controller
from hrpsim.controllers.ik import Target
from hrpsim.controllers.model import RobotModel
from hrpsim.errors import RequestError
from hrpsim.modelloader import load_body

SAMPLE1 = MODELS / "openhrp3/model/sample1.wrl"
PA10 = MODELS / "openhrp3/model/PA10/pa10.main.wrl"


def random_q(model: RobotModel, rng: np.random.Generator) -> np.ndarray:
    lower = np.array([max(lk.q_lower, -1.2) for lk in model.body.joints])
    upper = np.array([min(lk.q_upper, 1.2) for lk in model.body.joints])
    return rng.uniform(lower, upper)


def within_limits(model: RobotModel, q: np.ndarray) -> bool:
    lower = np.array([lk.q_lower for lk in model.body.joints])
    upper = np.array([lk.q_upper for lk in model.body.joints])
    return bool(np.all(q >= lower) and np.all(q <= upper))


@pytest.mark.parametrize("seed", range(4))
def test_ik_reaches_a_reachable_hand_pose_on_pa10(seed: int) -> None:
    model = RobotModel(load_body(str(PA10)))
    rng = np.random.default_rng(seed)
    model.set(random_q(model, rng))
    goal = model.link_pose("J7")  # a pose the arm can take, so reachable
    model.set(np.zeros(len(model.joint_names)))
    result = model.solve_ik([Target("J7", position=goal.position, rotation=goal.rotation)])
    assert result.converged, result
    model.set(result.q)
    reached = model.link_pose("J7")
    assert np.linalg.norm(reached.position - goal.position) < 1e-6
    assert np.linalg.norm(reached.rotation - goal.rotation) < 1e-6
    assert within_limits(model, result.q)


def test_ik_moves_two_links_and_only_the_chosen_joints_on_sample1() -> None:
    model = RobotModel(load_body(str(SAMPLE1)))
    start = np.zeros(len(model.joint_names))
    model.set(start, root_position=[0.0, 0.0, 0.7235])
    right, left = model.link_pose("RARM_WRIST_P").position, model.link_pose("LARM_WRIST_P").position
    targets = [
        Target("RARM_WRIST_P", position=right + np.array([0.1, -0.05, 0.1])),
        Target("LARM_WRIST_P", position=left + 0.05),
    ]
    arms = [n for n in model.joint_names if "ARM" in n]
    result = model.solve_ik(targets, joints=arms)
    assert result.converged and result.position_error < 1e-6
    legs = [i for i, n in enumerate(model.joint_names) if n not in arms]
    assert np.array_equal(result.q[legs], start[legs])
    model.set(result.q)
    assert np.linalg.norm(model.link_pose("RARM_WRIST_P").position - targets[0].position) < 1e-6
    assert np.linalg.norm(model.link_pose("LARM_WRIST_P").position - targets[1].position) < 1e-6


def test_ik_says_when_a_target_is_out_of_reach() -> None:
    model = RobotModel(load_body(str(PA10)))
    model.set(np.zeros(len(model.joint_names)))
    far = model.link_pose("J7").position + np.array([3.0, 0.0, 0.0])
    result = model.solve_ik([Target("J7", position=far)])
    assert not result.converged
    model.set(result.q)
    left = np.linalg.norm(model.link_pose("J7").position - far)
    assert result.position_error == pytest.approx(left) and left > 1.0
    assert within_limits(model, result.q)
    with pytest.raises(RequestError, match="no joint named ELBOW"):
        model.solve_ik([Target("J7", position=far)], joints=["ELBOW"])


def test_zmp_from_force_sensors_agrees_with_the_model_standing_still() -> None:
    with hrpsim.Simulation(REPO / "examples/sample_stand.yaml") as sim:
        sim.step(500)
        state = sim.state("robot")
        model = RobotModel(sim.bodies["robot"])
        model.update(state)
        from_model, from_sensors = model.zmp(), model.sensor_zmp(state)
        assert np.linalg.norm(from_model - from_sensors) < 1e-3
        assert np.linalg.norm(from_model[:2] - model.com()[:2]) < 1e-9  # static: under the centre of mass
        # without the feet's own weight the sensors see the rest of the robot's, a few mm behind
        assert np.linalg.norm(model.sensor_zmp(state, feet=False) - from_model) > 1e-3


class ComWatcher(Controller):
    """Reads the model's centre of mass on some ticks only."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[tuple[int, np.ndarray]] = []

    def control(self, state):
        if state.tick % 100 == 50:
            self.seen.append((state.tick, self.model.com()))
        return None


def test_a_controller_s_model_follows_its_state_only_when_read() -> None:
    with hrpsim.Simulation(REPO / "examples/sample_stand.yaml") as sim:
        watcher = ComWatcher()
        sim.attach(watcher, robot="robot")
        sim.step(50)
        assert watcher._model is None  # never read, never built
        expected = RobotModel(sim.bodies["robot"])
        expected.update(sim.state("robot"))  # the state tick 50's control receives
        sim.step(1)
        assert watcher.seen[0][0] == 50
        assert np.allclose(watcher.seen[0][1], expected.com(), atol=1e-12)
        sim.step(250)
        assert [tick for tick, _ in watcher.seen] == [50, 150, 250]
        assert watcher._model.tick == 250  # updated on the ticks that read it, not since
