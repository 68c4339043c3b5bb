"""MJCF models with what BodyInfo cannot hold, on the MuJoCo engine, which builds them from their
own file: a humanoid of our own (examples/models/tendon_humanoid.xml) with fixed tendons, a tendon
equality, tendon motors, ball hips and MuJoCo's own servos; ball joints read and driven as
BodyInfo's three hinges; the file's servos acting only while no controller drives the robot; link
frames, joint zeros and masses as BodyInfo says. ODE refuses such a model naming each element."""

from __future__ import annotations

from pathlib import Path

import mujoco
import numpy as np
import pytest
from mjcf_helpers import suite_file
from process_helpers import REPO
from sim_helpers import build

from hrpsim.engines.base import JointCommand
from hrpsim.errors import ConfigError, RequestError
from hrpsim.modelloader import load_body
from hrpsim.project import CollisionPair, ControllerConfig, ModelConfig

HUMANOID = REPO / "examples" / "models" / "tendon_humanoid.xml"
BALL_PENDULUM = """<mujoco model="ball_pendulum">
  <worldbody>
    <body name="base" pos="0 0 1">
      <geom type="box" size="0.05 0.05 0.05"/>
      <body name="bob" pos="0 0 -0.1">
        <joint name="swivel" type="ball"/>
        <geom type="capsule" fromto="0 0 0 0 0 -0.5" size="0.03"/>
        <geom type="sphere" pos="0.1 0 -0.5" size="0.06"/>
      </body>
    </body>
  </worldbody>
</mujoco>
"""
TILTED = {"swivel_x": 0.4, "swivel_y": 0.3, "swivel_z": 0.2}


def humanoid_on_its_floor(tmp_path: Path, **world: object):
    robot, floor = load_body(HUMANOID), load_body(HUMANOID, world=True)
    models = [
        (ModelConfig(name="floor", file=str(HUMANOID), static=True), floor),
        (ModelConfig("h", str(HUMANOID)), robot),
    ]
    world.setdefault("collisions", [CollisionPair("floor", "h", friction=0.8)])
    return build("mujoco", tmp_path, models, timestep=0.002, joint_limits=True, **world), robot


def test_the_tendon_humanoid_stands_and_its_ankles_follow_its_knees(tmp_path: Path) -> None:
    world, robot = humanoid_on_its_floor(tmp_path)
    names = robot.joint_names
    knee, ankle = names.index("right_knee"), names.index("right_ankle")
    start = world.read("h")
    assert start.root_position[2] == pytest.approx(1.06)
    assert np.abs(start.q).max() == 0.0  # hrpsim's zero is the pose the file draws
    free = np.zeros(len(names), bool)
    free[[ankle, names.index("left_ankle")]] = True  # the tendons move the ankles
    target = np.zeros(len(names))
    worst = 0.0
    for tick in range(1500):
        target[knee] = 0.5 * min(tick / 500, 1.0)
        state = world.read("h")
        torque = np.where(free, 0.0, 300.0 * (target - state.q) - 10.0 * state.dq)
        world.apply("h", JointCommand(torque=torque))
        world.step()
        worst = max(worst, abs(world.read("h").q[knee] + 2.0 * world.read("h").q[ankle]))
    state = world.read("h")
    assert state.q[knee] > 0.15  # bent (under the body's weight the PD law falls short of 0.5)
    # the tendon equality (as soft as the file leaves it: MuJoCo's default time constant, 0.02 s)
    assert state.q[ankle] == pytest.approx(-state.q[knee] / 2.0, abs=0.02)
    assert worst < 0.02
    assert state.root_position[2] > 0.95  # still standing (the hips' balls held by their torques)
    weight = robot.total_mass * 9.8
    feet = state.sensors["right_ankle_ft"][2] + state.sensors["left_ankle_ft"][2]
    assert feet == pytest.approx(weight - 2 * 0.8 * 9.8, rel=0.05)  # the body above the ankles stands on them


def test_ode_refuses_the_tendon_humanoid_naming_every_element(tmp_path: Path) -> None:
    robot = load_body(HUMANOID)
    with pytest.raises(ConfigError) as caught:
        build("ode", tmp_path, [(ModelConfig("h", str(HUMANOID)), robot)])
    message = str(caught.value)
    assert "the ode engine cannot simulate 7 element(s)" in message
    assert f"{HUMANOID}:78: /mujoco/tendon/fixed[1](name='right_leg'): a fixed tendon" in message
    assert "/mujoco/equality/tendon[1](name='right_leg_sync'): a tendon equality" in message
    assert "/mujoco/actuator/motor[1](name='right_leg_push'): an actuator acting on a tendon" in message
    assert message.count("use engine: mujoco") == 7


