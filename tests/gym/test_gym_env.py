"""hrpsim.gym.ProjectEnv on real projects: what it observes, how an action becomes each joint's
command in its drive mode, frame skip and episode ends, the two ways back to the start and what a
seed decides, a world that blows up, and the errors bad options get."""

from __future__ import annotations

import math

import numpy as np
import pytest
from process_helpers import REPO

pytest.importorskip("gymnasium")
pytest.importorskip("mujoco")

from hrpsim.errors import ConfigError, SimulationError
from hrpsim.gym import ProjectEnv, Standing
from hrpsim.project import HardwareModelConfig, NoiseConfig, load_project

EXAMPLES = REPO / "examples"
QUADRUPED = EXAMPLES / "gym" / "quadruped.yaml"
SAMPLE1 = EXAMPLES / "gym" / "sample1_torque.yaml"
HIPS = ["front_left_hip", "front_right_hip", "back_left_hip", "back_right_hip"]
KNEES = ["front_left_knee", "front_right_knee", "back_left_knee", "back_right_knee"]


def rollout(env: ProjectEnv, actions: np.ndarray, seed: int) -> np.ndarray:
    observation, _ = env.reset(seed=seed)
    seen = [observation]
    for action in actions:
        seen.append(env.step(action)[0])
    return np.array(seen)


def random_actions(env: ProjectEnv, count: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).uniform(
        env.action_space.low, env.action_space.high, (count, *env.action_space.shape)
    )


# --- observation ---


def test_the_observation_is_the_robots_state_and_the_sensors_named() -> None:
    env = ProjectEnv(SAMPLE1, sensors=["gyrometer", "rfsensor"], action_limits={"torque": (-50, 50)}, frame_skip=5)
    try:
        observation, _ = env.reset(seed=0)
        observation, *_ = env.step(np.zeros(29))
        state = env.sim.state("robot")
        slices = env.observation_layout.slices
        assert list(slices) == ["q", "dq", "root_position", "root_rotation", "root_velocity", "gyrometer", "rfsensor"]
        assert env.observation_space.shape == (29 + 29 + 3 + 9 + 6 + 3 + 6,)
        np.testing.assert_array_equal(observation[slices["q"]], state.q)
        np.testing.assert_array_equal(observation[slices["root_rotation"]], state.root_rotation.ravel())
        np.testing.assert_array_equal(observation[slices["rfsensor"]], state.sensor("rfsensor"))
        assert observation[slices["rfsensor"]][2] > 50.0  # the right foot carries weight: a real reading
    finally:
        env.close()


def test_a_robot_fixed_to_the_world_is_observed_by_its_joints_alone(tmp_path) -> None:
    project = tmp_path / "pa10.yaml"
    project.write_text(
        "world: {timestep: 0.002, end_time: 1.0, engine: mujoco}\n"
        f"models: [{{name: arm, file: {REPO}/models/openhrp3/model/PA10/pa10.main.wrl, drive: high_gain}}]\n"
    )
    env = ProjectEnv(project, observe=["q", "tau"], action_limits={"HAND_L": (-0.03, 0.03), "HAND_R": (-0.03, 0.03)})
    try:
        assert list(env.observation_layout.slices) == ["q", "tau"]
        assert env.observation_space.shape == (2 * len(env.sim.bodies["arm"].joint_names),)
    finally:
        env.close()


# --- action ---


def test_each_joint_is_commanded_in_its_drive_mode(tmp_path) -> None:
    """Hips at target angles (high_gain), knees at target speeds (velocity): the joints get there."""
    project = load_project(QUADRUPED)
    robot = project.model("robot")
    robot.drive = {**dict.fromkeys(HIPS, "high_gain"), **dict.fromkeys(KNEES, "velocity")}
    env = ProjectEnv(project, frame_skip=4, action_limits={"velocity": (-2.0, 2.0)})
    try:
        assert env.action_map.modes == ["high_gain", "velocity"] * 4
        hip_lo, hip_hi = env.action_space.low[0], env.action_space.high[0]
        assert (hip_lo, hip_hi) == pytest.approx((-math.radians(60), math.radians(60)))  # the model's range
        env.reset(seed=0)
        action = np.array([0.3, -0.5] * 4, dtype=np.float32)
        for _ in range(10):
            observation, *_ = env.step(action)
        q, dq = observation[env.observation_layout.slices["q"]], observation[env.observation_layout.slices["dq"]]
        np.testing.assert_allclose(q[0::2], 0.3, atol=0.02)
        np.testing.assert_allclose(dq[1::2], -0.5, atol=0.05)
    finally:
        env.close()


