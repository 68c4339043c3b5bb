"""Meshes collide by their triangles (libode's trimesh through hrpsim.odemesh), not by the
bounding box that stands in for them in the broad phase."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import ode
import pytest

from hrpsim.bodyinfo import Shape
from hrpsim.engines.ode import trimesh as odemesh
from hrpsim.engines.ode.geometry import make_geoms
from hrpsim.project import load_project

pytestmark = pytest.mark.skipif(not odemesh.AVAILABLE, reason="this libode has no trimesh collision")

# A wedge 2 m long rising from z 0 at x = -1 to z 1 at x = +1: its bounding box top is at z 1.
WEDGE_V = np.array([[-1, -1, 0], [1, -1, 0], [1, 1, 0], [-1, 1, 0], [1, -1, 1], [1, 1, 1]], float)
WEDGE_T = np.array([[0, 2, 1], [0, 3, 2], [0, 1, 4], [3, 5, 2], [1, 2, 5], [1, 5, 4], [0, 4, 5], [0, 5, 3]])
SQUARE_V = np.array([[-1, -1, 0], [1, -1, 0], [1, 1, 0], [-1, 1, 0]], float)
SQUARE_T = np.array([[0, 1, 2], [0, 2, 3]])


class Drop:
    """A body dropped onto a static mesh, stepped with exact mesh contacts. Its ODE objects are
    released in order by :meth:`close` (pyode must not free them from cycles in any order)."""

    def __init__(self, mesh: Shape, make_body_geom, start: tuple[float, float, float], mu: float) -> None:
        self.world = ode.World()
        self.world.setGravity((0, 0, -9.8))
        self.space, self.group = ode.SimpleSpace(), ode.JointGroup()
        self.ground = make_geoms([mesh], self.space, where="ground")
        self.body = ode.Body(self.world)
        self.geom = make_body_geom(self.space, self.body)
        self.body.setPosition(start)
        self.mu = mu

    def _near(self, _args: object, g1: ode.GeomObject, g2: ode.GeomObject) -> None:
        for contact in odemesh.collide(g1, g2):
            contact.setMode(0x3000)  # Approx1: mu is a coefficient
            contact.setMu(self.mu)
            ode.ContactJoint(self.world, self.group, contact).attach(g1.getBody(), g2.getBody())

    def run(self, steps: int) -> Drop:
        for _ in range(steps):
            self.space.collide(None, self._near)
            self.world.step(0.001)
            self.group.empty()
        return self

    def close(self) -> None:
        self.group.empty()
        for geom in [*self.ground, self.geom]:
            self.space.remove(geom)
        self.ground = self.geom = self.body = None
        self.space = self.group = self.world = None


def box_body(space: ode.SpaceBase, body: ode.Body) -> ode.GeomObject:
    mass = ode.Mass()
    mass.setBox(500.0, 0.1, 0.1, 0.1)
    body.setMass(mass)
    geom = ode.GeomBox(space, (0.1, 0.1, 0.1))
    geom.setBody(body)
    return geom


def sphere_body(space: ode.SpaceBase, body: ode.Body) -> ode.GeomObject:
    mass = ode.Mass()
    mass.setSphere(500.0, 0.1)
    body.setMass(mass)
    geom = ode.GeomSphere(space, 0.1)
    geom.setBody(body)
    return geom


def test_a_box_rests_on_the_slope_of_a_mesh_wedge_not_on_its_bounding_box() -> None:
    slope = math.atan(0.5)
    normal = np.array([-math.sin(slope), 0.0, math.cos(slope)])
    surface = np.array([0.2, 0.0, 0.6])  # on the slope: z = (x + 1) / 2
    start = surface + (0.05 + 0.005) * normal  # 5 mm above it, turned to lie flat on it
    drop = Drop(Shape("mesh", vertices=WEDGE_V, triangles=WEDGE_T), box_body, tuple(start), mu=2.0)
    c, s_ = math.cos(-slope), math.sin(-slope)
    drop.body.setRotation((c, 0.0, s_, 0.0, 1.0, 0.0, -s_, 0.0, c))
    drop.run(1000)
    x, _, z = drop.body.getPosition()
    drop.close()
    assert x == pytest.approx(start[0], abs=0.01), "mu 2 holds it on a slope of tan 0.5"
    assert z == pytest.approx((x + 1.0) / 2.0 + 0.05 / math.cos(slope), abs=0.003)
    assert z < 0.8, "it rests on the triangles, not on the bounding box top (z 1)"


def test_a_sphere_on_a_flat_mesh_rests_where_it_would_on_a_plane() -> None:
    drop = Drop(Shape("mesh", vertices=SQUARE_V, triangles=SQUARE_T), sphere_body, (0.2, -0.3, 0.4), mu=0.5)
    drop.run(1000)
    height, speed = drop.body.getPosition()[2], np.linalg.norm(drop.body.getLinearVel())
    drop.close()
    assert height == pytest.approx(0.1, abs=0.002)
    assert speed < 1e-3


def test_each_mesh_geom_carries_its_exact_trimesh_and_plain_shapes_do_not() -> None:
    space = ode.SimpleSpace()
    mesh, box = make_geoms(
        [Shape("mesh", vertices=WEDGE_V, triangles=WEDGE_T), Shape("box", size=np.ones(3))], space, where="m"
    )
    assert odemesh.exact_mesh_of(mesh) is not None and odemesh.exact_mesh_of(box) is None
    probe = ode.GeomSphere(None, 0.1)
    probe.setPosition((0.9, 0.0, 0.5))  # inside the wedge's bounding box, above its slope at z 0.45 + 0.1
    assert ode.collide(mesh, probe), "the bounding box alone would report a contact"
    assert odemesh.collide(mesh, probe) == [], "the triangles are below the sphere"


def test_the_sample_crawler_stands_still_on_its_mesh_ramp_environment(models_dir: Path) -> None:
    from hrpsim.engines.ode.engine import OdeEngine
    from hrpsim.modelloader import load_body

    project = load_project(models_dir / "openhrp3/project/SampleCrawler.xml")
    world = OdeEngine(project, {m.name: load_body(m.file) for m in project.models})
    try:
        start = world.read("crawler").root_position.copy()
        for _ in range(1000):
            world.step()
        moved = world.read("crawler").root_position - start
        assert np.linalg.norm(moved[:2]) < 0.01, f"with no command the crawler drifted by {moved}"
    finally:
        world.release()
