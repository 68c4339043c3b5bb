"""Mimic joints follow their master in the simulator: the Barrett WAM's finger joints (COLLADA
formulas), the same robot written as URDF with <mimic> elements, and two small URDF mechanisms: a
gripper whose fingers slide apart along one line (held one way: no gear contact fits) and a wrist
whose pitch mimics its yaw (axes at right angles: a gear contact)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from sim_helpers import build, floor_under, model, project

from hrpsim.bodyinfo import Body
from hrpsim.engines.base import JointCommand
from hrpsim.engines.kinematic.engine import KinematicEngine
from hrpsim.engines.ode.engine import OdeEngine
from hrpsim.engines.ode.placement import current_link_values
from hrpsim.modelloader import load_body
from hrpsim.modelloader.urdf_export import write_urdf
from hrpsim.project import CollisionPair, ModelConfig

WAM = "openrave/robots/barrett-wam-sensors.zae"
MASTERS = {"JF1": 0.9, "JF2": 0.6, "JF3": 1.2, "JF4": 1.5}

LINK = """<link name="{0}"><inertial><origin xyz="{1}"/><mass value="{2}"/><inertia ixx="{3}" iyy="{3}" izz="{3}"
 ixy="0" ixz="0" iyz="0"/></inertial><collision><origin xyz="{1}"/><geometry><box size="{4}"/></geometry></collision>
 </link>"""
JOINT = """<joint name="{}" type="{}"><parent link="{}"/><child link="{}"/><origin xyz="{}"/><axis xyz="{}"/>
 <limit lower="-1" upper="1" effort="20" velocity="2"/>{}</joint>"""


def urdf(links: list[tuple], joints: list[tuple]) -> str:
    """A URDF robot: links (name, com, mass, inertia, box size), joints (name, type, parent, child,
    origin, axis, mimicked joint or None, multiplier, offset)."""
    parts = [LINK.format(*link) for link in links]
    for *joint, master, multiplier, offset in joints:
        mimic = f'<mimic joint="{master}" multiplier="{multiplier}" offset="{offset}"/>' if master else ""
        parts.append(JOINT.format(*joint, mimic))
    return f'<?xml version="1.0"?><robot name="robot">{"".join(parts)}</robot>'


FINGER = ("0 0 -0.03", 0.05, 1e-5, "0.02 0.01 0.06")
GRIPPER = urdf(  # two fingers sliding apart along one line: no gear contact fits
    [("hand", "0 0 0", 0.7, 0.002, "0.05 0.2 0.05"), ("left", *FINGER), ("right", *FINGER)],
    [
        ("finger1", "prismatic", "hand", "left", "0 0.03 -0.03", "0 1 0", None, 1, 0),
        ("finger2", "prismatic", "hand", "right", "0 -0.03 -0.03", "0 -1 0", "finger1", 1, 0),
    ],
)
WRIST = urdf(  # a pitch that mimics a yaw: axes at right angles, a gear contact where they pass
    [
        ("base", "0 0 0", 2.0, 0.01, "0.1 0.1 0.1"),
        ("a", "0.05 0 0", 0.5, 1e-4, "0.1 0.03 0.03"),
        ("b", "0.05 0 0", 0.3, 1e-4, "0.1 0.03 0.03"),
    ],
    [
        ("yaw", "revolute", "base", "a", "0.06 0 0", "0 0 1", None, 1, 0),
        ("pitch", "revolute", "a", "b", "0.1 0 0.02", "0 1 0", "yaw", -0.5, 0.1),
    ],
)


@pytest.fixture(scope="module", params=["collada", "urdf"])
def wam(request, models_dir: Path, tmp_path_factory) -> Body:
    body = load_body(models_dir / WAM)
    if request.param == "urdf":
        path = write_urdf(body, tmp_path_factory.mktemp("wam") / "wam.urdf")
        assert path.read_text().count("<mimic ") == 4
        body = load_body(path)
    return body


def mimic_errors(world: OdeEngine, body: Body) -> dict[str, float]:
    """Per mimic joint, how far it is from multiplier * master + offset (rad)."""
    values, _ = current_link_values(world.model("wam"))
    by_label = {lk.joint_label: i for i, lk in enumerate(body.links)}
    return {
        lk.joint_label: float(values[i] - (lk.mimic.multiplier * values[by_label[lk.mimic.joint]] + lk.mimic.offset))
        for i, lk in enumerate(body.links)
        if lk.mimic is not None
    }


def wam_world(tmp_path: Path, body: Body, **world: object) -> OdeEngine:
    proj, bodies = project(tmp_path, [(model("wam", drive="high_gain"), body)], **world)
    return OdeEngine(proj, bodies)


def test_a_mimic_holds_its_relation_against_a_load_while_the_master_is_held(tmp_path: Path, wam: Body) -> None:
    world = wam_world(tmp_path, wam, gravity=[0.0, 0.0, 0.0])
    for link in ("Finger0-2", "Finger1-0", "Finger1-2", "Finger2-2"):
        world.set_external_force("wam", link, [0.0, 0.0, 0.0], torque=[2.0, 2.0, 2.0])
    for _ in range(1000):
        world.step()
    assert max(map(abs, mimic_errors(world, wam).values())) < 1e-3


def test_a_configuration_set_by_hand_puts_the_mimics_on_their_masters(tmp_path: Path, wam: Body) -> None:
    world = wam_world(tmp_path, wam, gravity=[0.0, 0.0, 0.0])
    names = world.model("wam").joint_names
    q = np.zeros(len(names))
    q[names.index("JF3")] = 1.0
    world.set_link_data("wam", q=q)
    assert max(map(abs, mimic_errors(world, wam).values())) < 1e-9


def test_the_kinematic_engine_moves_mimic_joints_with_their_masters(tmp_path: Path, wam: Body) -> None:
    proj, bodies = project(tmp_path, [(model("wam"), wam)])
    engine = KinematicEngine(proj, bodies)
    names = wam.joint_names
    q_ref = np.zeros(len(names))
    for joint, value in MASTERS.items():
        q_ref[names.index(joint)] = value
    engine.apply("wam", JointCommand(q_ref=q_ref))
    engine.step()
    values, _ = engine.link_values("wam")
    by_label = {lk.joint_label: i for i, lk in enumerate(wam.links)}
    for i, lk in enumerate(wam.links):
        if lk.mimic is not None:
            master = values[by_label[lk.mimic.joint]]
            assert master == pytest.approx(MASTERS[lk.mimic.joint])
            assert values[i] == pytest.approx(lk.mimic.multiplier * master + lk.mimic.offset)


def dropped(tmp_path: Path, body: Body, file: Path, **joints: float):  # -> Engine
    """The model 3 cm above a floor, its joints free (torque mode, no torque), ODE at a 2 ms step."""
    config = ModelConfig(name="robot", file=str(file), drive="torque", joints=joints)
    pair = CollisionPair("floor", "robot", friction=0.5)
    return build("ode", tmp_path, [floor_under(body, config, 0.03), (config, body)], timestep=0.002, collisions=[pair])


def largest_mimic_error(world, body: Body, seconds: float) -> float:
    """The largest relation error (rad or m) of any mimic joint at any step of the run."""
    by_label = {lk.joint_label: i for i, lk in enumerate(body.links)}
    mimics = [(i, by_label[lk.mimic.joint], lk.mimic) for i, lk in enumerate(body.links) if lk.mimic is not None]
    largest = 0.0
    for _ in range(round(seconds / world.timestep)):
        world.step()
        values, _ = world.link_values("robot")
        largest = max(largest, *(abs(values[i] - m.multiplier * values[j] - m.offset) for i, j, m in mimics))
    return largest


def test_the_wam_dropped_with_free_joints_keeps_its_fingers_on_their_masters(
    tmp_path: Path, models_dir: Path, wam: Body
) -> None:
    # the fingers land on the floor at 0.35 s; a one-way follower threw the hand about from there
    world = dropped(tmp_path, wam, models_dir / WAM)
    assert largest_mimic_error(world, wam, 1.0) < 1e-3
    assert np.all(np.isfinite(world.read("robot").q))


@pytest.mark.parametrize(
    ("urdf", "joints", "one_way"),
    [(GRIPPER, {"finger1": 0.02}, True), (WRIST, {"yaw": 0.3}, False)],
    ids=["gripper", "wrist"],
)
def test_urdf_mechanisms_dropped_on_the_floor_hold_their_mimics(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, urdf: str, joints: dict[str, float], one_way: bool
) -> None:
    file = tmp_path / "robot.urdf"
    file.write_text(urdf)
    body = load_body(file)
    with caplog.at_level("INFO", logger="hrpsim.simserver"):
        world = dropped(tmp_path, body, file, **joints)
        assert largest_mimic_error(world, body, 2.0) < 1e-3
    assert ("follows 'finger1' one way, by its motor" in caplog.text) is one_way
