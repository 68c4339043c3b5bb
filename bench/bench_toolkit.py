"""µs per state for FK of one link + one world Jacobian + CoM on sample1: the toolkit, and bare Pinocchio alike.

The model is sample1.wrl (29 joints and a free root: nq 36, nv 35), its states those of bench_step's
world (standing on floor.wrl at a 1 ms step, every joint held at its initial angle), read as its
controller receives them. Per state the toolkit does ``RobotModel.update(state)``,
``link_pose("RARM_WRIST_R")``, ``jacobian("RLEG_ANKLE_R")`` and ``com()`` (hrpsim.toolkit.model);
bare Pinocchio does the same work as a Pinocchio user writes it, on its own Data: the joints and
the root's pose into q (``SE3ToXYZQUAT``), ``computeJointJacobians``, ``updateFramePlacement`` of
the hand and its translation and rotation, ``getFrameJacobian`` of the foot (LOCAL_WORLD_ALIGNED)
and ``centerOfMass`` at the POSITION level: one forward pass. The toolkit does besides what bare
Pinocchio leaves out: it checks the joint vector's length, keeps the state's velocities for later
queries, returns the Jacobian's columns in controller order and arrays the caller owns. A block of
ODE ticks alternates with the toolkit and bare Pinocchio (in turn first) on that block's states,
each REPEAT times; figures are medians over rounds: ``toolkit_us``, ``pinocchio_us``, ``ratio`` =
toolkit / Pinocchio (the median of each round's ratio), ``tick_us`` (the ODE tick) and
``tick_ratio`` = toolkit / tick, what reading the model every tick adds to the simulator's own.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

import numpy as np
import pinocchio as pin

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench_step import _world  # noqa: E402

from hrpsim.controllers.state import JointIndex, State  # noqa: E402
from hrpsim.toolkit.model import RobotModel  # noqa: E402

BLOCK = 200
REPEAT = 10
ROUNDS = 15
HAND, FOOT = "RARM_WRIST_R", "RLEG_ANKLE_R"


def _ticks(world, joints: JointIndex, n: int) -> tuple[float, list[State]]:
    states = []
    started = time.perf_counter()
    for _ in range(n):
        world.step()
        states.append(State(world.read("robot").to_wire(), joints))
    return (time.perf_counter() - started) / n * 1e6, states


def _toolkit(model: RobotModel, states: list[State]) -> float:
    started = time.perf_counter()
    for _ in range(REPEAT):
        for state in states:
            model.update(state)
            model.link_pose(HAND)
            model.jacobian(FOOT)
            model.com()
    return (time.perf_counter() - started) / (REPEAT * len(states)) * 1e6


class BarePinocchio:
    """FK of the hand, the foot's world Jacobian and the CoM straight on Pinocchio, one pass a state."""

    def __init__(self, model: RobotModel) -> None:
        self.pm = model.pin_model
        self.data = self.pm.createData()
        self.q = pin.neutral(self.pm)
        self.joints = model.joint_q_index
        self.hand, self.foot = model.frame_id(HAND), model.frame_id(FOOT)

    def run(self, states: list[State]) -> float:
        pm, data, q, joints, hand, foot = self.pm, self.data, self.q, self.joints, self.hand, self.foot
        world = pin.ReferenceFrame.LOCAL_WORLD_ALIGNED
        started = time.perf_counter()
        for _ in range(REPEAT):
            for state in states:
                q[joints] = state.q
                q[:7] = pin.SE3ToXYZQUAT(pin.SE3(state.root_rotation, state.root_position))
                pin.computeJointJacobians(pm, data, q)
                pose = pin.updateFramePlacement(pm, data, hand)
                pose.translation, pose.rotation  # noqa: B018  (read, as a caller would)
                pin.getFrameJacobian(pm, data, foot, world)
                pin.centerOfMass(pm, data, pin.POSITION, False)
        return (time.perf_counter() - started) / (REPEAT * len(states)) * 1e6

    def agrees_with(self, model: RobotModel, state: State) -> bool:
        """Whether both give the same numbers for ``state`` (so the two time the same work)."""
        self.run([state])
        model.update(state)
        ours = np.concatenate([np.arange(6), model.joint_v_index])  # Pinocchio's column of each of ours
        jacobian = pin.getFrameJacobian(self.pm, self.data, self.foot, pin.ReferenceFrame.LOCAL_WORLD_ALIGNED)
        return (
            np.allclose(model.link_pose(HAND).position, self.data.oMf[self.hand].translation, atol=1e-12)
            and np.allclose(model.jacobian(FOOT), jacobian[:, ours], atol=1e-12)
            and np.allclose(model.com(), self.data.com[0], atol=1e-12)
        )


def run() -> dict[str, float]:
    world = _world()
    try:
        joints = JointIndex(world.body("robot").joint_names)
        model = RobotModel(world.body("robot"))
        bare = BarePinocchio(model)
        warm = _ticks(world, joints, BLOCK)[1]
        _toolkit(model, warm), bare.run(warm)
        assert bare.agrees_with(model, warm[-1])
        ticks, toolkit, pinocchio = [], [], []
        for index in range(ROUNDS):
            tick_us, states = _ticks(world, joints, BLOCK)
            ticks.append(tick_us)
            if index % 2:
                pinocchio.append(bare.run(states))
                toolkit.append(_toolkit(model, states))
            else:
                toolkit.append(_toolkit(model, states))
                pinocchio.append(bare.run(states))
    finally:
        world.release()
    return {
        "toolkit_us": statistics.median(toolkit),
        "pinocchio_us": statistics.median(pinocchio),
        "ratio": statistics.median(t / p for t, p in zip(toolkit, pinocchio, strict=True)),
        "tick_us": statistics.median(ticks),
        "tick_ratio": statistics.median(t / k for t, k in zip(toolkit, ticks, strict=True)),
    }


if __name__ == "__main__":
    print(run())
