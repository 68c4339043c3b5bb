"""The MJCF reader on small files written here: MuJoCo's frames, joints, geoms, sensors, gears,
connect equalities, exclusions and the world option, checked against MuJoCo's compiled model."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from hrpsim.conventions import Z_TO_Y
from hrpsim.kinematics import forward_kinematics
from hrpsim.modelloader import load_body

mujoco = pytest.importorskip("mujoco")

ARM = """<mujoco model="arm">
  <compiler angle="degree"/>
  <worldbody>
    <geom name="floor" type="plane" size="2 2 .1" rgba=".2 .3 .4 1"/>
    <geom name="post" type="box" pos="0 0 .5" size=".05 .05 .5"/>
    <body name="base" pos="0 0 1">
      <geom type="cylinder" size=".05 .02"/>
      <body name="upper" pos="0 0 .05" euler="0 0 30">
        <joint name="yaw" type="hinge" axis="0 0 1" range="-90 90" armature=".5"/>
        <joint name="pitch" type="hinge" pos="0 0 .02" axis="0 1 0" range="-45 45" ref="10"/>
        <geom name="bar" type="capsule" fromto="0 0 .02 .3 0 .02" size=".02" rgba="1 0 0 .5"/>
        <site name="wrist" pos=".3 0 .02"/>
        <body name="slider" pos=".3 0 0">
          <joint name="push" type="slide" axis="1 0 0" range="0 .1"/>
          <geom type="sphere" size=".03" mass="0.2"/>
          <geom type="box" size=".01 .01 .01" contype="0" conaffinity="0"/>
          <site name="tip"/>
        </body>
      </body>
      <body name="ball" pos="0 .3 0">
        <joint name="swivel" type="ball" range="0 60"/>
        <geom type="sphere" size=".04"/>
      </body>
    </body>
  </worldbody>
  <contact><exclude body1="base" body2="slider"/></contact>
  <equality><connect name="loop" body1="slider" body2="ball" anchor=".01 0 0"/></equality>
  <actuator><motor name="yaw_motor" joint="yaw" gear="50" ctrlrange="-1 1"/></actuator>
  <sensor>
    <force name="wf" site="wrist"/><torque name="wt" site="wrist"/>
    <gyro name="tip_gyro" site="tip"/><accelerometer name="tip_acc" site="tip"/>
    <jointpos name="yaw_pos" joint="yaw"/>
  </sensor>
