"""Choreonoid body files through ``hrpsim model convert`` to MJCF and back (the command's own entry
point, and for the refusals and the static bodies the command as a process): the
BodyInfo read again is the one read from the body file, to the six significant digits MuJoCo writes,
but for what MJCF has no place for (docs/models.md "Choreonoid body files", "Converting"): drawn-only
shapes, velocity limits, the joint fields of a fixed joint, cameras and range sensors, sensors'
limits, a cone (written as its cylinder), an inertia no rigid body has (balanced), and a mesh's
vertices, which come back centred on the mesh's own frame (the same points in the link's frame)."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from modelloader_helpers import MODELS, REPO

from hrpsim.bodyinfo import Body, Link, bodies_equal
from hrpsim.modelloader import load_body
from hrpsim.modelloader.convert import main as convert_command

pytest.importorskip("mujoco")

WRITTEN_DIGITS = {"rtol": 1e-4, "atol": 1e-6}  # MuJoCo writes six significant digits
MJCF_SENSORS = ("force", "gyro", "accel")  # those the MJCF writer puts on sites
JOINT_FIELDS = ("joint_axis", "q_lower", "q_upper", "dq_lower", "dq_upper", "torque_lower", "torque_upper")
JOINT_FIELDS += ("rotor_inertia", "gear_ratio", "joint_id", "joint_name")

BODIES = [
    "GR001/GR001.body",
    "SR1/SR1.body",
    "SR1/SR1DH.body",
    "SR1/SR1Hand.body",
    "SR1/SR1-2D.body",
    "PA10/PA10.body",
    "JACO2/JACO2.body",
    "WAREC1/WAREC1.body",
    "Tank/TankBody.body",
    "misc/HandyRockDrill.body",
    "misc/SpringModel.body",
    "misc/pendulum.body",
    "misc/ragdoll.body",
    "misc/box.body",
    "misc/box1.body",
    "misc/box2.body",
    "misc/box3.body",
    "misc/box4.body",
    "misc/box5.body",
    "misc/ball.body",
    "misc/rod.body",
    "misc/Torus.body",
    "misc/ellipsoid1.body",
    "misc/submersible.body",
    "misc/suctioncup.body",
    "misc/fencedfloor.body",
]
CRAWLERS = ["Tank/Tank.body", "Tank/SimpleTank.body", "misc/crawler.body", "misc/conveyor.body"]


def convert(source: Path, out: Path) -> subprocess.CompletedProcess[str]:
    """``hrpsim model convert SOURCE OUT`` as a user types it, in a process of its own."""
    return subprocess.run(
        [sys.executable, "-m", "hrpsim", "model", "convert", str(source), str(out)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )


def convert_here(source: Path, out: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The same command by its entry point in this process: the corpus's bodies need not each pay
    for starting an interpreter (the tests below run the command itself in a process)."""
    code = convert_command([str(source), str(out)])
    assert code == 0, capsys.readouterr().err


def what_mjcf_keeps(body: Body, unbalanced: set[str]) -> Body:
    """``body`` without what an MJCF file has no place for, its meshes in their link's frame
    (``unbalanced``: links whose inertia MuJoCo's compiler balances, see the test below)."""
    body.source, body.format, body.metadata = "", "", {}
    body.sensors = [dataclasses.replace(s, params={}) for s in body.sensors if s.type in MJCF_SENSORS]
    blank = Link(name="")
    for link in body.links:
        link.visuals, link.dq_lower, link.dq_upper = [], blank.dq_lower, blank.dq_upper
        if link.name in unbalanced:
            link.inertia = blank.inertia.copy()
        if link.joint_type not in ("rotate", "slide"):
            for field in JOINT_FIELDS:
                setattr(link, field, getattr(blank, field))
        for shape in link.shapes:
            if shape.kind == "cone":
                shape.kind = "cylinder"  # MuJoCo has no cone: written as the cylinder around it
            if shape.kind == "mesh":
                shape.vertices = np.asarray(shape.vertices) @ np.asarray(shape.rotation).T + shape.translation
                shape.rotation, shape.translation = blank.rotation.copy(), blank.translation.copy()
    return body


