"""A small hand-written COLLADA document exercising what the corpus files do not: polylist and
polygons, link transforms with a translation, axis_info index order, speeds, materials, every
sensor type, actuator parameters, IK solvers and environment collision geometry."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from hrpsim.modelloader.collada import load_collada

DOC = """<?xml version="1.0" encoding="utf-8"?>
<COLLADA xmlns="http://www.collada.org/2008/03/COLLADASchema" version="1.5.0">
 <asset><unit/><up_axis>Z_UP</up_axis></asset>
 <library_geometries>
  <geometry id="gpoly"><mesh>
   <source id="pp"><float_array id="ppa" count="15">0 0 0 1 0 0 1 1 0 0 1 0 0 0 1</float_array>
    <technique_common><accessor source="#ppa" count="5" stride="3"/></technique_common></source>
   <vertices id="pv"><input semantic="POSITION" source="#pp"/></vertices>
   <polylist count="2" material="m"><input semantic="VERTEX" source="#pv" offset="0"/>
    <input semantic="NORMAL" source="#pn" offset="1"/><vcount>4 3</vcount>
    <p>0 0 1 0 2 0 3 0 0 0 1 0 4 0</p></polylist>
  </mesh></geometry>
  <geometry id="gpolygons"><mesh>
   <source id="qp"><float_array id="qpa" count="12">0 0 0 2 0 0 2 2 0 0 2 0</float_array>
    <technique_common><accessor source="#qpa" count="4" stride="3"/></technique_common></source>
   <vertices id="qv"><input semantic="POSITION" source="#qp"/></vertices>
   <polygons count="2"><input semantic="VERTEX" source="#qv" offset="0"/><p>0 1 2 3</p><p>0 1 3</p></polygons>
  </mesh></geometry>
 </library_geometries>
 <library_effects><effect id="red"><profile_COMMON><technique sid="t"><phong>
  <diffuse><color>1 0 0 1</color></diffuse></phong></technique></profile_COMMON></effect></library_effects>
 <library_materials><material id="redmat"><instance_effect url="#red"/></material></library_materials>
 <library_visual_scenes><visual_scene id="vs">
  <node id="nbase" name="base">
   <node id="narm" name="arm"><translate>0.5 0 1</translate>
    <instance_geometry url="#gpoly"><bind_material><technique_common>
     <instance_material symbol="m" target="#redmat"/></technique_common></bind_material></instance_geometry>
   </node>
  </node>
 </visual_scene></library_visual_scenes>
 <library_kinematics_models><kinematics_model id="k" name="twojoint">
  <technique_common>
   <joint name="yaw" sid="j0"><revolute sid="axis0"><axis>0 0 1</axis><limits><min>-90</min><max>90</max></limits>
   </revolute></joint>
   <joint name="roll" sid="j1"><revolute sid="axis0"><axis>1 0 0</axis><limits><min>-45</min><max>45</max></limits>
   </revolute></joint>
   <link sid="l0" name="base">
    <attachment_full joint="k/j0"><translate>0 0 1</translate>
     <link sid="l1" name="arm"><translate>0.5 0 0</translate>
      <attachment_full joint="k/j1"><translate>0 0 0.2</translate><rotate>0 0 1 90</rotate>
       <link sid="l2" name="hand"/>
      </attachment_full>
     </link>
    </attachment_full>
   </link>
  </technique_common>
  <extra type="collision"><technique profile="OpenRAVE">
   <bind_instance_geometry type="environment" link="k/l2" url="#gpolygons"/>
   <ignore_link_pair link0="k/l0" link1="k/l2"/>
  </technique></extra>
 </kinematics_model></library_kinematics_models>
 <library_articulated_systems>
  <articulated_system id="kin"><kinematics><instance_kinematics_model url="#k" sid="ki"/>
   <technique_common>
    <axis_info sid="a0" axis="k/j0/axis0"><newparam sid="idx"><int>1</int></newparam>
     <active><bool>true</bool></active><index semantic="OpenRAVE"><param>idx</param></index></axis_info>
    <axis_info sid="a1" axis="k/j1/axis0"><index semantic="OpenRAVE"><int>0</int></index></axis_info>
   </technique_common></kinematics>
  </articulated_system>
  <articulated_system id="mot"><motion><instance_articulated_system url="#kin"/>
   <technique_common><axis_info axis="kin/a0"><speed><float>180</float></speed></axis_info></technique_common></motion>
   <extra type="attach_sensor" name="laser"><technique profile="OpenRAVE"><instance_sensor url="#las"/>
    <frame_origin link="k/l1"><translate>0 0 0.1</translate></frame_origin></technique></extra>
   <extra type="attach_sensor" name="laser2"><technique profile="OpenRAVE"><instance_sensor url="#las"/>
    <frame_origin link="k/l0"/></technique></extra>
   <extra type="attach_sensor" name="wrist"><technique profile="OpenRAVE"><instance_sensor url="#ft"/>
    <frame_origin link="k/l2"/></technique></extra>
   <extra type="attach_sensor" name="imu"><technique profile="OpenRAVE"><instance_sensor url="#imu"/>
    <frame_origin link="k/l0"/></technique></extra>
   <extra type="attach_actuator" name="motor0"><technique profile="OpenRAVE"><instance_actuator url="#m0"/>
    <bind_actuator joint="k/j0"/></technique></extra>
   <extra type="manipulator" name="grip"><technique profile="OpenRAVE">
    <frame_origin link="k/l0"/><frame_tip link="k/l2"><translate>0 0 0.1</translate></frame_tip>
    <gripper_joint joint="k/j1"><closing_direction axis="axis0"><float>-1</float></closing_direction></gripper_joint>
    <iksolver type="Transform6D"/>
   </technique></extra>
  </articulated_system>
 </library_articulated_systems>
 <library_physics_models><physics_model id="pm">
  <rigid_body sid="r0" name="base"><technique_common><mass>1</mass><inertia>1 1 1</inertia>
  </technique_common></rigid_body>
  <rigid_body sid="r1" name="arm"><technique_common><mass>2</mass>
   <mass_frame><translate>0.5 0 1.1</translate><rotate>0 0 1 90</rotate></mass_frame><inertia>1 2 3</inertia>
  </technique_common></rigid_body>
  <rigid_body sid="r2" name="hand"><technique_common><mass>0.5</mass></technique_common></rigid_body>
 </physics_model></library_physics_models>
 <library_physics_scenes><physics_scene id="ps">
  <instance_physics_model url="#pm" parent="#nbase"/></physics_scene></library_physics_scenes>
 <scene><instance_physics_scene url="#ps"/><instance_visual_scene url="#vs"/></scene>
 <extra type="library_sensors"><technique profile="OpenRAVE">
  <sensor type="base_laser2d" id="las"><angle_min>-90</angle_min><angle_max>90</angle_max>
   <angle_increment>1</angle_increment><range_max>4</range_max><measurement_time>0.025</measurement_time></sensor>
  <sensor type="base_force6d" id="ft"><load_range_force>100 100 200</load_range_force>
   <load_range_torque>10 10 10</load_range_torque></sensor>
  <sensor type="base_imu" id="imu"><measurement_time>0.01</measurement_time></sensor>
 </technique></extra>
 <extra type="library_actuators"><technique profile="OpenRAVE">
  <actuator type="electric_motor" id="m0"><gear_ratio>100</gear_ratio><rotor_inertia>1e-5</rotor_inertia>
   <torque_constant>0.05</torque_constant><nominal_torque>0.2</nominal_torque></actuator>
 </technique></extra>
