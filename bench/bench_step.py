"""µs per tick for sample1 standing (collision + step + sensor read): our OdeEngine vs a bare pyode loop.

Both loops run sample1.wrl on floor.wrl at a 1 ms step with world.step, every joint held by its
motor at the initial angle, and read the robot's state each tick (joint angles and rates, root
pose and velocity, force sensors, gyro, accelerometer). The bare loop drives the very same kind
of ODE objects with the least Python possible (one contact rule, no checks, tuples instead of
arrays); ours adds the state guard, drive modes, per-pair surfaces and the state dictionary the
controller hub sends. Blocks of ticks alternate between the two so that both see the same
machine load; figures are medians over blocks, the ratio the median of adjacent pairs' ratios.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

import ode

REPO = Path(__file__).resolve().parents[1]
MODELS = REPO / "models" / "openhrp3" / "model"
sys.path.insert(0, str(REPO))

from hrpsim.engines.ode import params as odeparams  # noqa: E402
from hrpsim.engines.ode.engine import OdeEngine  # noqa: E402
from hrpsim.modelloader import load_body  # noqa: E402
from hrpsim.project import CollisionPair, ModelConfig, Project, WorldConfig  # noqa: E402

TIMESTEP = 0.001
BLOCK = 200
ROUNDS = 12


def _world() -> OdeEngine:
    floor = ModelConfig(name="floor", file=str(MODELS / "floor.wrl"), static=True, position=[0.0, 0.0, -0.1])
    robot = ModelConfig(name="robot", file=str(MODELS / "sample1.wrl"), position=[0.0, 0.0, 0.7235], drive="high_gain")
    project = Project(
        path=str(Path(tempfile.gettempdir()) / "bench_step.yaml"),
        world=WorldConfig(timestep=TIMESTEP),
        models=[floor, robot],
        collisions=[CollisionPair("floor", "robot", friction=0.5)],
    )
    return OdeEngine(project, {"floor": load_body(floor.file), "robot": load_body(robot.file)})


class BareLoop:
    """The same ODE world driven directly: contacts, motors, step, raw reads."""

    def __init__(self, world: OdeEngine) -> None:
        self.world = world.ode_world
        self.space = world.space
        self.group = ode.JointGroup()
        model = world.model("robot")
        self.hinges = [
            (js.joint, js.offset, world.drives["robot"].q_ref[k])
            for k, js in enumerate(model.joints)
            if js.kind == "hinge"
        ]
        self.root = model.links[0].body
        sensors = world.sensors["robot"]
        inertial = sensors.measuring("gyro").inertial
        self.force_joints = [sim.joint for _, sim in sensors.measuring("force").force]
        self.gyro_bodies = [model.links[frame.link].body for frame in inertial.gyro]
        self.accel = [
            (model.links[f.link].body, tuple(p - c for p, c in zip(f.point, model.links[f.link].com, strict=True)))
            for f in inertial.accel
        ]

    def _near_geoms(self, _args: object, g1: ode.GeomObject, g2: ode.GeomObject) -> None:
        b1, b2 = g1.getBody(), g2.getBody()
        for contact in ode.collide(g1, g2):
            contact.setMode(odeparams.CONTACT_APPROX1)
            contact.setMu(0.5)
            ode.ContactJoint(self.world, self.group, contact).attach(b1, b2)

    def _near_spaces(self, _args: object, s1: ode.GeomObject, s2: ode.GeomObject) -> None:
        ode.collide2(s1, s2, None, self._near_geoms)

    def tick(self) -> tuple:
        self.group.empty()
        self.space.collide(None, self._near_spaces)
        inv_dt = 1.0 / TIMESTEP
        for joint, offset, target in self.hinges:
            joint.setParam(odeparams.VEL, (target - joint.getAngle() - offset) * inv_dt)
        self.world.step(TIMESTEP)
        root = self.root
        return (
            [j.getAngle() for j, _, _ in self.hinges],
            [j.getAngleRate() for j, _, _ in self.hinges],
            root.getPosition(),
            root.getRotation(),
            root.getLinearVel(),
            root.getAngularVel(),
            [j.getFeedback() for j in self.force_joints],
            [b.getAngularVel() for b in self.gyro_bodies],
            [b.getRelPointVel(p) for b, p in self.accel],
        )


def _time_block(tick, n: int) -> float:
    start = time.perf_counter()
    for _ in range(n):
        tick()
    return (time.perf_counter() - start) / n * 1e6


def run() -> dict[str, float]:
    ours_world, bare_world = _world(), _world()
    bare = BareLoop(bare_world)

    def ours() -> None:
        ours_world.collide()
        ours_world.integrate()
        ours_world.read("robot")

    ours_us, bare_us = [], []
    _time_block(ours, 50)
    _time_block(bare.tick, 50)
    for _ in range(ROUNDS):
        ours_us.append(_time_block(ours, BLOCK))
        bare_us.append(_time_block(bare.tick, BLOCK))
    upright = ours_world.read("robot").root_position[2]
    if abs(upright - 0.7235) > 0.01:
        raise RuntimeError(f"sample1 did not stand still in the benchmark (root z {upright:.4f})")
    # Adjacent blocks share the machine's load, so the ratio is taken per pair of blocks.
    ratio = statistics.median(o / b for o, b in zip(ours_us, bare_us, strict=True))
    return {"tick_us": statistics.median(ours_us), "bare_tick_us": statistics.median(bare_us), "ratio": ratio}


if __name__ == "__main__":
    print(run())