</mujoco>
"""


@pytest.fixture
def arm(tmp_path: Path) -> Path:
    path = tmp_path / "arm.xml"
    path.write_text(ARM)
    return path


def test_links_sit_where_mujoco_puts_the_bodies_and_joints(arm: Path) -> None:
    body = load_body(arm)
    model = mujoco.MjModel.from_xml_path(str(arm))
    data = mujoco.MjData(model)
    mujoco.mj_kinematics(model, data)
    assert body.format == "mjcf" and body.name == "arm"
    assert [lk.name for lk in body.links] == [
        "base",
        "upper.yaw",
        "upper",
        "slider",
        "ball.swivel_x",
        "ball.swivel_y",
        "ball",
    ]
    assert body.root.joint_type == "fixed" and body.root.translation == pytest.approx([0, 0, 1])
    assert [lk.joint_name for lk in body.joints] == ["yaw", "pitch", "push", "swivel_x", "swivel_y", "swivel_z"]
    poses = forward_kinematics(body, body.root.translation, body.root.rotation, np.zeros(len(body.links)))
    pitch = body.links[body.link_index("upper")]
    upper_origin = poses[body.link_index("upper")][0]
    assert upper_origin == pytest.approx(data.xanchor[model.joint("pitch").id])  # the link frame sits at its joint
    assert pitch.q_lower == pytest.approx(np.radians(-55)) and pitch.q_upper == pytest.approx(np.radians(35))  # ref 10
    ball = body.links[body.link_index("ball")]
    assert ball.joint_axis == pytest.approx([0, 0, 1]) and ball.q_upper == pytest.approx(np.radians(60))
    for b in range(1, model.nbody):
        index = body.link_index(model.body(b).name)
        p, r = poses[index]
        assert p + r @ body.links[index].com == pytest.approx(data.xipos[b], abs=1e-12)
    assert body.total_mass == pytest.approx(model.body_mass.sum(), rel=1e-12)


def test_geoms_keep_their_kind_size_pose_and_colour(arm: Path) -> None:
    body = load_body(arm)
    model = mujoco.MjModel.from_xml_path(str(arm))
    data = mujoco.MjData(model)
    mujoco.mj_kinematics(model, data)
    poses = forward_kinematics(body, body.root.translation, body.root.rotation, np.zeros(len(body.links)))
    upper = body.link_index("upper")
    (bar,) = body.links[upper].shapes
    assert bar.kind == "capsule" and bar.radius == pytest.approx(0.02) and bar.height == pytest.approx(0.3)
    p, r = poses[upper]
    geom = model.geom("bar").id
    assert p + r @ bar.translation == pytest.approx(data.geom_xpos[geom])
    assert r @ bar.rotation @ Z_TO_Y == pytest.approx(data.geom_xmat[geom].reshape(3, 3), abs=1e-12)  # along Y
    assert bar.appearance.diffuse == pytest.approx([1, 0, 0]) and bar.appearance.transparency == pytest.approx(0.5)
    slider = body.links[body.link_index("slider")]
    assert [s.kind for s in slider.shapes] == ["sphere"]  # the box never collides: it is drawn only
    assert [s.kind for s in slider.visuals] == ["sphere", "box"]
    assert body.links[0].shapes[0].kind == "cylinder"
    assert all(s.kind != "plane" for lk in body.links for s in lk.shapes)  # the world's geoms are the environment


def test_sensors_gear_loop_and_exclusion(arm: Path) -> None:
    body = load_body(arm)
    assert [(s.name, s.type, s.id) for s in body.sensors] == [
        ("wrist", "force", 0),
        ("tip_gyro", "gyro", 0),
        ("tip_acc", "accel", 0),
    ]
    assert body.links[body.sensors[0].link].name == "upper"
    assert body.sensors[0].translation == pytest.approx([0.3, 0, 0])  # the wrist site, from the pitch joint
    yaw = body.links[body.link_index("upper.yaw")]
    assert yaw.gear_ratio == 50 and yaw.reflected_inertia == pytest.approx(0.5)
    assert (yaw.torque_lower, yaw.torque_upper) == (-50.0, 50.0)  # the motor's control range times its gear
    assert body.actuators[0].name == "yaw_motor" and body.actuators[0].params["ctrlrange"] == [-1.0, 1.0]
    (loop,) = body.extra_joints
    assert (loop.name, loop.link1, loop.link2, loop.type) == ("loop", "slider", "ball", "ball")
    assert loop.point1 == pytest.approx([0.01, 0, 0])
    assert body.collision_exclusions == [("base", "slider")]
    warnings = "\n".join(body.metadata["warnings"])
    assert "yaw_pos (jointpos)" in warnings and "floor, post" in warnings


def test_the_world_option_gives_the_environment_as_a_static_body(arm: Path) -> None:
    world = load_body(arm, world=True)
    assert world.static and world.name == "arm_world" and len(world.links) == 1
    floor, post = world.links[0].shapes
    assert floor.kind == "plane" and floor.appearance.diffuse == pytest.approx([0.2, 0.3, 0.4])
    assert post.kind == "box" and post.size == pytest.approx([0.1, 0.1, 1.0]) and post.translation[2] == 0.5


def test_a_free_body_is_a_free_root_and_meshes_are_read(tmp_path: Path) -> None:
    path = tmp_path / "tetra.xml"
    path.write_text(
        '<mujoco><asset><mesh name="t" vertex="0 0 0 1 0 0 0 1 0 0 0 1"/></asset>'
        '<worldbody><body name="rock" pos="1 2 3"><freejoint/><geom type="mesh" mesh="t"/></body></worldbody></mujoco>'
    )
    body = load_body(path)
    assert body.root.joint_type == "free" and body.root.translation == pytest.approx([1, 2, 3]) and body.dof == 0
    (mesh,) = body.root.shapes
    assert mesh.kind == "mesh" and mesh.vertices.shape == (4, 3) and mesh.triangles.shape == (4, 3)
    corners = mesh.translation + mesh.vertices @ mesh.rotation.T  # MuJoCo recentres a mesh: the pose puts it back
    assert sorted(map(tuple, np.round(corners, 6) + 0.0)) == [(0, 0, 0), (0, 0, 1), (0, 1, 0), (1, 0, 0)]  # float32
