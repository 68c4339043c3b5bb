"""URDF export keeps the physics: a free root that other tools load free, limits only where the
model has them, rotor inertia and gear ratio in the transmission; `convert` then `load` gives the
same robot, and it falls as the original does."""

from __future__ import annotations

import math
import subprocess
from pathlib import Path

import numpy as np
import pytest
from lxml import etree
from sim_helpers import FLOOR, SAMPLE1, model, project
from urdf_helpers import URDF_TO_COLLADA

from hrpsim.engines.ode.engine import OdeEngine
from hrpsim.modelloader import load_body
from hrpsim.modelloader.collada import load_collada
from hrpsim.modelloader.urdf import NO_LIMIT, load_urdf
from hrpsim.modelloader.urdf_export import write_urdf
from hrpsim.project import CollisionPair


@pytest.fixture
def sample1(tmp_path: Path) -> tuple[object, Path]:
    body = load_body(SAMPLE1)
    return body, write_urdf(body, tmp_path / "sample1.urdf")


def test_vrml_to_urdf_to_bodyinfo_keeps_masses_inertias_limits_and_motors(sample1) -> None:
    original, urdf = sample1
    again = load_urdf(urdf)
    assert again.root.joint_type == "free"
    assert np.allclose(again.root.translation, original.root.translation)  # where the file puts the robot
    assert np.allclose(again.root.rotation, original.root.rotation)
    assert any(lk.rotor_inertia for lk in original.joints)  # sample1 has motors to lose
    for link in original.links:
        back = again.links[again.link_index(link.name)]
        assert back.mass == pytest.approx(link.mass, rel=1e-12), link.name
        assert np.allclose(back.inertia, link.inertia, rtol=1e-12, atol=1e-15), link.name
        if link.joint_type not in ("rotate", "slide"):
            continue
        for name in (
            "q_lower",
            "q_upper",
            "dq_lower",
            "dq_upper",
            "torque_lower",
            "torque_upper",
            "gear_ratio",
            "rotor_inertia",
        ):
            assert getattr(back, name) == getattr(link, name), (link.name, name)
        assert back.reflected_inertia == pytest.approx(link.reflected_inertia, rel=1e-12)


def _xml(urdf: Path) -> etree._Element:
    return etree.parse(str(urdf)).getroot()


def test_a_free_root_follows_urdfdoms_rules_for_a_free_base(sample1) -> None:
    """urdfdom's root is the one link no joint has as child; a link called world, or a floating
    joint from it, would make the base a fixed or floating child of the world instead."""
    _, urdf = sample1
    robot = _xml(urdf)
    links = [link.get("name") for link in robot.findall("link")]
    children = {joint.find("child").get("link") for joint in robot.findall("joint")}
    roots = [name for name in links if name not in children]
    assert roots == ["WAIST"]
    assert "world" not in links
    assert not [joint for joint in robot.findall("joint") if joint.get("type") == "floating"]
    assert robot.find("link[@name='WAIST']/inertial/mass") is not None  # the free base keeps its mass


def test_limits_are_written_only_where_the_model_has_them(sample1) -> None:
    original, urdf = sample1
    robot = _xml(urdf)
    for link in original.joints:
        element = robot.find(f"joint[@name='{link.joint_label}']")
        limit = element.find("limit")
        if math.isinf(link.q_upper):
            assert element.get("type") == "continuous"
        effort = float(limit.get("effort")) if limit is not None else math.inf
        velocity = float(limit.get("velocity")) if limit is not None else math.inf
        assert effort > 0.0 and velocity > 0.0, link.joint_label  # never "no torque", never "cannot move"
        assert effort == (link.torque_upper if math.isfinite(link.torque_upper) else NO_LIMIT) or limit is None
        assert velocity == (link.dq_upper if math.isfinite(link.dq_upper) else NO_LIMIT) or limit is None


def test_rotor_inertia_and_gear_ratio_are_written_in_drakes_form(sample1) -> None:
    original, urdf = sample1
    drake = "{http://drake.mit.edu}"
    joint = original.joints[0]
    (actuator,) = [
        transmission.find("actuator")
        for transmission in _xml(urdf).findall("transmission")
        if transmission.find("joint").get("name") == joint.joint_label
    ]
    assert float(actuator.find(f"{drake}rotor_inertia").get("value")) == joint.rotor_inertia
    assert float(actuator.find(f"{drake}gear_ratio").get("value")) == joint.gear_ratio
    assert float(actuator.findtext("mechanicalReduction")) == joint.gear_ratio


