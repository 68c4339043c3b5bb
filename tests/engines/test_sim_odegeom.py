"""hrpsim.odegeom: BodyInfo shapes become ODE geoms at the right place and size."""

from __future__ import annotations

import numpy as np
import ode
import pytest

from hrpsim.bodyinfo import Shape
from hrpsim.engines.ode.geometry import Frame, make_geoms, mesh_bounding_box
from hrpsim.errors import ModelError


def _probe_hits(geom: ode.GeomObject, point: tuple[float, float, float]) -> bool:
    probe = ode.GeomSphere(None, 1e-4)
    probe.setPosition(point)
    return len(ode.collide(geom, probe)) > 0


def test_vrml_cylinder_axis_lies_along_world_y_for_a_static_geom() -> None:
    space = ode.HashSpace()
    (geom,) = make_geoms([Shape("cylinder", radius=0.1, height=1.0)], space)
    assert _probe_hits(geom, (0.0, 0.45, 0.0))
    assert not _probe_hits(geom, (0.0, 0.0, 0.45))
    assert geom.shape_index == 0


def test_geom_on_a_body_is_offset_from_the_centre_of_mass() -> None:
    world = ode.World()
    body = ode.Body(world)
    body.setPosition((1.0, 2.0, 3.0))
    space = ode.HashSpace()
    shape = Shape("box", translation=np.array([0.5, 0.0, 0.0]), size=np.array([0.2, 0.2, 0.2]))
    (geom,) = make_geoms([shape], space, body=body, frame=Frame(np.array([0.0, 0.0, -1.0]), np.eye(3)))
    assert np.allclose(geom.getPosition(), (1.5, 2.0, 2.0))
    assert np.allclose(geom.getLengths(), (0.2, 0.2, 0.2))


def test_mesh_becomes_its_oriented_bounding_box() -> None:
    vertices = np.array([[x, y, z] for x in (0, 2) for y in (0, 1) for z in (0, 0.5)], dtype=float)
    triangles = np.array([[0, 1, 2], [1, 2, 3]])
    box = mesh_bounding_box(Shape("mesh", vertices=vertices, triangles=triangles))
    assert np.allclose(sorted(box.size), [0.5, 1.0, 2.0])
    assert np.allclose(box.center, (1.0, 0.5, 0.25))


def test_plane_on_a_moving_body_and_nan_sizes_are_refused() -> None:
    world = ode.World()
    space = ode.HashSpace()
    with pytest.raises(ModelError, match="plane"):
        make_geoms([Shape("plane")], space, body=ode.Body(world), where="model m link L")
    with pytest.raises(ModelError, match="model m link L shape 0: sphere: non-finite size or pose"):
        make_geoms([Shape("sphere", radius=float("nan"))], space, where="model m link L")
    with pytest.raises(ModelError, match="model m link L shape 0: box: reaches beyond"):
        make_geoms([Shape("box", size=np.array([1e20, 1.0, 1.0]))], space, where="model m link L")


@pytest.mark.parametrize(
    "kind, radius, height",
    [("sphere", 0.0, 0.0), ("cylinder", 0.0, 1.0), ("cylinder", 0.1, 0.0), ("capsule", 0.0, 0.5), ("cone", 0.1, 0.0)],
)
def test_round_shapes_ode_would_abort_on_are_refused_by_name(kind: str, radius: float, height: float) -> None:
    space = ode.SimpleSpace()
    with pytest.raises(ModelError, match=f"{kind}: (radius|height) must be positive"):
        make_geoms([Shape(kind, radius=radius, height=height)], space, where="robot/LINK")
