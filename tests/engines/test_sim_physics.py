"""The simulator's world against physics: analytic motion, friction, sensors, drives, safety."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from sim_helpers import PENDULUM_URDF_TEMPLATE, box_body, floor_body, model, pendulum_body, project, sensing_box_body

from hrpsim.engines.base import JointCommand
from hrpsim.engines.ode.engine import OdeEngine
from hrpsim.errors import RequestError, SimulationError
from hrpsim.modelloader.urdf import load_urdf
from hrpsim.project import CollisionPair
from hrpsim.transforms import axis_angle_matrix

G = 9.8


def run(world: OdeEngine, seconds: float) -> None:
    for _ in range(round(seconds / world.timestep)):
        world.step()


def test_free_fall_follows_the_analytic_curve(tmp_path: Path) -> None:
    proj, bodies = project(tmp_path, [(model("box", position=(0.0, 0.0, 10.0)), box_body())])
    world = OdeEngine(proj, bodies)
    for t in (0.25, 0.5, 1.0):
        run(world, t - world.time)
        state = world.read("box")
        assert state.root_position[2] == pytest.approx(10.0 - G * t * t / 2, abs=0.01)
        assert state.root_velocity[2] == pytest.approx(-G * t, abs=1e-6)


def _zero_crossing_period(values: list[float], dt: float) -> float:
    ups = [i for i in range(1, len(values)) if values[i - 1] < 0.0 <= values[i]]
    return float(np.mean(np.diff(ups))) * dt


def test_pendulum_from_a_model_file_has_the_small_angle_period(tmp_path: Path) -> None:
    mass, length = 2.0, 0.6
    i_com = mass * length**2 / 12
    urdf = tmp_path / "pendulum.urdf"
    urdf.write_text(PENDULUM_URDF_TEMPLATE.format(half=length / 2, mass=mass, i=i_com))
    body = load_urdf(urdf)
    proj, bodies = project(tmp_path, [(model("pendulum", joints={"swing": 0.05}), body)])
    world = OdeEngine(proj, bodies)
    angles = []
    for _ in range(4000):
        world.step()
        angles.append(world.read("pendulum").q[0])
    d = length / 2
    expected = 2 * math.pi * math.sqrt((i_com + mass * d * d) / (mass * G * d))
    assert _zero_crossing_period(angles, world.timestep) == pytest.approx(expected, rel=0.01)


def _slope_world(tmp_path: Path, degrees: float, mu: float) -> OdeEngine:
    tilt = [0.0, 1.0, 0.0, math.radians(degrees)]
    rot = axis_angle_matrix(tilt[:3], tilt[3])
    centre = rot @ np.array([0.0, 0.0, 0.1 + 1e-4])
    proj, bodies = project(
        tmp_path,
        [
            (model("floor", static=True, rotation=tuple(tilt)), floor_body()),
            (model("box", position=tuple(centre), rotation=tuple(tilt)), box_body()),
        ],
        collisions=[CollisionPair("floor", "box", friction=mu)],
    )
    return OdeEngine(proj, bodies)


@pytest.mark.parametrize("degrees", [20.0, 33.0])
def test_box_on_a_slope_sticks_below_atan_mu_and_slides_above(tmp_path: Path, degrees: float) -> None:
    mu = 0.5  # atan(0.5) = 26.6 degrees
    world = _slope_world(tmp_path, degrees, mu)
    run(world, 0.05)
    start = world.read("box").root_position.copy()
    run(world, 1.0)
    travelled = float(np.linalg.norm(world.read("box").root_position - start))
    theta = math.radians(degrees)
    if degrees < math.degrees(math.atan(mu)):
        assert travelled < 1e-3
    else:
        expected = G * (math.sin(theta) - mu * math.cos(theta)) / 2  # a t^2 / 2 over one second
        assert travelled == pytest.approx(expected, rel=0.15)


def test_box_at_rest_force_sensor_reads_its_weight_and_accelerometer_reads_plus_g(tmp_path: Path) -> None:
    mass = 10.0
    proj, bodies = project(
        tmp_path,
        [
            (model("floor", static=True), floor_body()),
            (model("box", position=(0.0, 0.0, 0.1201)), sensing_box_body(mass=mass)),
        ],
        collisions=[CollisionPair("floor", "box", friction=0.8)],
    )
    world = OdeEngine(proj, bodies)
    run(world, 1.0)
    sensors = world.read("box").sensors
    assert sensors["FS"][:3] == pytest.approx([0.0, 0.0, mass * G], abs=0.01 * mass * G)
    assert np.abs(sensors["FS"][3:]).max() < 0.01
    assert sensors["ACC"] == pytest.approx([0.0, 0.0, G], abs=0.05)
    assert np.abs(sensors["GYRO"]).max() < 1e-3


def test_accelerometer_reads_zero_in_free_fall(tmp_path: Path) -> None:
    proj, bodies = project(tmp_path, [(model("box", position=(0.0, 0.0, 5.0)), sensing_box_body())])
    world = OdeEngine(proj, bodies)
    run(world, 0.2)
    assert world.read("box").sensors["ACC"] == pytest.approx([0.0, 0.0, 0.0], abs=1e-6)


def test_velocity_motor_moves_its_joint_and_respects_its_force_limit(tmp_path: Path) -> None:
    # The pendulum's torque limit is 50 N m: enough to lift the 1 kg rod (2.45 N m at most).
    proj, bodies = project(tmp_path, [(model("pend", drive="velocity"), pendulum_body())])
    world = OdeEngine(proj, bodies)
    world.apply("pend", JointCommand(dq_ref=[1.0]))
    run(world, 0.5)
    state = world.read("pend")
    assert state.dq[0] == pytest.approx(1.0, abs=1e-3)
    assert state.q[0] == pytest.approx(0.5, abs=0.01)
    # With a 0.5 N m limit the motor cannot hold the rod up against gravity past ~12 degrees.
    weak = pendulum_body()
    weak.links[1].torque_upper, weak.links[1].torque_lower = 0.5, -0.5
    proj, bodies = project(tmp_path, [(model("pend", drive="velocity"), weak)])
    world = OdeEngine(proj, bodies)
    world.apply("pend", JointCommand(dq_ref=[1.0]))
    run(world, 2.0)
    assert math.asin(0.5 / (1.0 * G * 0.25)) - 0.05 < world.read("pend").q[0] < 0.3


def test_high_gain_holds_its_initial_angle_and_tracks_a_target(tmp_path: Path) -> None:
    proj, bodies = project(tmp_path, [(model("pend", drive="high_gain", joints={"ROD": 0.3}), pendulum_body())])
    world = OdeEngine(proj, bodies)
    run(world, 0.5)
    assert world.read("pend").q[0] == pytest.approx(0.3, abs=1e-4)
    world.apply("pend", JointCommand(q_ref=[-0.4], dq_ref=[0.0]))
    run(world, 0.2)
    state = world.read("pend")
    assert state.q[0] == pytest.approx(-0.4, abs=1e-4)
    # Gravity pulls the rod (swung to +x) back with m g d sin(0.4) about +Y; the motor holds against it.
    assert state.tau[0] == pytest.approx(-1.0 * G * 0.25 * math.sin(0.4), rel=0.02)


def test_reflected_rotor_inertia_slows_the_pendulum_as_joint_space_inertia(tmp_path: Path) -> None:
    body = pendulum_body()
    body.links[1].rotor_inertia, body.links[1].gear_ratio = 1e-4, 50.0  # Jm = 0.25 kg m^2
    proj, bodies = project(tmp_path, [(model("pend", joints={"ROD": 0.05}), body)])
    world = OdeEngine(proj, bodies)
    angles = []
    for _ in range(6000):
        world.step()
        angles.append(world.read("pend").q[0])
    i_pivot = 1.0 * 0.5**2 / 12 + 1.0 * 0.02**2 / 4 + 1.0 * 0.25**2  # 1 kg rod, 0.5 m, about its end
    expected = 2 * math.pi * math.sqrt((i_pivot + 0.25) / (1.0 * G * 0.25))
    assert _zero_crossing_period(angles, world.timestep) == pytest.approx(expected, rel=0.01)


def test_torque_command_accelerates_a_joint_as_newton_says(tmp_path: Path) -> None:
    proj, bodies = project(tmp_path, [(model("pend"), pendulum_body())], gravity=[0.0, 0.0, 0.0])
    world = OdeEngine(proj, bodies)
    world.apply("pend", JointCommand(torque=[0.1]))
    run(world, 1.0)
    i_pivot = 1.0 * 0.5**2 / 12 + 1.0 * 0.02**2 / 4 + 1.0 * 0.25**2
    assert world.read("pend").dq[0] == pytest.approx(0.1 / i_pivot, rel=0.01)
    assert world.read("pend").tau[0] == 0.1


def test_bad_commands_are_refused_naming_the_field_and_joint(tmp_path: Path) -> None:
    proj, bodies = project(tmp_path, [(model("pend"), pendulum_body())])
    world = OdeEngine(proj, bodies)
    with pytest.raises(RequestError, match="torque has 2 values, the robot has 1 joints"):
        world.apply("pend", JointCommand(torque=[0.0, 1.0]))
    with pytest.raises(RequestError, match=r"q_ref\[0\] \(joint 'ROD'\) is not finite"):
        world.apply("pend", JointCommand(q_ref=[float("nan")]))
    with pytest.raises(RequestError, match="no joint 'ELBOW'"):
        world.apply("pend", JointCommand(modes={"ELBOW": "torque"}))
    with pytest.raises(RequestError, match="unknown drive mode 'stiff'"):
        world.apply("pend", JointCommand(modes={"ROD": "stiff"}))
    world.step()  # the world is still fine


def test_exploding_state_stops_with_an_error_naming_model_and_link(tmp_path: Path) -> None:
    proj, bodies = project(
        tmp_path, [(model("floor", static=True), floor_body()), (model("box", position=(0.0, 0.0, 0.2)), box_body())]
    )
    world = OdeEngine(proj, bodies)
    run(world, 0.01)
    before = world.read("box")
    world.set_external_force("box", "BOX", [0.0, 0.0, 1e12])
    with pytest.raises(SimulationError, match="model 'box' link 'BOX'"):
        run(world, 0.01)
    with pytest.raises(SimulationError):
        world.step()
    assert np.all(np.isfinite(world.read("box").root_position))
    assert world.read("box").tick >= before.tick
    world.reset()
    run(world, 0.01)
    assert world.failed is None


def test_released_worlds_in_reference_cycles_are_collected_without_crashing(tmp_path: Path) -> None:
    # ODE objects freed by the cycle collector in the wrong order crash the process, so this
    # runs in a child process: a OdeEngine held by a cycle (as a service's bound methods make one),
    # released and then collected, many times over.
    import subprocess
    import sys

    script = (
        "import gc, sys\n"
        f"sys.path.insert(0, {str(Path(__file__).resolve().parents[1])!r})\n"
        "from pathlib import Path\n"
        "from sim_helpers import box_body, floor_body, model, project\n"
        "from hrpsim.engines.ode.engine import OdeEngine\n"
        "class Holder:\n"
        "    def __init__(self, world):\n"
        "        self.world, self.me = world, self\n"
        "for _ in range(30):\n"
        "    proj, bodies = project(Path('.'), [(model('floor', static=True), floor_body()),\n"
        "                                      (model('box', position=(0, 0, 0.2)), box_body())])\n"
        "    holder = Holder(OdeEngine(proj, bodies))\n"
        "    for _ in range(20):\n"
        "        holder.world.step()\n"
        "    holder.world.reset()\n"
        "    holder.world.step()\n"
        "    holder.world.contacts.me = holder.world.contacts  # a cycle through the contact joints too\n"
        "    holder.world.release()\n"
        "    del holder\n"
        "    gc.collect()\n"
        "print('collected')\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert result.returncode == 0 and "collected" in result.stdout, result.stderr[-2000:]


def test_project_naming_unknown_joints_is_a_config_error_naming_model_and_joint(tmp_path: Path) -> None:
    from hrpsim.errors import ConfigError

    proj, bodies = project(tmp_path, [(model("pend", joints={"KNEE": 0.1}), pendulum_body())])
    with pytest.raises(ConfigError, match=r"model 'pend'.*'KNEE'"):
        OdeEngine(proj, bodies)
    proj, bodies = project(tmp_path, [(model("pend", drive={"ELBOW": "torque"}), pendulum_body())])
    with pytest.raises(ConfigError, match=r"model 'pend': drive names unknown joint.*ELBOW"):
        OdeEngine(proj, bodies)


def test_far_away_positions_are_refused_before_ode_sees_them(tmp_path: Path) -> None:
    from hrpsim.errors import ConfigError

    proj, bodies = project(tmp_path, [(model("floor", static=True, position=(1e20, 0.0, 0.0)), floor_body())])
    with pytest.raises(ConfigError, match=r"model 'floor': position .* beyond"):
        OdeEngine(proj, bodies)
    proj, bodies = project(tmp_path, [(model("box", position=(0.0, 0.0, 1.0)), box_body())])
    world = OdeEngine(proj, bodies)
    with pytest.raises(RequestError, match=r"box\.root_position: .* beyond"):
        world.set_link_data("box", root_position=[1e20, 0.0, 0.0])
    # Just inside the distance bound and climbing below the speed bound: the distance bound stops it.
    world.set_link_data("box", root_position=[0.0, 0.0, 999_999.9], root_velocity=[0.0, 0.0, 999.0, 0, 0, 0])
    with pytest.raises(SimulationError, match="model 'box' link 'BOX' has a non-finite or exploding state"):
        for _ in range(10):
            world.step()


def test_quickstep_solver_when_the_project_asks_for_it(tmp_path: Path) -> None:
    proj, bodies = project(
        tmp_path,
        [(model("floor", static=True), floor_body()), (model("box", position=(0.0, 0.0, 0.5)), box_body())],
        solver="quickstep",
        quickstep_iterations=30,
    )
    world = OdeEngine(proj, bodies)
    run(world, 1.0)
    state = world.read("box")
    assert state.root_position[2] == pytest.approx(0.1, abs=3e-3)  # landed and resting
    assert np.abs(state.root_velocity).max() < 1e-2
