"""hrpsim.gym against Gymnasium's own rules: ``check_env`` on a VRML project (sample1 on ODE) and an
MJCF one (the example quadruped on MuJoCo), both made through ``gymnasium.make``; and the example
that runs a random and a scripted policy on each."""

from __future__ import annotations

import subprocess
import sys
import warnings

import pytest
from process_helpers import REPO

gymnasium = pytest.importorskip("gymnasium")
pytest.importorskip("mujoco")

from gymnasium.utils.env_checker import check_env  # noqa: E402

import hrpsim.gym  # noqa: E402 (registers the env id, once Gymnasium is known to be there)

EXAMPLES = REPO / "examples" / "gym"
ENVS = {
    "vrml": {"project": EXAMPLES / "sample1_torque.yaml", "frame_skip": 10, "action_limits": {"torque": (-200, 200)}},
    "mjcf": {"project": EXAMPLES / "quadruped.yaml", "frame_skip": 4},
}
# What check_env says of every env in physical units, Gymnasium's MuJoCo ones too: the observation
# is unbounded, and the action is not scaled to [-1, 1] (RescaleAction does that, docs/gym.md)
EXPECTED_WARNINGS = ("space minimum value is -infinity", "space maximum value is infinity", "symmetric and normalized")


@pytest.mark.parametrize("kind", ENVS)
def test_check_env_passes_with_no_warning_but_the_units_ones(kind: str) -> None:
    task = hrpsim.gym.Standing()
    env = gymnasium.make(hrpsim.gym.ENV_ID, reward=task.reward, terminated=task.terminated, **ENVS[kind])
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            check_env(env.unwrapped)
        others = [str(w.message) for w in caught if not any(e in str(w.message) for e in EXPECTED_WARNINGS)]
        assert others == []
        assert env.unwrapped.spec.id == hrpsim.gym.ENV_ID  # made through the registry: its spec checked too
    finally:
        env.close()


def test_the_example_runs_both_policies_on_both_robots_and_the_scripted_one_stands() -> None:
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / "random_and_scripted.py"), "--episodes", "1"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.splitlines()
    returns = {(line[:26].strip(), line[27:35].strip()): float(line.split("return")[1].split()[0]) for line in lines}
    assert set(returns) == {
        (e, p) for e in ("sample1 (VRML, ODE)", "quadruped (MJCF, MuJoCo)") for p in ("random", "scripted")
    }
    for robot in ("sample1 (VRML, ODE)", "quadruped (MJCF, MuJoCo)"):
        assert returns[robot, "scripted"] > returns[robot, "random"]
    assert sum("stood to the end" in line for line in lines) == 2 and sum(" fell at" in line for line in lines) == 2
