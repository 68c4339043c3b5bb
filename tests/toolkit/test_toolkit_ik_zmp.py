"""Inverse kinematics, the ZMP, and the model a controller reads as ``self.model``."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest
from process_helpers import MODELS, REPO

import hrpsim
from hrpsim.controllers import Controller
from hrpsim.errors import RequestError
from hrpsim.modelloader import load_body
from hrpsim.toolkit.ik import Target
from hrpsim.toolkit.model import RobotModel

SAMPLE1 = MODELS / "openhrp3/model/sample1.wrl"
PA10 = MODELS / "openhrp3/model/PA10/pa10.main.wrl"
SR1 = MODELS / "choreonoid/model/SR1/SR1.urdf"  # joint limits (sample1 has none)


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


NOT_FINITE = [
    ({"position": [np.nan, 0.0, 0.5]}, r"targets\[0\] \(J7\)\.position is \[nan, 0\.0, 0\.5\]"),
    ({"position": [0.0, np.inf, 0.5]}, r"targets\[0\] \(J7\)\.position is \[0\.0, inf, 0\.5\]"),
    ({"rotation": np.full((3, 3), np.nan)}, r"targets\[0\] \(J7\)\.rotation is"),
    ({"position": [0.0, 0.0, 0.5], "point": [0.0, 0.0, -np.inf]}, r"targets\[0\] \(J7\)\.point is"),
    ({"position": [0.0, 0.0]}, r"targets\[0\] \(J7\)\.position has shape \(2,\), expected \(3,\)"),
]


@pytest.mark.parametrize(("given", "message"), NOT_FINITE)
def test_ik_refuses_a_target_that_is_not_finite_naming_it(given: dict, message: str) -> None:
    model = RobotModel(load_body(str(PA10)))
    with pytest.raises(RequestError, match=message):
        model.solve_ik([Target("J7", **given)])


def test_ik_refuses_a_starting_configuration_that_is_not_finite() -> None:
    model = RobotModel(load_body(str(PA10)))
    start = np.zeros(len(model.joint_names))
    start[2] = np.nan
    with pytest.raises(RequestError, match=r"solve_ik: q is \[0\.0, 0\.0, nan"):
        model.solve_ik([Target("J7", position=[0.3, 0.0, 0.5])], q=start)


def _error_norm(model: RobotModel, q: np.ndarray, target: Target) -> tuple[float, float]:
    model.set(q)
    pose = model.link_pose(target.link)
    rotation = pin.log3(target.rotation @ pose.rotation.T)
    return float(np.linalg.norm(target.position - pose.position)), float(np.linalg.norm(rotation))


def test_a_failed_ik_returns_the_nearest_configuration_it_found_with_its_errors() -> None:
    """Foot targets a little out of a limited leg's reach, from random starts (some against a limit):
    a solve that fails ends no farther than it started, and says how far that is."""
    model = RobotModel(load_body(str(SR1)))
    leg = [n for n in model.joint_names if n.startswith("RLEG")]
    index = [model.joint_names.index(n) for n in leg]
    limits = {lk.joint_label: (lk.q_lower, lk.q_upper) for lk in model.body.links}
    lower, upper = (np.array([limits[n][side] for n in leg]) for side in (0, 1))
    rng, failed = np.random.default_rng(0), 0
    for _ in range(60):
        start = np.zeros(len(model.joint_names))
        start[index] = rng.uniform(np.maximum(lower, -1.5), np.minimum(upper, 1.5))
        model.set(start)
        foot = model.link_pose("RLEG_ANKLE_R")
        target = Target("RLEG_ANKLE_R", position=foot.position + rng.normal(size=3) * 0.1, rotation=foot.rotation)
        result = model.solve_ik([target], joints=leg)
        if result.converged:
            continue
        failed += 1
        reached = _error_norm(model, result.q, target)
        assert reached == pytest.approx((result.position_error, result.rotation_error), abs=1e-12)
        assert np.hypot(*reached) <= np.linalg.norm(target.position - foot.position) + 1e-12
    assert failed >= 10  # the case is exercised


def test_the_zmp_from_force_sensors_waits_for_a_first_reading() -> None:
    with hrpsim.Simulation(REPO / "examples/sample_stand.yaml") as sim:
        model = RobotModel(sim.bodies["robot"])
        state = sim.state("robot")  # tick 0: the force sensors have measured nothing yet
        assert all(not np.any(state.sensor(s)) for s in ("lfsensor", "rfsensor"))
        model.update(state)
        assert model.sensor_zmp(state) is None
        sim.step(10)
        state = sim.state("robot")
        model.update(state)
        assert np.linalg.norm(model.sensor_zmp(state)[:2] - model.com()[:2]) < 0.01


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