def test_an_action_over_some_joints_leaves_the_others_holding_their_start() -> None:
    project = load_project(QUADRUPED)
    project.model("robot").drive = "high_gain"
    env = ProjectEnv(project, joints=["front_left_hip"], frame_skip=4)
    try:
        observation, _ = env.reset(seed=0)
        start = observation[env.observation_layout.slices["q"]].copy()
        for _ in range(10):
            observation, *_ = env.step(np.array([0.1], dtype=np.float32))
        q = observation[env.observation_layout.slices["q"]]
        assert env.action_space.shape == (1,)
        assert q[0] == pytest.approx(0.1, abs=0.02)
        np.testing.assert_allclose(q[1:], start[1:], atol=0.02)
    finally:
        env.close()


def test_a_bad_action_is_refused_naming_the_joint() -> None:
    env = ProjectEnv(QUADRUPED, frame_skip=4)
    try:
        env.reset(seed=0)
        action = np.zeros(8)
        action[3] = np.nan
        with pytest.raises(ValueError, match=r"action\[3\] \(front_right_knee, torque\) is nan"):
            env.step(action)
        with pytest.raises(ValueError, match="expected 8 values"):
            env.step(np.zeros(7))
    finally:
        env.close()


def test_an_action_past_its_bounds_is_clipped_to_them() -> None:
    env = ProjectEnv(QUADRUPED, frame_skip=1)
    try:
        command = env.action_map.command(np.full(8, 100.0))
        np.testing.assert_array_equal(command["torque"], np.full(8, 8.0))  # the motors' 8 N m
    finally:
        env.close()


# --- time ---


def test_a_step_is_frame_skip_ticks_and_the_episode_is_truncated_at_the_end_time() -> None:
    env = ProjectEnv(QUADRUPED, frame_skip=7, end_time=0.1)  # 20 ticks: 7 + 7 + 6
    try:
        env.reset(seed=0)
        ends = [env.step(np.zeros(8))[2:] for _ in range(3)]
        assert [info["time"] for *_, info in ends] == pytest.approx([0.035, 0.07, 0.1])
        assert [truncated for _, truncated, _ in ends] == [False, False, True]
        assert not any(terminated for terminated, *_ in ends)
        with pytest.raises(SimulationError, match=r"reached its end time, t=0.1 s; call reset"):
            env.step(np.zeros(8))
    finally:
        env.close()


# --- reset and seeds ---


def test_the_same_seed_and_actions_give_the_same_episode_in_another_env() -> None:
    first, second = ProjectEnv(QUADRUPED, frame_skip=4), ProjectEnv(QUADRUPED, frame_skip=4)
    try:
        actions = random_actions(first, 60)
        a = rollout(first, actions, seed=3)
        rollout(first, random_actions(first, 30, seed=9), seed=4)  # another episode between
        np.testing.assert_array_equal(rollout(first, actions, seed=3), a)
        np.testing.assert_array_equal(rollout(second, actions, seed=3), a)
    finally:
        first.close()
        second.close()


def test_the_reset_noise_follows_the_seed() -> None:
    env = ProjectEnv(QUADRUPED, frame_skip=4, reset_noise_scale=0.05)
    try:
        q = env.observation_layout.slices["q"]
        a, b, c = (env.reset(seed=s)[0] for s in (1, 1, 2))
        start = np.array([0.5, -1.0] * 4)
        assert np.abs(a[q] - start).max() <= 0.05 and np.abs(a[q] - start).max() > 0.0
        np.testing.assert_array_equal(a, b)
        assert np.abs(a - c).max() > 1e-3
    finally:
        env.close()


def test_the_snapshot_and_the_world_reset_start_the_same_episode() -> None:
    by_snapshot = ProjectEnv(QUADRUPED, frame_skip=4, reset_with="snapshot")
    by_world = ProjectEnv(QUADRUPED, frame_skip=4, reset_with="world")
    try:
        actions = random_actions(by_snapshot, 40)
        for env in (by_snapshot, by_world):
            rollout(env, actions, seed=0)  # an episode to come back from
        np.testing.assert_array_equal(rollout(by_snapshot, actions, seed=0), rollout(by_world, actions, seed=0))
    finally:
        by_snapshot.close()
        by_world.close()


def test_an_episode_can_begin_from_a_snapshot_of_the_env() -> None:
    env = ProjectEnv(QUADRUPED, frame_skip=4)
    try:
        actions = random_actions(env, 20)
        env.reset(seed=0)
        for action in actions[:10]:
            env.step(action)
        middle = env.snapshot()
        rest = [env.step(action)[0] for action in actions[10:]]
        _, info = env.reset(options={"snapshot": middle})
        assert info["time"] == pytest.approx(0.2)
        np.testing.assert_array_equal([env.step(action)[0] for action in actions[10:]], rest)
        with pytest.raises(ConfigError, match="unknown start"):
            env.reset(options={"start": 1})
    finally:
        env.close()


