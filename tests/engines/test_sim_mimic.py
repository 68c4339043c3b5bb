"""Mimic joints follow their master in the simulator: the Barrett WAM's finger joints (COLLADA
formulas) and the same robot written as URDF with <mimic> elements."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from sim_helpers import model, project

from hrpsim.bodyinfo import Body
from hrpsim.engines.base import JointCommand
from hrpsim.engines.kinematic.engine import KinematicEngine
from hrpsim.engines.ode.engine import OdeEngine
from hrpsim.engines.ode.placement import current_link_values
from hrpsim.modelloader import load_body
from hrpsim.modelloader.urdf_export import write_urdf

WAM = "openrave/robots/barrett-wam-sensors.zae"
MASTERS = {"JF1": 0.9, "JF2": 0.6, "JF3": 1.2, "JF4": 1.5}


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