@pytest.mark.parametrize("controlled", [False, True])
def test_the_files_servos_act_while_no_controller_drives_the_robot(tmp_path: Path, controlled: bool) -> None:
    controllers = [ControllerConfig("arm", "h")] if controlled else []
    world, robot = humanoid_on_its_floor(tmp_path, gravity=[0.0, 0.0, 0.0], collisions=[])
    if controlled:
        world.project.controllers = controllers
        world.rebuild(world.project, world.bodies)
    elbow = robot.joint_names.index("right_elbow")
    bent = np.zeros(len(robot.joint_names))
    bent[elbow] = -1.0
    world.set_link_data("h", q=bent)
    for _ in range(500):
        world.step()
    q = world.read("h").q[elbow]
    if controlled:
        assert q == pytest.approx(-1.0, abs=0.05)  # nothing pulls it: the controller would
    else:
        assert abs(q) < 0.1  # the file's position servo brought it back to zero


def test_a_native_joint_takes_the_velocity_drive(tmp_path: Path) -> None:
    """Switching a joint into velocity mode adds its rotor and recompiles the model built from the file."""
    world, robot = humanoid_on_its_floor(tmp_path, gravity=[0.0, 0.0, 0.0], collisions=[])
    speeds = np.zeros(len(robot.joint_names))
    speeds[robot.joint_names.index("right_shoulder_y")] = 0.5
    world.apply("h", JointCommand(dq_ref=speeds, modes={"right_shoulder_y": "velocity"}))
    for _ in range(200):
        world.step()
    assert world.read("h").dq[robot.joint_names.index("right_shoulder_y")] == pytest.approx(0.5, abs=1e-3)


def ball_pendulum(engine: str, tmp_path: Path, **world: object):
    path = tmp_path / "ball.xml"
    path.write_text(BALL_PENDULUM)
    body = load_body(path)
    assert body.joint_names == ["swivel_x", "swivel_y", "swivel_z"]
    return build(engine, tmp_path / engine, [(ModelConfig("p", str(path), joints=dict(TILTED)), body)], **world)


def test_a_ball_joint_reads_as_the_three_hinges_of_its_body(tmp_path: Path) -> None:
    world = ball_pendulum("mujoco", tmp_path, timestep=0.0005)
    assert world.read("p").q == pytest.approx(list(TILTED.values()), abs=1e-12)
    for _ in range(1000):
        world.step()
    before = world.read("p")
    world.step()
    after = world.read("p")
    assert (after.q - before.q) / 0.0005 == pytest.approx(after.dq, abs=2e-3)  # rates are the angles' rates
    bob = mujoco.mj_name2id(world.m, mujoco.mjtObj.mjOBJ_BODY, "p/bob")
    position, rotation = world.forward_kinematics("p")[-1]  # the angles put the body where MuJoCo has it
    assert rotation == pytest.approx(world.d.xmat[bob].reshape(3, 3), abs=1e-9)
    assert position == pytest.approx(world.d.xpos[bob], abs=1e-9)
    np.testing.assert_allclose(
        world.link_states("p").positions, [p for p, _ in world.forward_kinematics("p")], atol=1e-9
    )


@pytest.mark.parametrize("pushed", [False, True])
def test_a_ball_joint_moves_as_odes_three_hinges_do(tmp_path: Path, pushed: bool) -> None:
    """Swinging under gravity, or turned by torques on its three hinges in weightlessness: MuJoCo's
    ball and ODE's chain of hinges (BodyInfo's form of it) follow the same path."""
    gravity = [0.0, 0.0, 0.0] if pushed else [0.0, 0.0, -9.8]
    paths = {}
    for engine in ("ode", "mujoco"):
        world = ball_pendulum(engine, tmp_path, timestep=0.0005, gravity=gravity)
        if pushed:
            world.apply("p", JointCommand(torque=np.array([0.3, -0.2, 0.1])))
        for _ in range(600):
            world.step()
        paths[engine] = world.read("p").q
    turned = np.angle(np.exp(1j * (paths["ode"] - paths["mujoco"])))  # ODE counts whole turns, a ball does not
    assert np.abs(turned).max() < 0.02
    assert np.abs(paths["mujoco"] - list(TILTED.values())).max() > 0.3  # it did move


def test_a_ball_joint_takes_torques_only(tmp_path: Path) -> None:
    world = ball_pendulum("mujoco", tmp_path)
    with pytest.raises(RequestError, match="one axis of a MuJoCo ball joint"):
        world.apply("p", JointCommand(modes={"swivel_y": "high_gain"}))
    path = tmp_path / "ball.xml"
    with pytest.raises(ConfigError, match="drives by torque only"):
        build("mujoco", tmp_path, [(ModelConfig("p", str(path), drive="high_gain"), load_body(path))])


WELDED = """<mujoco model="welded">
  <worldbody>
    <body name="arm" pos="0 0 1">
      <joint name="shoulder" axis="0 1 0"/>
      <geom type="capsule" fromto="0 0 0 0.5 0 0" size="0.03"/>
      <body name="forearm" pos="0.5 0 0">
        <joint name="elbow" axis="0 1 0"/>
        <geom type="capsule" fromto="0 0 0 0.4 0 0" size="0.03"/>
      </body>
    </body>
    <body name="post" pos="0.9 0 1"><geom type="box" size="0.05 0.05 0.05"/></body>
  </worldbody>
  <equality>
    <weld name="held" body1="forearm" body2="post"{relpose}/>
  </equality>
</mujoco>
"""


