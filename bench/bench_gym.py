"""hrpsim.gym's env steps per second beside Gymnasium's own MuJoCo env on the same model: Ant-v5.

Gymnasium's `Ant-v5` (its ant.xml, time step 0.01 s, frame skip 5) and `hrpsim/Project-v0` on a project
that loads the same ant.xml through hrpsim's MJCF reader (its floor with the world option, MuJoCo
engine, time step 0.01 s, torque drive, joint stops on, frame skip 5), both made by `gymnasium.make`
and stepped with the same uniform random actions (Gymnasium's in [-1, 1], hrpsim's in N m, that times
the motors' gear of 150), in alternating blocks of `HRPSIM_BENCH_GYM_STEPS` / 10 steps (default 4000 in
all per env); each resets when its episode ends. `hrpsim_steps_per_s` and `gymnasium_steps_per_s` are
steps over wall seconds; `ratio` = hrpsim / Gymnasium, the median over the rounds of blocks. ant.xml
integrates with RK4 (four evaluations of the dynamics a step), which hrpsim's MuJoCo engine does not
offer (implicitfast, docs/mujoco.md): `gymnasium_same_options_steps_per_s` and `ratio_same_options`
are against a third env, Gymnasium's Ant-v5 with its model's options set to hrpsim's MuJoCo defaults
(integrator, solver, iterations, tolerance, impratio, cone): the same physics work, so that ratio
is the cost of hrpsim's env around it. Each env
observes what it observes by default: Gymnasium's the joints, the root and the contact forces (105
values), hrpsim's the joints and the root (8 + 8 + 3 + 9 + 6); hrpsim leaves out the file's joint damping
(docs/formats-mjcf.md), so the two ants move alike but not the same.
`reset_snapshot_ms` and `reset_world_ms` are hrpsim's two ways back to the start on this project
(restoring the start snapshot, the default; the World's reset), `reset_speedup` world / snapshot,
`gymnasium_reset_ms` Gymnasium's `reset`; `sample1_reset_snapshot_ms` and `sample1_reset_world_ms`
the same two on examples/gym/sample1_torque.yaml (ODE, where the World's reset rebuilds the world).
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import gymnasium
import mujoco
import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import hrpsim.gym  # noqa: E402
from hrpsim.engines.mujoco import OPTIONS  # noqa: E402

FRAME_SKIP = 5
GEAR = 150.0  # ant.xml's motors: ctrl in [-1, 1] times this is the torque
BLOCKS = 10
RESETS = 30


def ant_project(folder: Path) -> Path:
    """ant.xml as Gymnasium ships it, standing on its own floor in an hrpsim project."""
    ant = Path(gymnasium.__file__).parent / "envs" / "mujoco" / "assets" / "ant.xml"
    project = folder / "ant.yaml"
    project.write_text(
        "world: {engine: mujoco, timestep: 0.01, end_time: 50.0, joint_limits: true}\n"
        "models:\n"
        f"  - {{name: floor, file: {ant}, static: true, options: {{world: true}}}}\n"
        f"  - {{name: ant, file: {ant}, drive: torque}}\n"
        "collisions:\n"
        "  - {a: floor, b: ant, friction: 1.0}\n"
    )
    return project


def with_hrpsim_options(env: gymnasium.Env) -> gymnasium.Env:
    """Gymnasium's env with its MuJoCo model set to integrate and solve as hrpsim's engine does."""
    options, opt = {o.name: o.default for o in OPTIONS}, env.unwrapped.model.opt
    opt.integrator = getattr(mujoco.mjtIntegrator, f"mjINT_{options['integrator'].upper()}")
    opt.solver = getattr(mujoco.mjtSolver, f"mjSOL_{options['solver'].upper()}")
    opt.cone = getattr(mujoco.mjtCone, f"mjCONE_{options['cone'].upper()}")
    opt.iterations, opt.tolerance = options["iterations"], options["tolerance"]
    opt.noslip_iterations, opt.impratio = options["noslip_iterations"], options["impratio"]
    return env


def steps(env: gymnasium.Env, actions: np.ndarray) -> float:
    """Wall seconds for these steps, resetting where an episode ends."""
    start = time.perf_counter()
    for action in actions:
        _, _, terminated, truncated, _ = env.step(action)
        if terminated or truncated:
            env.reset()
    return time.perf_counter() - start


def reset_ms(env: gymnasium.Env) -> float:
    start = time.perf_counter()
    for _ in range(RESETS):
        env.reset()
    return (time.perf_counter() - start) / RESETS * 1e3


def hrpsim_resets(project: Path, **options: object) -> dict[str, float]:
    out = {}
    for way in ("snapshot", "world"):
        env = hrpsim.gym.ProjectEnv(project, reset_with=way, **options)
        env.reset(seed=0)
        env.step(np.zeros(env.action_space.shape))
        out[way] = reset_ms(env)
        env.close()
    return out


def run() -> dict[str, float]:
    total = int(os.environ.get("HRPSIM_BENCH_GYM_STEPS", "4000"))
    block = max(total // BLOCKS, 1)
    with tempfile.TemporaryDirectory() as tmp:
        project = ant_project(Path(tmp))
        envs = {
            "hrpsim": gymnasium.make(hrpsim.gym.ENV_ID, project=project, frame_skip=FRAME_SKIP),
            "gymnasium": gymnasium.make("Ant-v5", frame_skip=FRAME_SKIP),
            "same_options": with_hrpsim_options(gymnasium.make("Ant-v5", frame_skip=FRAME_SKIP)),
        }
        assert envs["gymnasium"].unwrapped.model.opt.timestep == envs["hrpsim"].unwrapped.timestep
        scale = {"hrpsim": GEAR, "gymnasium": 1.0, "same_options": 1.0}
        seconds = dict.fromkeys(envs, 0.0)
        ratios: dict[str, list[float]] = {"gymnasium": [], "same_options": []}
        rng = np.random.default_rng(0)
        for env in envs.values():
            env.reset(seed=0)
        for _ in range(BLOCKS):
            actions = rng.uniform(-1.0, 1.0, (block, 8)).astype(np.float32)
            taken = {name: steps(env, actions * scale[name]) for name, env in envs.items()}
            for name in envs:
                seconds[name] += taken[name]
            for name, values in ratios.items():
                values.append(taken[name] / taken["hrpsim"])
        resets = hrpsim_resets(project, frame_skip=FRAME_SKIP)
        theirs_reset = reset_ms(envs["gymnasium"])
        for env in envs.values():
            env.close()
    sample1 = hrpsim_resets(
        REPO / "examples" / "gym" / "sample1_torque.yaml", frame_skip=10, action_limits={"torque": (-200.0, 200.0)}
    )
    return {
        "hrpsim_steps_per_s": BLOCKS * block / seconds["hrpsim"],
        "gymnasium_steps_per_s": BLOCKS * block / seconds["gymnasium"],
        "ratio": statistics.median(ratios["gymnasium"]),
        "gymnasium_same_options_steps_per_s": BLOCKS * block / seconds["same_options"],
        "ratio_same_options": statistics.median(ratios["same_options"]),
        "reset_snapshot_ms": resets["snapshot"],
        "reset_world_ms": resets["world"],
        "reset_speedup": resets["world"] / resets["snapshot"],
        "gymnasium_reset_ms": theirs_reset,
        "sample1_reset_snapshot_ms": sample1["snapshot"],
        "sample1_reset_world_ms": sample1["world"],
    }
