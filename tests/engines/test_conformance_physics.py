"""The conformance suite's second half: physics cases once run on ODE only, now on every physics
engine through the engine boundary (the first half is tests/test_engine_conformance.py).

Each tolerance is stated beside its case with what it allows for. A case an engine cannot do yet
is marked as such with the reason docs/mujoco.md gives ("What it refuses at load"); the mark is
strict, so the case fails the day the engine starts doing it and the mark must go.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from sim_helpers import (
    PHYSICS_ENGINES,
    box_body,
    build,
    crawler_body,
    floor_body,
    four_bar_body,
    loop_gap,
    model,
    pendulum_body,
    run,
)

from hrpsim.bodyinfo import Body
from hrpsim.engines.base import Engine, JointCommand
from hrpsim.errors import ConfigError, RequestError, SimulationError
from hrpsim.modelloader import load_body
from hrpsim.project import CollisionPair

G = 9.8
# the pendulum of sim_helpers.pendulum_body: 1 kg rod of 0.5 m hanging from its end
PENDULUM_PIVOT_INERTIA = 1.0 * 0.5**2 / 12 + 1.0 * 0.02**2 / 4 + 1.0 * 0.25**2
WAM = "openrave/robots/barrett-wam-sensors.zae"  # a hand whose finger joints mimic their masters
MASTERS = {"JF1": 0.9, "JF2": 0.6, "JF3": 1.2, "JF4": 1.5}


def cannot(engine: str, reason: str) -> pytest.MarkDecorator:
    """An engine refuses the case at load (a ConfigError), for the reason docs/mujoco.md gives."""
    return pytest.mark.xfail(raises=ConfigError, strict=True, reason=f"{engine}: {reason} (docs/mujoco.md)")


def engines(**refused: str) -> list:
    """Every physics engine, those that refuse the case marked with their reason."""
    return [pytest.param(e, marks=cannot(e, refused[e])) if e in refused else e for e in PHYSICS_ENGINES]


# --- what an engine refuses, and how it fails ---


@pytest.mark.parametrize("engine", [*PHYSICS_ENGINES, "kinematic"])
def test_bad_commands_are_refused_naming_the_field_and_joint(engine: str, tmp_path: Path) -> None:
    world = build(engine, tmp_path, [(model("pend"), pendulum_body())])
    with pytest.raises(RequestError, match="torque has 2 values, the robot has 1 joints"):
        world.apply("pend", JointCommand(torque=[0.0, 1.0]))
    with pytest.raises(RequestError, match=r"q_ref\[0\] \(joint 'ROD'\) is not finite"):
        world.apply("pend", JointCommand(q_ref=[float("nan")]))
    with pytest.raises(RequestError, match="no joint 'ELBOW'"):
        world.apply("pend", JointCommand(modes={"ELBOW": "torque"}))
    with pytest.raises(RequestError, match="unknown drive mode 'stiff'"):
        world.apply("pend", JointCommand(modes={"ROD": "stiff"}))
    with pytest.raises(RequestError, match="'modes' must be a map"):
        world.apply("pend", JointCommand(modes=["torque"]))  # type: ignore[arg-type]
    modes = world.drive_modes("pend")
    world.step()  # nothing half-applied: the world steps on with the modes it had
    assert world.drive_modes("pend") == modes


@pytest.mark.parametrize("engine", PHYSICS_ENGINES)
def test_an_exploding_state_stops_the_world_naming_model_and_link_until_reset(engine: str, tmp_path: Path) -> None:
    world = build(
        engine,
        tmp_path,
        [(model("floor", static=True), floor_body()), (model("box", position=(0.0, 0.0, 0.2)), box_body())],
    )
    run(world, 0.01)
    before = world.read("box")
    world.set_external_force("box", "BOX", [0.0, 0.0, 1e12])  # 1e11 g on a 10 kg box
    with pytest.raises(SimulationError, match="model 'box' link 'BOX' has a non-finite or exploding state"):
        run(world, 0.01)
    with pytest.raises(SimulationError, match="simulation stopped at"):
        world.step()
    kept = world.read("box")  # the last state read before the failure, still finite
    assert np.all(np.isfinite(kept.root_position)) and kept.tick >= before.tick
    world.reset()
    run(world, 0.01)
    assert world.failed is None and world.tick == 10


@pytest.mark.parametrize("engine", PHYSICS_ENGINES)
def test_a_state_beyond_the_distance_bound_stops_the_world(engine: str, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"model 'floor': position .* beyond"):
        build(engine, tmp_path, [(model("floor", static=True, position=(1e20, 0.0, 0.0)), floor_body())])
    world = build(engine, tmp_path, [(model("box", position=(0.0, 0.0, 1.0)), box_body())])
    with pytest.raises(RequestError, match=r"box\.root_position: .* beyond"):
        world.set_link_data("box", root_position=[1e20, 0.0, 0.0])
    # Just inside the distance bound and climbing below the speed bound: the distance bound stops it.
    world.set_link_data("box", root_position=[0.0, 0.0, 999_999.9], root_velocity=[0.0, 0.0, 999.0, 0, 0, 0])
    with pytest.raises(SimulationError, match="model 'box' link 'BOX' has a non-finite or exploding state"):
        run(world, 0.01)


@pytest.mark.parametrize("engine", PHYSICS_ENGINES)
def test_a_project_naming_unknown_joints_is_refused_naming_model_and_joint(engine: str, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"model 'pend'.*KNEE"):
        build(engine, tmp_path, [(model("pend", joints={"KNEE": 0.1}), pendulum_body())])
    with pytest.raises(ConfigError, match=r"model 'pend': drive names unknown joint.*ELBOW"):
        build(engine, tmp_path, [(model("pend", drive={"ELBOW": "torque"}), pendulum_body())])


# --- contacts and joints ---


# How far a box sliding at 2 m/s goes before friction stops it, against v^2 / (2 mu g) = 0.41 m at
# mu 0.5: ODE's friction is a box (Coulomb per axis), so a slide along x loses exactly mu N; MuJoCo's
# pyramidal cone and soft contacts give a little less friction while sliding. Allowed: 5 % each.
SLIDE = {"ode": 0.05, "mujoco": 0.05}


@pytest.mark.parametrize("engine", PHYSICS_ENGINES)
def test_a_sliding_box_stops_where_its_friction_says(engine: str, tmp_path: Path) -> None:
    world = build(
        engine,
        tmp_path,
        [(model("floor", static=True), floor_body()), (model("box", position=(0.0, 0.0, 0.1)), box_body())],
        collisions=[CollisionPair("floor", "box", friction=0.5)],
    )
    run(world, 0.02)  # settle onto the floor
    world.set_link_data("box", root_velocity=[2.0, 0.0, 0.0, 0.0, 0.0, 0.0])
    start = world.read("box").root_position[0]
    run(world, 1.0)
    travelled = world.read("box").root_position[0] - start
    assert travelled == pytest.approx(2.0**2 / (2 * 0.5 * G), rel=SLIDE[engine])
    assert abs(world.read("box").root_velocity[0]) < 1e-2  # stopped


@pytest.mark.parametrize(
    "engine", engines(mujoco="one friction coefficient per contact: sliding_friction cannot differ from friction")
)
def test_a_separate_sliding_friction_sets_how_far_a_sliding_box_goes(engine: str, tmp_path: Path) -> None:
    world = build(
        engine,
        tmp_path,
        [(model("floor", static=True), floor_body()), (model("box", position=(0.0, 0.0, 0.1)), box_body())],
        collisions=[CollisionPair("floor", "box", friction=0.5, sliding_friction=0.3)],
    )
    run(world, 0.02)
    world.set_link_data("box", root_velocity=[2.0, 0.0, 0.0, 0.0, 0.0, 0.0])
    start = world.read("box").root_position[0]
    run(world, 1.0)
    assert world.read("box").root_position[0] - start == pytest.approx(2.0**2 / (2 * 0.3 * G), rel=SLIDE[engine])


# A torque of 1 N m on the free pendulum (no gravity) for 1 s: without stops it turns a / 2 t^2 =
# 1.81 rad, past ODE's +-pi reading, so the value must not wrap. With stops at +-0.2 rad it rests on
# the upper one: ODE's stop is hard (within its ERP's correction, 1 mrad); MuJoCo's limit is a soft
# constraint that gives under the steady torque (a few mrad). Allowed: 0.01 rad on both.
LIMIT_OVERSHOOT = 0.01


@pytest.mark.parametrize("engine", PHYSICS_ENGINES)
@pytest.mark.parametrize("limits", [True, False])
def test_joint_limits_stop_a_driven_joint_when_the_world_asks(engine: str, tmp_path: Path, limits: bool) -> None:
    body = pendulum_body()
    body.links[1].q_lower, body.links[1].q_upper = -0.2, 0.2
    world = build(engine, tmp_path, [(model("pend"), body)], gravity=[0.0, 0.0, 0.0], joint_limits=limits)
    world.apply("pend", JointCommand(torque=[1.0]))
    run(world, 1.0)
    q = world.read("pend").q[0]
    if limits:
        assert q == pytest.approx(0.2, abs=LIMIT_OVERSHOOT)
    else:
        # semi-implicit Euler at 1 ms: 0.1 % past the curve after 1000 steps; 2 % allowed
        assert q == pytest.approx(0.5 * 1.0 / PENDULUM_PIVOT_INERTIA * 1.0**2, rel=0.02)


@pytest.mark.parametrize("engine", engines(mujoco="crawler joints: MuJoCo has no driven contact surface"))
def test_a_crawler_track_drives_its_body_at_the_commanded_surface_speed(engine: str, tmp_path: Path) -> None:
    world = build(
        engine,
        tmp_path,
        [(model("floor", static=True), floor_body()), (model("crawler", position=(0.0, 0.0, 0.1251)), crawler_body())],
        collisions=[CollisionPair("floor", "crawler", friction=1.0)],
    )
    world.apply("crawler", JointCommand(torque=[0.5]))  # a crawler's torque command is its surface speed
    run(world, 1.0)
    state = world.read("crawler")
    # friction 1.0 grips the track: the body runs at the surface speed, less a slip of a few %
    assert abs(state.root_velocity[0]) == pytest.approx(0.5, rel=0.05)
    assert abs(state.root_velocity[1]) < 0.01
    assert abs(state.root_position[0]) > 0.3


# --- closed loops and mimic joints ---


@pytest.mark.parametrize("engine", PHYSICS_ENGINES)
@pytest.mark.parametrize("loop_type", ["ball", "xyz", "xy", "piston", "hinge"])
def test_an_extra_joint_closes_a_four_bar_loop(engine: str, tmp_path: Path, loop_type: str) -> None:
    body = four_bar_body(loop_type)
    world = build(engine, tmp_path, [(model("bar", joints={"A": 0.3, "B": 0.3, "C": -0.3}), body)])
    gaps = []
    for _ in range(1500):
        world.step()
        gaps.append(loop_gap(world, "bar"))
    q = world.read("bar").q
    assert abs(q[0]) < 0.3  # it swung down under gravity ...
    assert q[1] == pytest.approx(q[0], abs=1e-3)  # ... as a parallelogram: 1 mrad apart at most
    assert max(gaps) < 1e-3  # the loop stays closed within 1 mm (both engines correct drift each step)


@pytest.mark.parametrize("engine", PHYSICS_ENGINES)
def test_an_extra_joint_type_no_engine_can_impose_is_refused_by_name(engine: str, tmp_path: Path) -> None:
    body = four_bar_body("xy")
    body.extra_joints[0].type = "screw"
    with pytest.raises(ConfigError, match="extra joint 'AB' has type 'screw'"):
        build(engine, tmp_path, [(model("bar"), body)])


@pytest.fixture(scope="module")
def wam(models_dir: Path) -> Body:
    return load_body(models_dir / WAM)


def mimic_errors(world: Engine, body: Body) -> dict[str, float]:
    """Per mimic joint, how far it is from multiplier * master + offset (rad)."""
    values, _ = world.link_values("wam")
    by_label = {lk.joint_label: i for i, lk in enumerate(body.links)}
    return {
        lk.joint_label: float(values[i] - (lk.mimic.multiplier * values[by_label[lk.mimic.joint]] + lk.mimic.offset))
        for i, lk in enumerate(body.links)
        if lk.mimic is not None
    }


@pytest.mark.parametrize("engine", PHYSICS_ENGINES)
def test_mimic_joints_start_on_their_masters_and_follow_them(engine: str, tmp_path: Path, wam: Body) -> None:
    world = build(engine, tmp_path, [(model("wam", drive="high_gain"), wam)], gravity=[0.0, 0.0, 0.0])
    assert max(map(abs, mimic_errors(world, wam).values())) < 1e-9
    names = wam.joint_names
    q_ref = np.zeros(len(names))
    for joint, value in MASTERS.items():
        q_ref[names.index(joint)] = value
    world.apply("wam", JointCommand(q_ref=q_ref))
    run(world, 1.0)
    q = world.read("wam").q
    assert [q[names.index(j)] for j in MASTERS] == pytest.approx(list(MASTERS.values()), abs=1e-3)
    errors = mimic_errors(world, wam)
    assert sorted(errors) == ["JF1mimic", "JF2mimic", "JF3mimic", "JF4mimic"]
    assert max(map(abs, errors.values())) < 1e-3, errors  # 1 mrad: the mimic constraint's drift


@pytest.mark.parametrize("engine", PHYSICS_ENGINES)
def test_a_load_on_a_mimic_reaches_its_master_as_through_gears(engine: str, tmp_path: Path, wam: Body) -> None:
    """A couple tau across JF1mimic (on its link, and back on its parent's) loads the mimic alone.
    Held through q = m q_master + offset, it loads the master with m tau (virtual work: a gear train
    passes torque in the ratio of the turns), so the master, free in torque mode, holds still under
    -m tau and turns under none. A follower that worked one way would do the reverse."""
    names = wam.joint_names
    mimic = wam.links[wam.link_index("Finger0-2")]
    multiplier, tau = mimic.mimic.multiplier, 2.0
    moved = {}
    for command in (-multiplier * tau, 0.0):
        drive = {name: "torque" if name == "JF1" else "high_gain" for name in names}
        world = build(engine, tmp_path, [(model("wam", drive=drive), wam)], gravity=[0.0, 0.0, 0.0])
        axis = world.forward_kinematics("wam")[wam.link_index("Finger0-2")][1] @ np.asarray(mimic.joint_axis, float)
        world.set_external_force("wam", "Finger0-2", [0.0, 0.0, 0.0], torque=list(tau * axis))
        world.set_external_force("wam", "Finger0-1", [0.0, 0.0, 0.0], torque=list(-tau * axis))
        torque = np.zeros(len(names))
        torque[names.index("JF1")] = command
        world.apply("wam", JointCommand(torque=torque))
        start = world.read("wam").q[names.index("JF1")]
        run(world, 0.5)
        moved[command] = world.read("wam").q[names.index("JF1")] - start
        assert abs(mimic_errors(world, wam)["JF1mimic"]) < 1e-3
    assert abs(moved[-multiplier * tau]) < 1e-3, moved  # balanced: 1 mrad in 0.5 s (MuJoCo's soft equality)
    assert moved[0.0] > 0.02, moved  # m tau on about 0.8 kg m^2 turns it some 0.08 rad in 0.5 s
