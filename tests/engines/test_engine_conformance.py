"""One physics suite for every engine, through the engine boundary (make_engine).

Each case runs on each engine by parameter. Where the engines' figures differ, the tolerance is
given per engine next to the case, with the reason.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from sim_helpers import (
    CLOSED_LINK,
    FLOOR,
    PENDULUM_URDF_TEMPLATE,
    PHYSICS_ENGINES,
    SAMPLE1,
    box_body,
    build,
    floor_body,
    folded_chain,
    loop_gap,
    model,
    pendulum_body,
    run,
    sensing_box_body,
)

from hrpsim.bodyinfo import Body, Sensor, Shape
from hrpsim.engines.base import Engine, JointCommand
from hrpsim.modelloader import load_body
from hrpsim.modelloader.urdf import load_urdf
from hrpsim.project import CollisionPair
from hrpsim.transforms import axis_angle_matrix

G = 9.8
ENGINES = PHYSICS_ENGINES

# the pendulum of sim_helpers.pendulum_body: 1 kg rod of 0.5 m hanging from its end
PENDULUM_PIVOT_INERTIA = 1.0 * 0.5**2 / 12 + 1.0 * 0.02**2 / 4 + 1.0 * 0.25**2


def zero_crossing_period(values: list[float], dt: float) -> float:
    ups = [i for i in range(1, len(values)) if values[i - 1] < 0.0 <= values[i]]
    return float(np.mean(np.diff(ups))) * dt


# --- motion ---


@pytest.mark.parametrize("engine", ENGINES)
def test_free_fall_follows_the_analytic_curve(engine: str, tmp_path: Path) -> None:
    world = build(engine, tmp_path, [(model("box", position=(0.0, 0.0, 10.0)), box_body())])
    for t in (0.25, 0.5, 1.0):
        run(world, t - world.time)
        state = world.read("box")
        # semi-implicit Euler at 1 ms is g t dt / 2 off the curve: 5 mm after 1 s on both engines
        assert state.root_position[2] == pytest.approx(10.0 - G * t * t / 2, abs=0.01)
        assert state.root_velocity[2] == pytest.approx(-G * t, abs=1e-6)


@pytest.mark.parametrize("engine", ENGINES)
def test_pendulum_from_a_model_file_has_the_small_angle_period(engine: str, tmp_path: Path) -> None:
    mass, length = 2.0, 0.6
    i_com = mass * length**2 / 12
    urdf = tmp_path / "pendulum.urdf"
    urdf.write_text(PENDULUM_URDF_TEMPLATE.format(half=length / 2, mass=mass, i=i_com))
    world = build(engine, tmp_path, [(model("pendulum", joints={"swing": 0.05}), load_urdf(urdf))])
    angles = []
    for _ in range(4000):
        world.step()
        angles.append(world.read("pendulum").q[0])
    d = length / 2
    expected = 2 * math.pi * math.sqrt((i_com + mass * d * d) / (mass * G * d))
    assert zero_crossing_period(angles, world.timestep) == pytest.approx(expected, rel=0.01)


@pytest.mark.parametrize("engine", ENGINES)
def test_reflected_rotor_inertia_slows_the_pendulum_as_joint_space_inertia(engine: str, tmp_path: Path) -> None:
    body = pendulum_body()
    body.links[1].rotor_inertia, body.links[1].gear_ratio = 1e-4, 50.0  # Jm = 0.25 kg m^2
    world = build(engine, tmp_path, [(model("pend", joints={"ROD": 0.05}), body)])
    angles = []
    for _ in range(6000):
        world.step()
        angles.append(world.read("pend").q[0])
    expected = 2 * math.pi * math.sqrt((PENDULUM_PIVOT_INERTIA + 0.25) / (1.0 * G * 0.25))
    assert zero_crossing_period(angles, world.timestep) == pytest.approx(expected, rel=0.01)


# --- contacts ---


def _slope(engine: str, tmp_path: Path, degrees: float, mu: float) -> Engine:
    tilt = [0.0, 1.0, 0.0, math.radians(degrees)]
    centre = axis_angle_matrix(tilt[:3], tilt[3]) @ np.array([0.0, 0.0, 0.1 + 1e-4])
    return build(
        engine,
        tmp_path,
        [
            (model("floor", static=True, rotation=tuple(tilt)), floor_body()),
            (model("box", position=tuple(centre), rotation=tuple(tilt)), box_body()),
        ],
        collisions=[CollisionPair("floor", "box", friction=mu)],
    )


# MuJoCo's contacts are soft: a box held by friction creeps (its friction constraint gives way
# a little under a steady load); ODE's do not. Creep allowed over one second, per engine.
CREEP = {"ode": 1e-3, "mujoco": 1e-3}


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("degrees", [20.0, 33.0])
def test_box_on_a_slope_sticks_below_atan_mu_and_slides_above(engine: str, tmp_path: Path, degrees: float) -> None:
    mu = 0.5  # atan(0.5) = 26.6 degrees
    world = _slope(engine, tmp_path, degrees, mu)
    run(world, 0.05)
    start = world.read("box").root_position.copy()
    run(world, 1.0)
    travelled = float(np.linalg.norm(world.read("box").root_position - start))
    theta = math.radians(degrees)
    if degrees < math.degrees(math.atan(mu)):
        assert travelled < CREEP[engine]
    else:
        expected = G * (math.sin(theta) - mu * math.cos(theta)) / 2  # a t^2 / 2 over one second
        assert travelled == pytest.approx(expected, rel=0.15)


# Rebound height over drop height, e^2 for a rigid impact. ODE's bounce is a velocity
# restitution at the contact and gives e^2 to 0.1 %; MuJoCo's is a damped spring contact
# (restitution sets its damping ratio) whose impact lasts several steps: 6.5 % under e^2.
REBOUND_TOLERANCE = {"ode": 0.02, "mujoco": 0.1}


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("restitution", [0.0, 0.8])
def test_restitution_sets_how_high_a_dropped_box_bounces(engine: str, tmp_path: Path, restitution: float) -> None:
    drop = 0.5
    world = build(
        engine,
        tmp_path,
        [(model("floor", static=True), floor_body()), (model("box", position=(0.0, 0.0, 0.1 + drop)), box_body())],
        collisions=[CollisionPair("floor", "box", friction=0.5, restitution=restitution)],
    )
    heights, falling, peak = [], True, 0.0
    for _ in range(1500):
        world.step()
        state = world.read("box")
        z, vz = state.root_position[2] - 0.1, state.root_velocity[2]
        if falling and vz > 0.0:
            falling = False
        elif not falling:
            peak = max(peak, z)
            if vz < 0.0:
                heights.append(peak)
                break
    rebound = heights[0] / drop if heights else 0.0
    if restitution == 0.0:
        assert rebound < 0.02
    else:
        assert rebound == pytest.approx(restitution**2, rel=REBOUND_TOLERANCE[engine])


# --- drives ---


@pytest.mark.parametrize("engine", ENGINES)
def test_torque_command_accelerates_a_joint_as_newton_says(engine: str, tmp_path: Path) -> None:
    world = build(engine, tmp_path, [(model("pend"), pendulum_body())], gravity=[0.0, 0.0, 0.0])
    world.apply("pend", JointCommand(torque=np.array([0.1])))
    run(world, 1.0)
    state = world.read("pend")
    assert state.dq[0] == pytest.approx(0.1 / PENDULUM_PIVOT_INERTIA, rel=0.01)
    assert state.tau[0] == 0.1
    assert world.drive_modes("pend") == ["torque"]


# How far from a 0.7 rad jump of q_ref the joint is after one step. ODE's motor constraint is
# softened by the world's CFM and ends 0.027 rad (4 %) short; MuJoCo's hold is an equality made
# nearly hard (impedance 0.9999) and ends within 1e-9 rad.
ONE_STEP_GAP = {"ode": 0.05, "mujoco": 1e-3}


@pytest.mark.parametrize("engine", ENGINES)
def test_high_gain_holds_its_initial_angle_and_reaches_a_target_in_one_step(engine: str, tmp_path: Path) -> None:
    world = build(engine, tmp_path, [(model("pend", drive="high_gain", joints={"ROD": 0.3}), pendulum_body())])
    run(world, 0.5)
    assert world.read("pend").q[0] == pytest.approx(0.3, abs=1e-4)
    world.apply("pend", JointCommand(q_ref=np.array([-0.4]), dq_ref=np.array([0.0])))
    world.step()
    assert world.read("pend").q[0] == pytest.approx(-0.4, abs=ONE_STEP_GAP[engine])
    run(world, 0.2)
    state = world.read("pend")
    assert state.q[0] == pytest.approx(-0.4, abs=1e-4)
    # Gravity pulls the rod (swung to +x) back with m g d sin(0.4) about +Y; the drive holds against it.
    assert state.tau[0] == pytest.approx(-1.0 * G * 0.25 * math.sin(0.4), rel=0.02)


@pytest.mark.parametrize("engine", ENGINES)
def test_velocity_drive_moves_its_joint_and_respects_its_force_limit(engine: str, tmp_path: Path) -> None:
    # The pendulum's torque limit is 50 N m: enough to lift the 1 kg rod (2.45 N m at most).
    world = build(engine, tmp_path, [(model("pend", drive="velocity"), pendulum_body())])
    world.apply("pend", JointCommand(dq_ref=np.array([1.0])))
    run(world, 0.5)
    state = world.read("pend")
    assert state.dq[0] == pytest.approx(1.0, abs=1e-3)
    assert state.q[0] == pytest.approx(0.5, abs=0.01)
    # With a 0.5 N m limit the drive cannot hold the rod up against gravity past ~12 degrees.
    weak = pendulum_body()
    weak.links[1].torque_upper, weak.links[1].torque_lower = 0.5, -0.5
    world = build(engine, tmp_path, [(model("pend", drive="velocity"), weak)])
    world.apply("pend", JointCommand(dq_ref=np.array([1.0])))
    run(world, 2.0)
    assert math.asin(0.5 / (1.0 * G * 0.25)) - 0.05 < world.read("pend").q[0] < 0.3


@pytest.mark.parametrize("engine", ENGINES)
def test_switching_into_high_gain_keeps_the_joint_where_it_is(engine: str, tmp_path: Path) -> None:
    world = build(engine, tmp_path, [(model("pend", joints={"ROD": 0.5}), pendulum_body())])
    run(world, 0.1)  # swinging down under gravity
    world.apply("pend", JointCommand(modes={"ROD": "high_gain"}))
    here = world.read("pend").q[0]
    run(world, 0.3)
    assert world.drive_modes("pend") == ["high_gain"]
    assert world.read("pend").q[0] == pytest.approx(here, abs=2e-3)


# --- sensors ---


@pytest.mark.parametrize("engine", ENGINES)
def test_box_at_rest_force_sensor_reads_its_weight_and_accelerometer_reads_plus_g(engine: str, tmp_path: Path) -> None:
    mass = 10.0
    world = build(
        engine,
        tmp_path,
        [
            (model("floor", static=True), floor_body()),
            (model("box", position=(0.0, 0.0, 0.1201)), sensing_box_body(mass=mass)),
        ],
        collisions=[CollisionPair("floor", "box", friction=0.8)],
    )
    run(world, 1.0)
    sensors = world.read("box").sensors
    assert sensors["FS"][:3] == pytest.approx([0.0, 0.0, mass * G], abs=0.01 * mass * G)
    assert np.abs(sensors["FS"][3:]).max() < 0.01
    assert sensors["ACC"] == pytest.approx([0.0, 0.0, G], abs=0.05)
    assert np.abs(sensors["GYRO"]).max() < 1e-3


@pytest.mark.parametrize("engine", ENGINES)
def test_accelerometer_reads_zero_in_free_fall(engine: str, tmp_path: Path) -> None:
    world = build(engine, tmp_path, [(model("box", position=(0.0, 0.0, 5.0)), sensing_box_body())])
    run(world, 0.2)
    assert world.read("box").sensors["ACC"] == pytest.approx([0.0, 0.0, 0.0], abs=1e-6)


def _turned_sensors_box() -> Body:
    """The sensing box with its gyro and accelerometer turned 90 degrees about X (sensor y = link z)."""
    body = sensing_box_body()
    turn = axis_angle_matrix([1.0, 0.0, 0.0], math.pi / 2)
    body.sensors = [
        Sensor("FS", "force", 0, 1, rotation=turn),
        Sensor("GYRO", "gyro", 0, 0, rotation=turn),
        Sensor("ACC", "accel", 0, 0, rotation=turn),
    ]
    return body


@pytest.mark.parametrize("engine", ENGINES)
def test_gyro_and_accelerometer_read_in_the_sensor_frame(engine: str, tmp_path: Path) -> None:
    world = build(
        engine,
        tmp_path,
        [
            (model("floor", static=True), floor_body()),
            (model("box", position=(0.0, 0.0, 0.1201)), _turned_sensors_box()),
        ],
        collisions=[CollisionPair("floor", "box", friction=0.8)],
    )
    run(world, 0.5)
    sensors = world.read("box").sensors
    # at rest: +g along the link's up axis, which is the sensor's +y; the sole's weight on the sensor too
    assert sensors["ACC"] == pytest.approx([0.0, G, 0.0], abs=0.05)
    assert sensors["FS"][1] == pytest.approx(10.0 * G, rel=0.01)
    # spinning about world z in free space: the gyro reads the rate along its +y
    spinning = build(
        engine, tmp_path, [(model("box", position=(0.0, 0.0, 5.0)), _turned_sensors_box())], gravity=[0.0, 0.0, 0.0]
    )
    spinning.set_link_data("box", root_velocity=[0.0, 0.0, 0.0, 0.0, 0.0, 2.0])
    run(spinning, 0.05)
    assert spinning.read("box").sensors["GYRO"] == pytest.approx([0.0, 2.0, 0.0], abs=1e-6)
    assert spinning.read("box").root_velocity[3:] == pytest.approx([0.0, 0.0, 2.0], abs=1e-6)


# --- closed loops and a robot standing ---


@pytest.mark.parametrize("engine", ENGINES)
def test_closed_link_sample_keeps_its_loop_closed_while_driven(engine: str, tmp_path: Path) -> None:
    body = load_body(CLOSED_LINK)
    assert body.extra_joints[0].type == "xy"
    world = build(engine, tmp_path, [(model("closed", drive="torque"), body)])
    names = body.joint_names
    world.apply("closed", JointCommand(dq_ref=np.array([1.5] + [0.0] * (len(names) - 1)), modes={names[0]: "velocity"}))
    gaps = []
    for _ in range(2000):
        world.step()
        gaps.append(loop_gap(world, "closed"))
    assert world.read("closed").q[0] == pytest.approx(3.0, abs=0.01)  # the crank turned
    assert max(gaps) < 1e-3
    # the loop guard's cheap read is the link states' positions, link for link
    np.testing.assert_array_equal(world.link_positions("closed"), world.link_states("closed").positions)


@pytest.mark.parametrize("engine", ENGINES)
def test_a_world_before_its_first_step_reports_no_effort_and_no_joint_force(engine: str, tmp_path: Path) -> None:
    """Nothing has acted yet: efforts and force sensors read zero, never what a buffer held before.
    Several fresh worlds, with memory churned between them, so a reading of stale memory shows."""
    for attempt in range(8):
        world = build(
            engine,
            tmp_path / str(attempt),
            [
                (model("floor", static=True, position=(0.0, 0.0, -0.1)), load_body(FLOOR)),
                (model("robot", position=(0.0, 0.0, 0.7235), drive="high_gain"), load_body(SAMPLE1)),
            ],
            timestep=0.002,
            collisions=[CollisionPair("floor", "robot", friction=0.5)],
        )
        state = world.read("robot")
        # (MuJoCo's initial forward pass may leave rounding residues: numerically zero)
        np.testing.assert_allclose(state.tau, 0.0, rtol=0, atol=1e-9, err_msg=f"world {attempt}")
        for name in ("lfsensor", "rfsensor"):
            np.testing.assert_allclose(state.sensors[name], 0.0, rtol=0, atol=1e-9, err_msg=f"{name}, world {attempt}")
        run(world, 0.01)
        assert np.all(np.isfinite(world.read("robot").tau)) and np.any(world.read("robot").tau != 0.0)
        world.release()
        _churn = [np.full(4096, np.inf) for _ in range(64)]  # freed memory full of infinities
        del _churn


@pytest.mark.parametrize("engine", ENGINES)
def test_sample1_holds_its_initial_pose_upright_on_its_feet(engine: str, tmp_path: Path) -> None:
    robot = load_body(SAMPLE1)
    world = build(
        engine,
        tmp_path,
        [
            (model("floor", static=True, position=(0.0, 0.0, -0.1)), load_body(FLOOR)),
            (model("robot", position=(0.0, 0.0, 0.7235), drive="high_gain"), robot),
        ],
        timestep=0.002,
        collisions=[CollisionPair("floor", "robot", friction=0.5)],
    )
    start = world.read("robot")
    run(world, 3.0)
    state = world.read("robot")
    assert np.allclose(state.q, start.q, atol=1e-3)
    assert np.linalg.norm(state.root_position - start.root_position) < 5e-3
    assert state.root_rotation[:, 2] @ np.array([0.0, 0.0, 1.0]) > 0.999  # upright
    feet = state.sensors["lfsensor"][2] + state.sensors["rfsensor"][2]
    below_sensors = sum(lk.mass for lk in robot.links if lk.name.endswith("ANKLE_R"))
    # the foot sensors carry the robot less its feet (both engines: to 1e-8 once still)
    assert feet == pytest.approx((robot.total_mass - below_sensors) * G, rel=0.005)
    accel = robot.sensors[[s.name for s in robot.sensors].index("gsensor")]
    chest = world.forward_kinematics("robot")[accel.link][1]
    assert chest @ accel.rotation @ state.sensors["gsensor"] == pytest.approx([0.0, 0.0, G], abs=0.05)


# A wedge 2 m long rising from z 0 at x = -1 to z 1 at x = +1 (its bounding box top is at z 1), as a mesh.
WEDGE_V = np.array([[-1, -1, 0], [1, -1, 0], [1, 1, 0], [-1, 1, 0], [1, -1, 1], [1, 1, 1]], float)
WEDGE_T = np.array([[0, 2, 1], [0, 3, 2], [0, 1, 4], [3, 5, 2], [1, 2, 5], [1, 5, 4], [0, 4, 5], [0, 5, 3]])


@pytest.mark.parametrize("engine", ENGINES)
def test_a_box_rests_on_the_slope_of_a_static_mesh(engine: str, tmp_path: Path) -> None:
    wedge = floor_body()
    wedge.links[0].shapes = [Shape("mesh", vertices=WEDGE_V, triangles=WEDGE_T)]
    theta = math.atan(0.5)
    lift = 0.1 / math.cos(theta)  # the box centre above the slope, straight up
    world = build(
        engine,
        tmp_path,
        [
            (model("wedge", static=True), wedge),
            (model("box", position=(0.0, 0.0, 0.5 + lift + 0.002), rotation=(0.0, 1.0, 0.0, -theta)), box_body()),
        ],
        collisions=[CollisionPair("wedge", "box", friction=2.0)],
    )
    run(world, 1.0)
    x, _, z = world.read("box").root_position
    assert z - (x + 1.0) / 2.0 == pytest.approx(lift, abs=3e-3)  # on the slope, not on the bounding box
    assert abs(x) < 0.01  # friction 2 holds it on a 27 degree slope


@pytest.mark.parametrize("engine", ENGINES)
def test_root_velocity_set_and_read_in_the_world_frame_on_a_turned_body(engine: str, tmp_path: Path) -> None:
    world = build(
        engine,
        tmp_path,
        [(model("box", position=(0.0, 0.0, 5.0), rotation=(1.0, 0.0, 0.0, math.pi / 2)), box_body())],
        gravity=[0.0, 0.0, 0.0],
    )
    velocity = [1.0, 0.5, 0.0, 0.0, 0.3, 1.0]
    world.set_link_data("box", root_velocity=velocity)
    assert world.read("box").root_velocity == pytest.approx(velocity, abs=1e-9)
    run(world, 0.1)
    state = world.read("box")
    assert state.root_velocity == pytest.approx(velocity, abs=1e-6)  # a symmetric box spins steadily
    assert state.root_position == pytest.approx([0.1, 0.05, 5.0], abs=1e-6)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("self_collision", [True, False])
def test_self_collision_pushes_overlapping_links_apart_only_when_asked(
    engine: str, tmp_path: Path, self_collision: bool
) -> None:
    pairs = (
        [CollisionPair("chain", "chain", self_collision=True)] if self_collision else [CollisionPair("chain", "other")]
    )
    # Plates wide along the hinge axis, so that the overlap is shallowest across them (a contact
    # pushing along the axis could not turn the joints).
    world = build(
        engine,
        tmp_path,
        [
            (model("chain", joints={"L1": 2.8, "L2": 2.8}), folded_chain(width=0.2)),
            (model("other", position=(5.0, 5.0, 5.0), static=True), box_body()),
        ],
        collisions=pairs,
        gravity=[0.0, 0.0, 0.0],
    )
    run(world, 0.02)
    moved = float(np.abs(world.read("chain").dq).max())
    if self_collision:
        assert moved > 0.01  # L2 overlaps L0: their contact pushes the joints open
    else:
        assert moved < 1e-9  # nothing acts on a chain in zero gravity; neighbours never collide


@pytest.mark.parametrize("engine", ENGINES)
def test_the_sample_walk_stays_upright_and_walks_forward(engine: str, tmp_path: Path) -> None:
    # The walk of examples/sample_walk.yaml to the end of its pattern (10.4 s), the controller run in
    # this process (hrpsim.Simulation); the whole run through processes is in test_controller_walk /
    # test_engine_walk.
    import hrpsim
    from hrpsim.project import load_project

    examples = Path(__file__).resolve().parents[2] / "examples"
    project = load_project(examples / "sample_walk.yaml")
    project.world.engine = engine
    walker = project.controllers[0]
    walker.in_process, walker.file = True, str(examples / "controllers" / "sample_walk.py")
    lowest = 1.0
    with hrpsim.Simulation(project) as sim:
        while sim.time < 10.4:
            sim.step()
            lowest = min(lowest, float(sim.state("robot").root_position[2]))
        state = sim.state("robot")
    assert lowest > 0.6  # standing height 0.67 m: never fell nor stumbled
    assert state.root_rotation[2, 2] > 0.99  # upright
    assert state.root_position[0] > 0.6  # the pattern walks about 0.9 m forward