def test_the_converted_sample1_loads_in_pybullet_with_a_free_base(sample1) -> None:
    pybullet = pytest.importorskip("pybullet")
    original, urdf = sample1
    client = pybullet.connect(pybullet.DIRECT)
    try:
        robot = pybullet.loadURDF(str(urdf), basePosition=[0, 0, 2], useFixedBase=False, physicsClientId=client)
        assert pybullet.getNumJoints(robot, physicsClientId=client) == len(original.links) - 1
        assert pybullet.getDynamicsInfo(robot, -1, physicsClientId=client)[0] == original.root.mass
        pybullet.setGravity(0, 0, -9.8, physicsClientId=client)
        for _ in range(120):  # 0.5 s at PyBullet's 240 Hz: 1.2 m of free fall
            pybullet.stepSimulation(physicsClientId=client)
        height = pybullet.getBasePositionAndOrientation(robot, physicsClientId=client)[0][2]
        assert height < 1.5  # the base falls: it is not fixed to the world
    finally:
        pybullet.disconnect(physicsClientId=client)


CROUCH = {
    f"{side}LEG_{joint}": angle for side in "RL" for joint, angle in (("HIP_P", -0.4), ("KNEE", 0.8), ("ANKLE_P", -0.4))
}


def _collapse(tmp_path: Path, body: object) -> list[float]:
    """The root height of an unpowered, crouching sample1 dropped onto the floor, every 0.1 s for
    1 s: its knees give way at a pace set by the motors' reflected inertia."""
    proj, bodies = project(
        tmp_path,
        [
            (model("floor", static=True, position=(0.0, 0.0, -0.1)), load_body(FLOOR)),
            (model("robot", position=(0.0, 0.0, 0.7235), joints=CROUCH), body),
        ],
        collisions=[CollisionPair("floor", "robot", friction=0.5)],
    )
    world = OdeEngine(proj, bodies)
    heights = []
    for _ in range(10):
        for _ in range(100):
            world.step()
        heights.append(float(world.read("robot").root_position[2]))
    return heights


def test_the_converted_robot_collapses_as_the_original_does(sample1, tmp_path: Path) -> None:
    original, urdf = sample1
    before = _collapse(tmp_path, original)
    after = _collapse(tmp_path, load_urdf(urdf))
    assert before[-1] < before[0] - 0.3  # unpowered, it does collapse: the comparison means something
    assert np.allclose(after, before, atol=1e-6)


def test_urdfdom_reads_the_converted_sample1_with_its_free_root(sample1, tmp_path: Path) -> None:
    if not URDF_TO_COLLADA.exists():
        pytest.fail(f"{URDF_TO_COLLADA} is missing: install collada-urdf-tools (scripts/bootstrap.sh does)")
    original, urdf = sample1
    out = tmp_path / "sample1.dae"
    done = subprocess.run([str(URDF_TO_COLLADA), str(urdf), str(out)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and out.exists(), done.stdout + done.stderr
    from_urdfdom = load_collada(out)
    assert from_urdfdom.root.name == "WAIST" and from_urdfdom.dof == original.dof


def test_the_floating_joint_form_leaves_the_root_free_in_mujoco(tmp_path: Path) -> None:
    mujoco = pytest.importorskip("mujoco")
    original = load_body(SAMPLE1)
    urdf = write_urdf(original, tmp_path / "sample1.urdf", floating_joint=True)
    model = mujoco.MjModel.from_xml_path(str(urdf))
    assert model.jnt_type[0] == mujoco.mjtJoint.mjJNT_FREE
    assert model.nq == 7 + original.dof  # the free joint's position and quaternion, then the joints
    assert model.body_mass[1] == pytest.approx(original.root.mass)
    again = load_urdf(urdf)  # and hrpsim reads it back as the same free root at the same pose
    assert again.root.joint_type == "free" and np.allclose(again.root.translation, original.root.translation)