</COLLADA>
"""


@pytest.fixture(scope="module")
def body(tmp_path_factory):
    path = Path(tmp_path_factory.mktemp("collada")) / "twojoint.dae"
    path.write_text(DOC)
    return load_collada(path)


def test_link_frames_sit_on_their_joints(body):
    _base, arm, hand = body.links
    assert np.allclose(arm.translation, [0, 0, 1])  # the joint, not the link's own offset
    assert np.allclose(hand.translation, [0.5, 0, 0.2])
    assert np.allclose(hand.rotation @ [1, 0, 0], [0, 1, 0])
    assert np.allclose(hand.joint_axis, [1, 0, 0])
    assert (hand.q_lower, hand.q_upper) == pytest.approx((-math.pi / 4, math.pi / 4))


def test_controller_order_and_speed(body):
    assert body.joint_names == ["roll", "yaw"]  # OpenRAVE index, through a newparam
    arm = body.links[1]
    assert arm.dq_upper == pytest.approx(math.pi) and arm.dq_lower == pytest.approx(-math.pi)
    assert body.links[2].dq_upper == math.inf


def test_mass_frames(body):
    arm = body.links[1]
    assert np.allclose(arm.com, [0.5, 0, 0.1])
    assert np.allclose(arm.inertia, np.diag([2.0, 1.0, 3.0]))
    assert body.total_mass == 3.5


def test_polylist_polygons_materials_and_environment_geometry(body):
    (visual,) = body.links[1].shapes
    assert len(visual.triangles) == 3  # a quad and a triangle, with a NORMAL input interleaved
    assert np.allclose(visual.translation, [0.5, 0, 0])
    assert np.allclose(visual.appearance.diffuse, [1, 0, 0])
    hand = body.links[2]
    (environment,) = hand.shapes
    assert len(environment.triangles) == 3 and hand.visuals == []
    assert body.collision_exclusions == [("base", "hand")]


def test_sensors_of_every_kind(body):
    summary = [(s.name, s.type, s.id, body.links[s.link].name) for s in body.sensors]
    assert summary == [
        ("laser", "range", 0, "arm"),
        ("laser2", "range", 1, "base"),
        ("wrist", "force", 0, "hand"),
        ("imu", "gyro", 0, "base"),
        ("imu", "accel", 0, "base"),
    ]
    laser = body.sensors[0]
    assert laser.params["scanAngle"] == pytest.approx(math.pi)
    assert laser.params["scanStep"] == pytest.approx(math.radians(1))
    assert laser.params["maxDistance"] == 4.0 and laser.params["scanRate"] == pytest.approx(40.0)
    assert np.allclose(laser.translation, [0.5, 0, 0.1])  # in the arm's BodyInfo frame
    assert body.sensors[2].params["maxForce"] == [100.0, 100.0, 200.0]


def test_actuators_and_manipulators(body):
    (motor,) = body.actuators
    assert (motor.joint, motor.name, motor.params["nominal_torque"]) == ("yaw", "motor0", 0.2)
    arm = body.links[1]
    assert (arm.gear_ratio, arm.rotor_inertia, arm.torque_const) == (100.0, 1e-5, 0.05)
    (grip,) = body.manipulators
    assert (grip.base, grip.effector, grip.gripper_joints) == ("base", "hand", ["roll"])
    assert grip.closing_directions == [-1.0] and grip.ik_solvers == ["Transform6D"]
    assert np.allclose(grip.tip_translation, [0, 0, 0.1])