@pytest.mark.parametrize("rel", BODIES)
def test_body_to_mjcf_reads_back_the_same_body(rel: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = MODELS / "choreonoid-body" / rel
    out = tmp_path / "body.xml"
    convert_here(source, out, capsys)
    first, again = load_body(source), load_body(out)
    assert again.format == "mjcf"
    unbalanced = {lk.name for lk in first.links if not obeys_triangle_inequality(lk.inertia)}
    kept, back = what_mjcf_keeps(first, unbalanced), what_mjcf_keeps(again, unbalanced)
    assert back.joint_names == kept.joint_names  # the controller's order, SR1's legs first
    assert bodies_equal(kept, back, **WRITTEN_DIGITS), differences(kept.to_wire(), back.to_wire())


@pytest.mark.parametrize("rel", ["misc/floor.body", "misc/slope.body", "misc/longtable.body"])
def test_a_static_body_comes_back_as_a_massless_fixed_root(rel: str, tmp_path: Path) -> None:
    """MJCF puts a static body's geoms on the world, with no body to weigh: the only difference."""
    source = MODELS / "choreonoid-body" / rel
    assert convert(source, tmp_path / "static.xml").returncode == 0
    first, again = load_body(source), load_body(tmp_path / "static.xml")
    assert first.static and not again.static and again.root.joint_type == "fixed" and again.total_mass == 0.0
    for body in (first, again):
        body.static = False
        for link in body.links:
            link.mass, link.com, link.inertia = 0.0, np.zeros(3), np.zeros((3, 3))
    kept, back = what_mjcf_keeps(first, set()), what_mjcf_keeps(again, set())
    assert bodies_equal(kept, back, **WRITTEN_DIGITS), differences(kept.to_wire(), back.to_wire())


def obeys_triangle_inequality(inertia: np.ndarray) -> bool:
    a, b, c = np.sort(np.linalg.eigvalsh(np.asarray(inertia, float)))
    return bool(a + b >= c * (1 - 1e-9))


@pytest.mark.parametrize(("rel", "link"), [("Tank/TankBody.body", "CHASSIS"), ("misc/ragdoll.body", "HAND_R")])
def test_an_inertia_no_rigid_body_has_comes_back_balanced(rel: str, link: str, tmp_path: Path) -> None:
    """The chassis of TankBody (0.1, 0.1, 0.5 kg m^2) breaks I1 + I2 >= I3, which MuJoCo's compiler
    refuses unless it balances the moments: the written link keeps its mass and centre of mass."""
    source = MODELS / "choreonoid-body" / rel
    assert convert(source, tmp_path / "body.xml").returncode == 0
    first, again = load_body(source), load_body(tmp_path / "body.xml")
    before, after = first.links[first.link_index(link)], again.links[again.link_index(link)]
    assert not obeys_triangle_inequality(before.inertia) and obeys_triangle_inequality(after.inertia)
    assert after.mass == pytest.approx(before.mass) and np.allclose(after.com, before.com, atol=1e-6)


def differences(a: object, b: object, where: str = "") -> list[str]:
    """Where two wire forms of a body differ (the failure's message)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return [d for k in a if k in b for d in differences(a[k], b[k], f"{where}.{k}")]
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [d for i, (p, q) in enumerate(zip(a, b, strict=True)) for d in differences(p, q, f"{where}[{i}]")]
    if bodies_equal_values(a, b):
        return []
    return [f"{where}: {a!r:.80} != {b!r:.80}"]


def bodies_equal_values(a: object, b: object) -> bool:
    if a is None or b is None:
        return a is b
    try:
        return bool(np.allclose(np.asarray(a, float), np.asarray(b, float), **WRITTEN_DIGITS))
    except (TypeError, ValueError):
        return a == b


@pytest.mark.parametrize("rel", CRAWLERS)
def test_a_crawler_body_is_refused_as_mjcf_with_the_way_out(rel: str, tmp_path: Path) -> None:
    done = convert(MODELS / "choreonoid-body" / rel, tmp_path / "tank.xml")
    assert done.returncode != 0
    assert "crawler joints" in done.stderr and "world.engine: ode" in done.stderr
    assert not (tmp_path / "tank.xml").exists()


def test_no_tolerance_makes_an_unbounded_limit_equal_to_a_bound() -> None:
    """The comparison above would pass limits lost in the writing if ±inf matched any bound."""
    bounded, unbounded = Link(name="j", q_upper=1.0), Link(name="j")
    first, again = Body(name="b", links=[bounded]), Body(name="b", links=[unbounded])
    assert not bodies_equal(first, again, **WRITTEN_DIGITS) and not bodies_equal(again, first, **WRITTEN_DIGITS)
    assert bodies_equal(again, Body(name="b", links=[Link(name="j")]), **WRITTEN_DIGITS)
