"""Closed loops with Choreonoid's hinge and fixed extra joints on both engines: a crank-rocker
four-bar (examples/models/four_bar.body) moves as its geometry says, a car steered through a tie
rod (examples/models/loop_car.body) turns its right wheel as the linkage says, a fixed extra joint
locks a linkage, and the loops stay closed (hrpsim.loop_gaps measures them as the run summary does)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from process_helpers import REPO, launch_summary
from sim_helpers import CLOSED_LINK, PHYSICS_ENGINES, box_body, build, floor_body, model, project

import hrpsim
from hrpsim.engines.base import JointCommand, make_engine
from hrpsim.loop_gaps import LoopWatch
from hrpsim.modelloader import load_body
from hrpsim.project import CollisionPair, ExtraJointConfig, load_project
from hrpsim.summary_report import format_summary

FOUR_BAR = REPO / "examples" / "models" / "four_bar.body"
LOOP_CAR = REPO / "examples" / "models" / "loop_car.body"
GROUND, CRANK, COUPLER, ROCKER = 0.4, 0.1, 0.35, 0.3  # the four-bar's lengths (m)
ROCKER_START = math.atan2(0.282387580213, -0.101278104947)  # the rocker's direction in the file's pose


class Loops:
    """Every extra joint of a robot, watched from the pose the engine starts in."""

    def __init__(self, world, robot: str) -> None:
        self.world, self.robot = world, robot
        self.body = world.body(robot)
        poses = world.forward_kinematics(robot)
        self.links = [(self.body.link_index(e.link1), self.body.link_index(e.link2)) for e in self.body.extra_joints]
        self.watches = [
            LoopWatch(e, poses[i1], poses[i2]) for e, (i1, i2) in zip(self.body.extra_joints, self.links, strict=True)
        ]

    def gaps(self) -> list[tuple[float, float]]:
        poses = self.world.forward_kinematics(self.robot)
        return [w.gap(poses[i1], poses[i2]) for w, (i1, i2) in zip(self.watches, self.links, strict=True)]


def rocker_angle(crank: float) -> float:
    """The rocker's joint angle for a crank angle, from the loop's closure (the file's branch).
    A joint about +y turns a direction in the x-z plane by -q; angles count from +x towards +z."""
    b = CRANK * np.array([math.cos(math.pi / 2 - crank), math.sin(math.pi / 2 - crank)])
    d = np.array([GROUND, 0.0])
    to_d = d - b
    dist = float(np.linalg.norm(to_d))
    along = (COUPLER**2 - ROCKER**2 + dist**2) / (2 * dist)
    across = math.sqrt(COUPLER**2 - along**2)
    u = to_d / dist
    c = b + along * u + across * np.array([-u[1], u[0]])  # the upper branch, as drawn
    return ROCKER_START - math.atan2(c[1] - d[1], c[0] - d[0])


@pytest.mark.parametrize("engine", PHYSICS_ENGINES)
def test_a_four_bar_closed_by_a_hinge_moves_as_its_geometry_says(engine: str, tmp_path: Path) -> None:
    body = load_body(FOUR_BAR)
    assert [(e.type, e.link1, e.link2) for e in body.extra_joints] == [("hinge", "COUPLER", "ROCKER")]
    world = build(engine, tmp_path, [(model("bar", position=(0.0, 0.0, 0.5), drive="torque"), body)])
    loops = Loops(world, "bar")
    world.apply("bar", JointCommand(dq_ref=np.array([4.0, 0.0, 0.0]), modes={"CRANK": "velocity"}))
    worst = 0.0
    for _ in range(1500):  # 1.5 s: the crank turns almost a whole turn, the rocker swings under gravity
        world.step()
        worst = max(worst, *(gap for gap, _ in loops.gaps()))
    q = world.read("bar").q
    assert q[0] == pytest.approx(6.0, abs=0.05)
    assert q[2] == pytest.approx(rocker_angle(q[0]), abs=2e-3)  # closure, not just a small gap
    assert worst < 1e-4


def ackermann_right(left: float) -> float:
    """The right knuckle's angle the tie rod gives for the left one's (about z)."""
    pivot_l, pivot_r = np.array([0.22, 0.2]), np.array([0.22, -0.2])
    arm_l, arm_r = np.array([-0.07, -0.03]), np.array([-0.07, 0.03])

    def turned(v: np.ndarray, angle: float) -> np.ndarray:
        c, s = math.cos(angle), math.sin(angle)
        return np.array([c * v[0] - s * v[1], s * v[0] + c * v[1]])

    end_l = pivot_l + turned(arm_l, left)
    angles = np.linspace(-0.8, 0.8, 160001)
    lengths = [np.linalg.norm(pivot_r + turned(arm_r, a) - end_l) for a in angles]
    return float(angles[int(np.argmin(np.abs(np.array(lengths) - 0.34)))])


@pytest.mark.parametrize("engine", PHYSICS_ENGINES)
def test_a_car_steered_through_a_closed_linkage_turns_both_wheels(engine: str, tmp_path: Path) -> None:
    car = load_body(LOOP_CAR)
    world = build(
        engine,
        tmp_path,
        [
            (model("floor", static=True), floor_body()),
            (model("car", position=(0.0, 0.0, 0.08), drive="torque"), car),
        ],
        collisions=[CollisionPair("floor", "car", friction=1.0)],
    )
    loops = Loops(world, "car")
    names = car.joint_names
    assert names[:4] == ["WHEEL_RL", "WHEEL_RR", "STEER_L", "STEER_R"]
    speeds, targets = np.zeros(len(names)), np.zeros(len(names))
    speeds[:2] = 8.0
    modes = {"WHEEL_RL": "velocity", "WHEEL_RR": "velocity", "STEER_L": "high_gain"}
    worst = 0.0
    for tick in range(2000):
        targets[2] = 0.3 * min(tick / 500, 1.0)  # steered over half a second
        world.apply("car", JointCommand(q_ref=targets, dq_ref=speeds, modes=modes))
        world.step()
        worst = max(worst, *(gap for gap, _ in loops.gaps()))
    state = world.read("car")
    left, right = state.q[2], state.q[3]
    assert left == pytest.approx(0.3, abs=1e-3)
    assert right == pytest.approx(ackermann_right(left), abs=5e-3)  # the linkage turns the right wheel ...
    assert right < left - 0.02  # ... less than the inner (left) one, as a trapezoid does
    assert state.root_position[0] > 0.8  # it drove (0.64 m/s on the rear wheels)
    heading = math.atan2(state.root_rotation[1, 0], state.root_rotation[0, 0])
    assert heading > 0.3  # and turned left
    assert worst < 1e-4


@pytest.mark.parametrize("engine", PHYSICS_ENGINES)
def test_a_fixed_extra_joint_locks_the_linkage(engine: str, tmp_path: Path) -> None:
    body = load_body(FOUR_BAR)
    body.extra_joints[0].type = "fixed"  # coupler welded to rocker: the four-bar is one rigid frame
    world = build(engine, tmp_path, [(model("bar", position=(0.0, 0.0, 0.5), drive="torque"), body)])
    loops = Loops(world, "bar")
    start = world.read("bar").q.copy()
    world.apply("bar", JointCommand(torque=np.array([0.5, 0.0, 0.0])))  # pushed on top of gravity
    worst = (0.0, 0.0)
    for _ in range(1000):
        world.step()
        ((gap, angle),) = loops.gaps()
        worst = (max(worst[0], gap), max(worst[1], angle))
    assert np.abs(world.read("bar").q - start).max() < 2e-3  # it does not move
    assert worst[0] < 1e-4 and worst[1] < 2e-3


def hung_box(engine: str, tmp_path: Path, kind: str):
    """A free box hung from a static anchor by the project's own extra joint of ``kind`` about y,
    0.3 m above the box's centre; the box is twisted about x."""
    anchor = floor_body(0.2)
    proj, bodies = project(
        tmp_path,
        [
            (model("anchor", static=True, position=(0.0, 0.0, 1.0)), anchor),
            (model("box", position=(0.0, 0.0, 0.7)), box_body(2.0)),
        ],
    )
    proj.extra_joints = [
        ExtraJointConfig("pin", "anchor", "BASE", "box", "BOX", kind, [0.0, 1.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.3])
    ]
    world = make_engine(proj, bodies)
    (joint,) = proj.extra_joints
    watch = LoopWatch(joint.as_extra_joint(), world.forward_kinematics("anchor")[0], world.forward_kinematics("box")[0])
    worst = (0.0, 0.0)
    for _ in range(500):
        world.set_external_force("box", "BOX", [0.0, 0.0, 0.0], [4.0, 0.0, 0.0])
        world.step()
        gap, angle = watch.gap(world.forward_kinematics("anchor")[0], world.forward_kinematics("box")[0])
        worst = (max(worst[0], gap), max(worst[1], angle))
    return world, worst


@pytest.mark.parametrize("engine", PHYSICS_ENGINES)
def test_a_hinge_extra_joint_holds_its_axis_against_a_twist(engine: str, tmp_path: Path) -> None:
    world, (gap, angle) = hung_box(engine, tmp_path, "hinge")
    assert gap < 1e-4 and angle < 5e-3
    assert world.read("box").root_rotation[2, 2] > 0.999  # it hangs straight
    ball, _ = hung_box(engine, tmp_path / "ball", "ball")
    assert ball.read("box").root_rotation[2, 2] < 0.9  # a ball joint lets the same twist turn it


@pytest.mark.parametrize("engine", PHYSICS_ENGINES)
def test_openhrps_closed_link_sample_closed_by_a_hinge_instead(engine: str, tmp_path: Path) -> None:
    path = tmp_path / "closed.wrl"
    path.write_text(CLOSED_LINK.read_text().replace('jointType "xy"', 'jointType "hinge"'))
    body = load_body(path)
    world = build(engine, tmp_path, [(model("closed", drive="torque"), body)])
    loops = Loops(world, "closed")
    names = body.joint_names
    world.apply("closed", JointCommand(dq_ref=np.array([1.5] + [0.0] * (len(names) - 1)), modes={names[0]: "velocity"}))
    worst = 0.0
    for _ in range(1000):
        world.step()
        worst = max(worst, *(gap for gap, _ in loops.gaps()))
    assert world.read("closed").q[0] == pytest.approx(1.5, abs=0.01)  # the crank turned
    assert worst < 1e-4


@pytest.mark.parametrize("engine", PHYSICS_ENGINES)
def test_the_run_summary_reports_the_largest_loop_gap(engine: str) -> None:
    project = load_project(REPO / "examples" / "four_bar.yaml")
    project.world.engine = engine
    with hrpsim.Simulation(project) as sim:
        summary = sim.run(until=1.0)
        assert summary["error"] is None
        assert sim.state("bar").q[0] == pytest.approx(6.0, abs=0.3)  # the in-process controller turned it
    loops = summary["loops"]
    assert set(loops["joints"]) == {"bar/C"}
    assert 0.0 < loops["gap_max"] == loops["joints"]["bar/C"]["gap_max"] < 1e-4
    assert "closed loops: largest gap" in format_summary(summary)


def test_a_launched_run_reports_its_loops(tmp_path: Path) -> None:
    """The same example through hrpsim launch: nameserver, modelloader and simulator processes."""
    summary = launch_summary(REPO / "examples" / "four_bar.yaml", tmp_path, "--until", "0.5").summary
    assert summary["error"] is None
    assert 0.0 < summary["loops"]["joints"]["bar/C"]["gap_max"] < 1e-4


@pytest.mark.parametrize("engine", PHYSICS_ENGINES)
def test_a_restored_snapshot_restores_the_loop_figures(engine: str) -> None:
    project = load_project(REPO / "examples" / "four_bar.yaml")
    project.world.engine = engine
    with hrpsim.Simulation(project, record=False) as sim:
        sim.step(300)
        snapshot = sim.snapshot()
        sim.step(300)
        first, q = sim.summary()["loops"], sim.state("bar").q.copy()
        sim.restore(snapshot)
        assert sim.summary()["loops"]["gap_max"] <= first["gap_max"]
        sim.step(300)
        assert sim.summary()["loops"] == first
        np.testing.assert_array_equal(sim.state("bar").q, q)
