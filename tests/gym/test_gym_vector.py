"""hrpsim.gym under Gymnasium's vector envs: SyncVectorEnv in this process and AsyncVectorEnv with a
real subprocess per env (started by multiprocessing, talking over pipes), seeded per env, giving
the same observations, rewards and ends as one env stepped alone, episodes reset as they end."""

from __future__ import annotations

import os

import numpy as np
import pytest
from process_helpers import REPO

gymnasium = pytest.importorskip("gymnasium")
pytest.importorskip("mujoco")

import hrpsim.gym  # noqa: E402

QUADRUPED = REPO / "examples" / "gym" / "quadruped.yaml"
ENVS = 2
STEPS = 40


def make_env() -> gymnasium.Env:
    task = hrpsim.gym.Standing()
    return gymnasium.make(
        hrpsim.gym.ENV_ID,
        project=QUADRUPED,
        frame_skip=4,
        end_time=0.5,  # 25 steps: every env resets once within the run
        reset_noise_scale=0.02,
        reward=task.reward,
        terminated=task.terminated,
    )


def actions() -> np.ndarray:
    return np.random.default_rng(7).uniform(-8.0, 8.0, (STEPS, ENVS, 8)).astype(np.float32)


def alone(index: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Env ``index`` stepped by itself with the vector env's seed and autoreset (next step resets)."""
    env = make_env()
    try:
        observation, _ = env.reset(seed=index)
        seen, rewards, ends, done = [observation], [], [], False
        for action in actions()[:, index]:
            if done:  # Gymnasium's default autoreset: the step after an end is a reset
                observation, _ = env.reset()
                reward, done = 0.0, False
            else:
                observation, reward, terminated, truncated, _ = env.step(action)
                done = terminated or truncated
            seen.append(observation)
            rewards.append(reward)
            ends.append(done)
        return np.array(seen), np.array(rewards), np.array(ends)
    finally:
        env.close()


def vectorised(vector: gymnasium.vector.VectorEnv) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    observations, _ = vector.reset(seed=list(range(ENVS)))
    seen, rewards, ends = [observations], [], []
    for action in actions():
        observations, reward, terminated, truncated, _ = vector.step(action)
        seen.append(observations)
        rewards.append(reward)
        ends.append(terminated | truncated)
    return np.array(seen), np.array(rewards), np.array(ends)


@pytest.fixture(scope="module")
def each_alone() -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    return [alone(i) for i in range(ENVS)]


def check_matches(result: tuple[np.ndarray, np.ndarray, np.ndarray], each_alone: list) -> None:
    seen, rewards, ends = result
    for i, (alone_seen, alone_rewards, alone_ends) in enumerate(each_alone):
        np.testing.assert_array_equal(seen[:, i], alone_seen)
        np.testing.assert_array_equal(rewards[:, i], alone_rewards)
        np.testing.assert_array_equal(ends[:, i], alone_ends)
    assert ends.sum(axis=0).min() >= 1  # every env ended an episode and went on with the next
    assert not np.array_equal(seen[0, 0], seen[0, 1])  # seeded apart: their reset noise differs


def test_sync_vector_env_steps_each_env_as_it_would_go_alone(each_alone) -> None:
    vector = gymnasium.vector.SyncVectorEnv([make_env] * ENVS)
    try:
        check_matches(vectorised(vector), each_alone)
    finally:
        vector.close()


def test_async_vector_env_runs_each_env_in_a_process_of_its_own(each_alone) -> None:
    vector = gymnasium.vector.AsyncVectorEnv([make_env] * ENVS, context="spawn")
    try:
        pids = [process.pid for process in vector.processes]
        assert len(set(pids)) == ENVS and os.getpid() not in pids
        assert all(process.is_alive() for process in vector.processes)
        check_matches(vectorised(vector), each_alone)
    finally:
        vector.close()
    assert not any(process.is_alive() for process in vector.processes)
