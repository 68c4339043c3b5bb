"""Two hrpsim projects as Gymnasium environments, each driven by a random policy and by a scripted
one, with the episodes' returns printed: OpenHRP3's sample humanoid (VRML, on ODE) and a small
quadruped (MJCF, on MuJoCo), both in torque mode, rewarded for staying up (hrpsim.gym.Standing: 1 a
step while up; the episode ends when the robot falls). The random policy falls; the scripted one, a
PD law holding the pose the episode began in, stands to the end. Nothing is trained.

    python examples/gym/random_and_scripted.py [--episodes N]
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

import gymnasium
import numpy as np

import hrpsim.gym

HERE = Path(__file__).resolve().parent

# name -> the env's options, and the scripted policy's PD gains (N m/rad, N m s/rad)
ENVS = {
    "sample1 (VRML, ODE)": (
        {"project": HERE / "sample1_torque.yaml", "frame_skip": 10, "action_limits": {"torque": (-200.0, 200.0)}},
        (400.0, 20.0),
    ),
    "quadruped (MJCF, MuJoCo)": ({"project": HERE / "quadruped.yaml", "frame_skip": 4}, (15.0, 0.3)),
}

Policy = Callable[[np.ndarray], np.ndarray]


class RandomPolicy:
    """Actions drawn uniformly from the action space, whatever the robot does."""

    def __init__(self, space: gymnasium.spaces.Box) -> None:
        self.space = space

    def __call__(self, observation: np.ndarray) -> np.ndarray:
        return self.space.sample()


class HoldPose:
    """The scripted policy: a PD law in torque mode towards the joint angles the episode began with."""

    def __init__(self, env: gymnasium.Env, kp: float, kd: float) -> None:
        slices = env.unwrapped.observation_layout.slices
        self.q, self.dq, self.kp, self.kd = slices["q"], slices["dq"], kp, kd
        self.target = np.zeros(0)

    def begin(self, observation: np.ndarray) -> None:
        self.target = observation[self.q].copy()

    def __call__(self, observation: np.ndarray) -> np.ndarray:
        return self.kp * (self.target - observation[self.q]) - self.kd * observation[self.dq]


def episode(env: gymnasium.Env, policy: Policy, seed: int) -> tuple[float, int, str]:
    """One episode: its return, its steps and how it ended."""
    observation, _ = env.reset(seed=seed)
    getattr(policy, "begin", lambda _: None)(observation)
    total, steps = 0.0, 0
    while True:
        observation, reward, terminated, truncated, info = env.step(policy(observation))
        total, steps = total + reward, steps + 1
        if terminated or truncated:
            ended = "blew up" if "error" in info else "fell" if terminated else "stood to the end"
            return total, steps, f"{ended} at t = {info['time']:.2f} s"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--episodes", type=int, default=2, help="episodes per policy (default 2)")
    episodes = parser.parse_args().episodes
    task = hrpsim.gym.Standing()
    for name, (options, gains) in ENVS.items():
        env = gymnasium.make(hrpsim.gym.ENV_ID, reward=task.reward, terminated=task.terminated, **options)
        env.action_space.seed(0)  # the random policy's draws, so that a rerun prints the same
        policies = {"random": RandomPolicy(env.action_space), "scripted": HoldPose(env, *gains)}
        for policy_name, policy in policies.items():
            for seed in range(episodes):
                total, steps, ended = episode(env, policy, seed)
                print(f"{name:26s} {policy_name:8s} episode {seed}: return {total:6.1f} in {steps:3d} steps, {ended}")
        env.close()


if __name__ == "__main__":
    main()