@pytest.mark.parametrize("engine", ["ode", "mujoco"])
def test_an_mjcf_weld_holding_the_drawn_pose_is_a_fixed_extra_joint(engine: str, tmp_path: Path) -> None:
    path = tmp_path / "welded.xml"
    path.write_text(WELDED.format(relpose=""))
    body = load_body(path)
    assert [(e.name, e.type, e.link1, e.link2) for e in body.extra_joints] == [("held", "fixed", "forearm", "post")]
    assert "mujoco_only" not in body.metadata
    world = build(engine, tmp_path, [(ModelConfig("w", str(path)), body)], timestep=0.001)
    for _ in range(1000):
        world.step()
    assert np.abs(world.read("w").q).max() < 0.02  # the arm hangs on the post instead of falling


def test_an_mjcf_weld_to_another_pose_is_mujocos_only(tmp_path: Path) -> None:
    path = tmp_path / "welded.xml"
    path.write_text(WELDED.format(relpose=' relpose="0.45 0 0.2179449 1 0 0 0"'))  # reachable, not drawn
    body = load_body(path)
    assert body.extra_joints == []
    (only,) = body.metadata["mujoco_only"]
    assert "a weld whose target is not the pose the file draws" in only
    world = build("mujoco", tmp_path, [(ModelConfig("w", str(path)), body)], timestep=0.001)
    for _ in range(2000):
        world.step()
    forearm = world.forward_kinematics("w")[body.link_index("forearm")][0]
    assert forearm == pytest.approx([0.45, 0.0, 1.0 - 0.2179449], abs=5e-3)  # pulled to where the file asks


def test_a_native_model_keeps_the_projects_masses_and_its_joints_zero(tmp_path: Path) -> None:
    path = tmp_path / "ref.xml"
    path.write_text(
        '<mujoco><compiler angle="degree"/><worldbody><body name="arm" pos="0 0 1">'
        '<joint name="j" axis="0 1 0" ref="30"/><geom type="capsule" fromto="0 0 0 0.5 0 0" size="0.03"/>'
        "</body></worldbody></mujoco>"
    )
    body = load_body(path)
    body.links[-1].mass *= 2.0  # a project's masses: rescaled
    body.links[-1].inertia = body.links[-1].inertia * 2.0
    world = build("mujoco", tmp_path, [(ModelConfig("a", str(path)), body)], gravity=[0.0, 0.0, 0.0])
    arm = mujoco.mj_name2id(world.m, mujoco.mjtObj.mjOBJ_BODY, "a/arm")
    assert world.m.body_mass[arm] == pytest.approx(body.links[-1].mass)
    assert world.read("a").q == pytest.approx([0.0])  # the drawn pose, though MuJoCo's qpos is 30 degrees
    world.set_link_data("a", q=[0.2])
    assert world.read("a").q == pytest.approx([0.2])
    assert world.d.qpos[0] == pytest.approx(0.2 + np.radians(30.0))


def test_a_native_models_link_frames_sit_at_its_joints(tmp_path: Path) -> None:
    """dm_control's humanoid: hinges away from their bodies' origins, bodies with several joints."""
    path = suite_file("humanoid.xml")
    body = load_body(path)
    world = build("mujoco", tmp_path, [(ModelConfig("h", str(path)), body)], timestep=0.002)
    for _ in range(250):
        world.step()
    states = world.link_states("h")
    poses = world.forward_kinematics("h")
    np.testing.assert_allclose(states.positions, [p for p, _ in poses], atol=1e-7)
    rotations = np.array([r for _, r in poses])
    quats = np.array([mujoco_quat(r) for r in rotations])
    assert np.abs(np.abs(np.einsum("ij,ij->i", quats, states.quaternions)) - 1.0).max() < 1e-7
    np.testing.assert_allclose(world.link_positions("h"), states.positions, atol=1e-12)


def mujoco_quat(rotation: np.ndarray) -> np.ndarray:
    quat = np.empty(4)
    mujoco.mju_mat2Quat(quat, rotation.ravel())
    return quat


def test_a_native_model_goes_on_from_a_snapshot_as_it_went_on_then(tmp_path: Path) -> None:
    world, robot = humanoid_on_its_floor(tmp_path)
    torque = np.zeros(len(robot.joint_names))
    torque[robot.joint_names.index("right_hip_y")] = 5.0  # through a ball's motors
    world.apply("h", JointCommand(torque=torque))
    for _ in range(100):
        world.step()
    saved = world.get_state()
    for _ in range(100):
        world.step()
    first = world.read("h")
    world.set_state(saved)
    for _ in range(100):
        world.step()
    again = world.read("h")
    np.testing.assert_array_equal(again.q, first.q)
    np.testing.assert_array_equal(again.root_position, first.root_position)
