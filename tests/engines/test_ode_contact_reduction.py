"""ODE keeps the contacts that span each pair of links' patch, not every point found: a sole of
several boxes or a mesh sole makes four contacts per normal direction, and still holds its body
as the whole patch would (docs/physics.md, *Speed*)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from process_helpers import MODELS
from sim_helpers import box_inertia, floor_body, model, project

from hrpsim.bodyinfo import Body, Link, Shape
from hrpsim.engines.ode.contact_reduction import KEEP, spanning_points
from hrpsim.engines.ode.engine import OdeEngine
from hrpsim.modelloader import load_body
from hrpsim.project import CollisionPair


def test_the_kept_points_are_the_deepest_and_the_patch_corners() -> None:
    xs, ys = np.meshgrid(np.linspace(0.0, 0.2, 5), np.linspace(0.0, 0.1, 4))
    plane = np.column_stack((xs.ravel(), ys.ravel()))
    depths = np.full(len(plane), 1e-4)
    depths[7] = 2e-4  # an inner point, deepest
    kept = spanning_points(plane, depths)
    assert kept[0] == 7
    corners = {tuple(p) for p in plane[kept[1:]]}
    assert len(kept) == KEEP
    assert corners <= {(0.0, 0.0), (0.2, 0.0), (0.0, 0.1), (0.2, 0.1)}


def sole_of_boxes(mass: float = 20.0) -> Body:
    """A free block whose underside is three boxes side by side (as HRP-4C's soles are made)."""
    shapes = [
        Shape("box", translation=np.array([x, 0.0, 0.0]), size=np.array([0.1, 0.12, 0.04])) for x in (-0.1, 0, 0.1)
    ]
    link = Link("SOLE", joint_type="free", mass=mass, inertia=box_inertia(mass, (0.3, 0.12, 0.04)), shapes=shapes)
    return Body("sole", links=[link])


def links_of_contacts(engine: OdeEngine) -> list[tuple[str, str]]:
    return [(p["a"], p["b"]) for p in engine.contact_points()]


def test_a_sole_of_three_boxes_rests_on_four_contacts(tmp_path: Path) -> None:
    proj, bodies = project(
        tmp_path,
        [(model("floor", static=True), floor_body()), (model("sole", position=(0.0, 0.0, 0.0199)), sole_of_boxes())],
        collisions=[CollisionPair("floor", "sole")],
    )
    engine = OdeEngine(proj, bodies)
    for _ in range(500):
        engine.step()
    engine.collide()
    points = engine.contact_points()
    assert len(points) == KEEP  # three boxes find 12
    xs = sorted(p["position"][0] for p in points)
    assert xs[0] == pytest.approx(-0.15, abs=1e-3) and xs[-1] == pytest.approx(0.15, abs=1e-3)  # the whole sole
    state = engine.read("sole")
    assert state.root_position[2] == pytest.approx(0.02, abs=1e-3)
    assert state.root_rotation[2, 2] == pytest.approx(1.0, abs=1e-6)  # level: held at both ends


def test_a_patch_against_two_faces_keeps_both_normals(tmp_path: Path) -> None:
    """A sole pushed into a corner (floor and wall of one link) touches both: neither face is dropped."""
    floor_and_wall = floor_body()
    floor_and_wall.links[0].shapes.append(
        Shape("box", translation=np.array([0.25, 0.0, 0.5]), size=np.array([0.1, 2.0, 1.0]))
    )
    proj, bodies = project(
        tmp_path,
        [(model("room", static=True), floor_and_wall), (model("sole", position=(0.0, 0.0, 0.0199)), sole_of_boxes())],
        collisions=[CollisionPair("room", "sole")],
    )
    engine = OdeEngine(proj, bodies)
    engine.set_external_force("sole", "SOLE", (400.0, 0.0, 0.0))
    for _ in range(1000):
        engine.step()
    engine.collide()
    normals = {tuple(np.round(np.abs(p["normal"]), 3)) for p in engine.contact_points()}
    assert normals == {(0.0, 0.0, 1.0), (1.0, 0.0, 0.0)}
    assert engine.read("sole").root_position[0] == pytest.approx(0.05, abs=2e-3)  # at the wall (x = 0.2), not in it


def test_gr001s_mesh_soles_stand_on_four_contacts_each(tmp_path: Path) -> None:
    robot = load_body(MODELS / "choreonoid-body/GR001/GR001.body")
    proj, bodies = project(
        tmp_path,
        [
            (model("floor", static=True), floor_body()),
            (model("robot", position=(0.0, 0.0, 0.1605), drive="high_gain"), robot),
        ],
        collisions=[CollisionPair("floor", "robot", friction=0.5)],
        timestep=0.002,
    )
    engine = OdeEngine(proj, bodies)
    for _ in range(500):
        engine.step()
    engine.collide()
    pairs = links_of_contacts(engine)
    assert len(pairs) <= 2 * KEEP  # each sole's mesh finds up to 32
    assert len(set(pairs)) == 2
    assert engine.read("robot").root_position[2] == pytest.approx(0.1605, abs=2e-3)
