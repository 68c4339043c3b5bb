"""Every dm_control suite model loads as MuJoCo's own compiler reads it (bodies, joints, mass, and
where each centre of mass lies), naming what only the MuJoCo engine simulates, or is refused
naming the file, the line and the element."""

from __future__ import annotations

import re

import numpy as np
import pytest
from mjcf_helpers import suite_folder

from hrpsim.errors import ModelError
from hrpsim.kinematics import forward_kinematics
from hrpsim.modelloader import load_body

mujoco = pytest.importorskip("mujoco")

# what of each refused model no engine can run as hrpsim holds models (docs/formats-mjcf.md says the same)
REFUSED = {
    "dog.xml": "free joint",  # its ball is a second free body
    "quadruped.xml": "free joint",  # so is its ball
    "lqr.xml": "no bodies",  # a template: only its environment
}
# what of each model only the MuJoCo engine simulates (Body.metadata["mujoco_only"])
MUJOCO_ONLY = {
    "ball_in_cup.xml": "spatial tendon",  # the string
    "fish.xml": "fixed tendon",
    "manipulator.xml": "fixed tendon",  # and tendon actuators, a tendon equality
    "point_mass.xml": "fixed tendon",
    "stacker.xml": "fixed tendon",
    "humanoid_CMU.xml": "ellipsoid",  # its hands
    "swimmer.xml": "ellipsoid",  # its head
}


def suite_models() -> list[str]:
    return sorted(p.name for p in suite_folder().glob("*.xml"))


def test_the_suite_is_the_one_these_facts_were_read_from() -> None:
    assert set(REFUSED) | set(MUJOCO_ONLY) < set(suite_models())


@pytest.mark.parametrize("name", suite_models())
def test_suite_model_loads_as_mujoco_compiles_it_or_is_refused_at_its_line(name: str) -> None:
    path = suite_folder() / name
    if name in REFUSED:
        with pytest.raises(ModelError) as caught:
            load_body(path)
        problems = [str(p) for p in caught.value.problems] or [str(caught.value)]
        assert any(REFUSED[name] in p for p in problems), problems
        located = [p for p in problems if re.match(rf"{re.escape(str(path))}:\d+: /mujoco/", p)]
        assert located or REFUSED[name] == "no bodies", problems
        return
    body = load_body(path)
    listed = body.metadata.get("mujoco_only", [])
    if name in MUJOCO_ONLY:
        assert any(
            MUJOCO_ONLY[name] in item and re.match(rf"{re.escape(str(path))}:\d+: /mujoco/", item) for item in listed
        )
    else:
        assert not listed, listed
    model = mujoco.MjModel.from_xml_path(str(path))
    names = [model.body(b).name for b in range(1, model.nbody)]
    own = [lk for lk in body.links if lk.name in names]
    assert len(own) == model.nbody - 1
    ball = int(np.sum(model.jnt_type == mujoco.mjtJoint.mjJNT_BALL))
    moving = [lk for lk in body.links if lk.joint_type in ("rotate", "slide", "free")]
    assert len(moving) == model.njnt + 2 * ball
    assert body.total_mass == pytest.approx(float(model.body_mass.sum()), rel=1e-6)
    _centres_of_mass_are_where_mujoco_puts_them(body, model)


def _centres_of_mass_are_where_mujoco_puts_them(body, model) -> None:
    data = mujoco.MjData(model)
    mujoco.mj_kinematics(model, data)
    poses = forward_kinematics(
        body, np.asarray(body.root.translation), np.asarray(body.root.rotation), np.zeros(len(body.links))
    )
    for b in range(1, model.nbody):
        index = body.link_index(model.body(b).name)
        position, rotation = poses[index]
        assert position + rotation @ body.links[index].com == pytest.approx(data.xipos[b], abs=1e-9)
        inertia = rotation @ body.links[index].inertia @ rotation.T
        ximat = data.ximat[b].reshape(3, 3)
        assert inertia == pytest.approx(ximat @ np.diag(model.body_inertia[b]) @ ximat.T, abs=1e-9)


def test_humanoid_sensors_gears_and_chains() -> None:
    path = suite_folder() / "humanoid.xml"
    body = load_body(path)
    model = mujoco.MjModel.from_xml_path(str(path))
    assert body.root.name == "torso" and body.root.joint_type == "free"
    kinds = {s.name: s.type for s in body.sensors}
    assert kinds["torso_gyro"] == "gyro" and kinds["torso_accel"] == "accel"
    assert sorted(n for n, k in kinds.items() if k == "force") == sorted(
        model.site(int(model.sensor_objid[s])).name
        for s in range(model.nsensor)
        if model.sensor_type[s] == mujoco.mjtSensor.mjSENS_FORCE
    )
    for a in range(model.nu):
        joint = model.joint(int(model.actuator_trnid[a][0]))
        link = next(lk for lk in body.links if lk.joint_name == joint.name)
        assert link.gear_ratio == pytest.approx(model.actuator_gear[a][0])
        assert link.reflected_inertia == pytest.approx(model.dof_armature[joint.dofadr[0]])
        assert link.torque_upper == pytest.approx(model.actuator_gear[a][0] * model.actuator_ctrlrange[a][1])
    # a body with two hinges is two links: a massless one per extra joint, then the body's own
    chain = body.links[body.link_index("lower_waist.abdomen_z")]
    assert chain.mass == 0.0 and body.links[chain.parent].name == "torso"
    assert any("world geom" in w and "floor" in w for w in body.metadata["warnings"])