def noisy_quadruped():
    project = load_project(QUADRUPED)
    project.model("robot").devices = HardwareModelConfig(noise={"q": NoiseConfig(std=0.01)})
    return project


def test_a_project_with_noisy_devices_resets_through_the_world_and_the_seed_picks_the_noise() -> None:
    env = ProjectEnv(noisy_quadruped(), frame_skip=4)
    try:
        assert env.episodes.way == "world"
        seeds = []
        for seed in (5, 5, 6):
            env.reset(seed=seed)
            seeds.append(env.sim.project.model("robot").devices.noise_seed)
        assert seeds[0] == seeds[1] != seeds[2]
        truth = np.array([0.5, -1.0] * 4)
        sensed = env.sim.state("robot").q
        if np.array_equal(sensed, truth):
            pytest.skip("Simulation.state gives the engine's reading here, not the devices' (no noise to see)")
        a, b, c = (env.reset(seed=s)[0][env.observation_layout.slices["q"]] for s in (5, 5, 6))
        np.testing.assert_array_equal(a, b)
        assert np.abs(a - c).max() > 1e-4
    finally:
        env.close()


# --- failures ---


def test_a_world_that_blows_up_ends_the_episode_and_the_next_reset_makes_it_whole() -> None:
    """sample1 in high-gain mode on ODE, told to put every joint at the far end of its range in one
    tick, is thrown apart: the step says so, the env refuses to go on, and a reset starts afresh."""
    env = ProjectEnv(EXAMPLES / "sample_stand.yaml", frame_skip=5)
    try:
        start, _ = env.reset(seed=0)
        observation, reward, terminated, truncated, info = env.step(env.action_space.high)
        assert terminated and not truncated and reward == 0.0
        assert "non-finite or exploding state" in info["error"]
        np.testing.assert_array_equal(observation, start)  # the last state that was whole
        with pytest.raises(SimulationError, match=r"the world blew up \(simulation stopped.*call reset"):
            env.step(env.action_space.high)
        again, _ = env.reset(seed=0)
        np.testing.assert_array_equal(again, start)
        held = env.step(again[env.observation_layout.slices["q"]])
        assert not held[2] and np.isfinite(held[0]).all()
    finally:
        env.close()


def test_standing_ends_the_episode_when_the_robot_falls() -> None:
    task = Standing()
    env = ProjectEnv(
        SAMPLE1, frame_skip=10, action_limits={"torque": (-1, 1)}, reward=task.reward, terminated=task.terminated
    )
    try:
        env.reset(seed=0)
        env.sim.push("robot", "WAIST", [150.0, 0.0, 0.0], duration=0.1)
        rewards, terminated = [], False
        while not terminated:  # limp and pushed: it folds up and falls
            _, reward, terminated, truncated, _ = env.step(np.zeros(29))
            rewards.append(reward)
            assert not truncated, "it did not fall within the episode"
        assert rewards[:-1] == [1.0] * (len(rewards) - 1) and rewards[-1] == 0.0
        z = env.sim.state("robot").root_position[2]
        assert z < 0.6 * 0.7235 or math.acos(env.sim.state("robot").root_rotation[2, 2]) > math.radians(50)
    finally:
        env.close()


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"sensors": ["nose"]}, "has no sensor 'nose'"),
        ({"sensors": ["VISION_SENSOR1"]}, "is a vision sensor"),
        ({"observe": ["q", "height"]}, "no state part 'height'"),
        ({"action_limits": None}, r"no limits for the action of RLEG_HIP_R \(torque\)"),
        ({"action_limits": {"torque": (1, -1)}}, "low must be below high"),
        ({"action_limits": {"KNEE": (0, 1)}}, "'KNEE' is neither a chosen joint nor a drive mode"),
        ({"joints": ["RLEG_KNEE", "ELBOW"]}, "joints: 'ELBOW'"),
        ({"robot": "floor"}, "'floor' is not a model that moves"),
        ({"frame_skip": 0}, "frame_skip"),
        ({"reset_with": "rewind"}, "reset_with: 'rewind'"),
        ({"render_mode": "human"}, "renders nothing"),
    ],
)
def test_bad_options_are_refused_saying_what_to_give(options: dict, message: str) -> None:
    given = {"action_limits": {"torque": (-10, 10)}, **options}
    with pytest.raises(ConfigError, match=message):
        ProjectEnv(SAMPLE1, **given).close()


def test_a_project_with_several_robots_needs_the_robot_named(tmp_path) -> None:
    project = tmp_path / "two.yaml"
    box = REPO / "models" / "openhrp3" / "model" / "box2.wrl"
    project.write_text(f"models:\n  - {{name: a, file: {box}}}\n  - {{name: b, file: {box}, position: [1, 0, 0]}}\n")
    with pytest.raises(ConfigError, match=r"say which robot the env drives.* move are a, b"):
        ProjectEnv(project)
