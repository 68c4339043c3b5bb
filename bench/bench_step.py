"""µs per tick for sample1 standing (collision + step + sensor read): our OdeEngine vs a bare pyode loop.

Both loops run sample1.wrl on floor.wrl at a 1 ms step with world.step, every joint held by its
motor at the initial angle, and read the robot's state each tick (joint angles and rates, root
pose and velocity, force sensors, gyro, accelerometer). The bare loop drives the very same kind
of ODE objects with the least Python possible (one contact rule, no checks, tuples instead of
arrays); ours adds the state guard, drive modes, per-pair surfaces and the state dictionary the
controller hub sends. Blocks of ticks alternate between the two so that both see the same
machine load; figures are medians over blocks, the ratio the median of adjacent pairs' ratios.

A third loop measures the floor under ``ratio``: the bare loop plus the pyode calls our tick
cannot do without beyond it (the friction model's per contact, the sensor-frame rotations and
the accelerometers' velocity before the step; see :class:`FloorLoop`). ``floor_ratio`` is it over
the bare loop, ``ratio_over_floor`` our tick over it: the Python and numpy our tick adds. A fourth
loop is the bare loop with our contact generator (the friction model) in place of its contact
rule: ``friction_ratio`` over the bare loop is what the friction model costs, including its effect
on ODE's step; ``ratio_over_friction`` is what the rest of our tick (guard, drives, turn count,
state and sensors) adds to it.
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
        return self.drive_step_read()

    def drive_step_read(self) -> tuple:
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


class FloorLoop(BareLoop):
    """The bare loop plus the pyode calls our tick has to make beyond it, and nothing else: per
    contact, what the friction model needs (the contact's position and normal, the point's
    velocity, the joint's feedback switched on, read back after the step and freed); per gyro and
    accelerometer its link's rotation (readings are in the sensor frame); per accelerometer its
    point's velocity before the step (the acceleration is a difference over the step)."""

    def __init__(self, world: OdeEngine) -> None:
        super().__init__(world)
        self.contact_joints: list[ode.ContactJoint] = []
        self.inertial_bodies = self.gyro_bodies + [body for body, _ in self.accel]

    def _near_geoms(self, _args: object, g1: ode.GeomObject, g2: ode.GeomObject) -> None:
        b1, b2 = g1.getBody(), g2.getBody()
        for contact in ode.collide(g1, g2):
            position = contact.getContactGeomParams()[0]
            if b1 is not None:
                b1.getPointVel(position)
            if b2 is not None:
                b2.getPointVel(position)
            contact.setMode(odeparams.CONTACT_APPROX1)
            contact.setMu(0.5)
            joint = ode.ContactJoint(self.world, self.group, contact)
            joint.attach(b1, b2)
            joint.setFeedback(True)
            self.contact_joints.append(joint)

    def tick(self) -> tuple:
        self.read_back()
        before = [body.getRelPointVel(point) for body, point in self.accel]
        state = super().tick()
        return state, before, [body.getRotation() for body in self.inertial_bodies]

    def read_back(self) -> None:
        """Last step's contact forces, then their feedback freed: before the joints are (pyode frees
        the buffer through the ODE joint, which must still exist)."""
        for joint in self.contact_joints:
            joint.getFeedback()
            joint.setFeedback(False)
        self.contact_joints = []


class FrictionLoop(BareLoop):
    """The bare loop with our contact generator (engines/ode/contacts.py, its friction model and
    all) in place of its one contact rule: the tick's floor once the friction model is given."""

    def __init__(self, world: OdeEngine) -> None:
        super().__init__(world)
        self.contacts = world.contacts

    def tick(self) -> tuple:
        self.contacts.collide()
        return self.drive_step_read()


def _time_block(tick, n: int) -> float:
    start = time.perf_counter()
    for _ in range(n):
        tick()
    return (time.perf_counter() - start) / n * 1e6


def run() -> dict[str, float]:
    ours_world, bare_world, floor_world, friction_world = _world(), _world(), _world(), _world()
    bare, floor, friction = BareLoop(bare_world), FloorLoop(floor_world), FrictionLoop(friction_world)

    def ours() -> None:
        ours_world.collide()
        ours_world.integrate()
        ours_world.read("robot")

    loops = {"tick_us": ours, "bare_tick_us": bare.tick, "floor_tick_us": floor.tick, "friction_tick_us": friction.tick}
    blocks: dict[str, list[float]] = {name: [] for name in loops}
    for tick in loops.values():
        _time_block(tick, 50)
    for _ in range(ROUNDS):
        for name, tick in loops.items():
            blocks[name].append(_time_block(tick, BLOCK))
    floor.read_back()
    upright = ours_world.read("robot").root_position[2]
    if abs(upright - 0.7235) > 0.01:
        raise RuntimeError(f"sample1 did not stand still in the benchmark (root z {upright:.4f})")
    # Adjacent blocks share the machine's load, so the ratios are taken per round of blocks.
    ours_us, bare_us, floor_us, friction_us = blocks.values()
    return {
        **{name: statistics.median(values) for name, values in blocks.items()},
        "ratio": _paired(ours_us, bare_us),
        "floor_ratio": _paired(floor_us, bare_us),
        "ratio_over_floor": _paired(ours_us, floor_us),
        "friction_ratio": _paired(friction_us, bare_us),
        "ratio_over_friction": _paired(ours_us, friction_us),
    }


def _paired(a: list[float], b: list[float]) -> float:
    return statistics.median(x / y for x, y in zip(a, b, strict=True))


if __name__ == "__main__":
    print(run())
