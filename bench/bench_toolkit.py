"""µs per tick for the toolkit on sample1 (update + CoM + one Jacobian + gravity torques) beside the ODE tick.

The world is bench_step's: sample1.wrl standing on floor.wrl at a 1 ms step, every joint held at
its initial angle. A block of ODE ticks (OdeEngine.step and reading the robot's state as its
controller receives it) alternates with a block of toolkit work on the states that block
produced: ``RobotModel.update(state)``, ``com()``, ``jacobian("RLEG_ANKLE_R")`` and
``gravity()`` (hrpsim.controllers.model, on Pinocchio). Figures are medians over blocks;
``ratio`` = toolkit / tick, the median of adjacent pairs' ratios: what a controller that reads
the model every tick adds to the simulator's own tick.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench_step import _world  # noqa: E402

from hrpsim.controllers.model import RobotModel  # noqa: E402
from hrpsim.controllers.state import JointIndex, State  # noqa: E402

BLOCK = 200
ROUNDS = 12


def _ticks(world, joints: JointIndex, n: int) -> tuple[float, list[State]]:
    states = []
    started = time.perf_counter()
    for _ in range(n):
        world.step()
        states.append(State(world.read("robot").to_wire(), joints))
    return (time.perf_counter() - started) / n * 1e6, states


def _toolkit(model: RobotModel, states: list[State]) -> float:
    started = time.perf_counter()
    for state in states:
        model.update(state)
        model.com()
        model.jacobian("RLEG_ANKLE_R")
        model.gravity()
    return (time.perf_counter() - started) / len(states) * 1e6


def run() -> dict[str, float]:
    world = _world()
    try:
        body = world.body("robot")
        joints = JointIndex(body.joint_names)
        model = RobotModel(body)
        _toolkit(model, _ticks(world, joints, BLOCK)[1])  # warm up both
        ticks, toolkit = [], []
        for _ in range(ROUNDS):
            tick_us, states = _ticks(world, joints, BLOCK)
            ticks.append(tick_us)
            toolkit.append(_toolkit(model, states))
    finally:
        world.release()
    ratios = [t / k for t, k in zip(toolkit, ticks, strict=True)]
    return {
        "toolkit_us": statistics.median(toolkit),
        "tick_us": statistics.median(ticks),
        "ratio": statistics.median(ratios),
    }


if __name__ == "__main__":
    print(run())
