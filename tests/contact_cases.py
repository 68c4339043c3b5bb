"""Contact physics every engine must show, as Coulomb has it: the same friction in every
direction, static friction that holds up to its limit, sliding friction after it.

Each case is a function ``case(build, tmp, ..., **world)``: ``build(project, bodies)`` makes
the engine under test from a project object (``sim_helpers.ode_engine`` for ODE, with any
options bound by ``functools.partial``), ``tmp`` is a folder, and ``world`` settings go into the
project (``collision="service"``, say). The box is
1 kg, 0.2 m, its centre 0.1 mm above the surface when placed (``gap`` changes that); g = 9.8.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from sim_helpers import box_body, floor_body, model, project

from hrpsim.project import CollisionPair
from hrpsim.transforms import axis_angle_matrix

G = 9.8
GAP = 1e-4  # m between the placed box and the surface
Build = Callable[..., Any]

SLOPE_AZIMUTHS = [0.0, 90.0, 45.0, 30.0]  # downhill direction from world x, degrees
PUSH_AZIMUTHS = [0.0, 30.0, 45.0]
PUSH_FACTORS = [0.95, 1.2]  # push / (mu m g)


def root_position(engine: Any, name: str) -> np.ndarray:
    return np.array(engine.read(name).root_position, float)


def run(engine: Any, seconds: float) -> None:
    for _ in range(round(seconds / engine.timestep)):
        engine.step()


def slope_engine(
    build: Build,
    tmp: Path,
    degrees: float,
    azimuth: float,
    friction: float,
    sliding: float | None = None,
    *,
    gap: float = GAP,
    **world: Any,
) -> tuple[Any, np.ndarray]:
    """A box resting on a floor tilted ``degrees`` so that it falls toward ``azimuth``, its face
    ``gap`` metres above the slope (0: touching; negative: into it); the engine and the downhill
    unit vector."""
    tilt, down = math.radians(degrees), math.radians(azimuth)
    axis = (-math.sin(down), math.cos(down), 0.0)  # z x downhill: tilting about it lowers the downhill side
    rotation = (*axis, tilt)
    normal = axis_angle_matrix(axis, tilt) @ np.array([0.0, 0.0, 1.0])
    proj, bodies = project(
        tmp,
        [
            (model("floor", static=True, rotation=rotation), floor_body()),
            (model("box", position=tuple(normal * (0.1 + gap)), rotation=rotation), box_body(mass=1.0)),
        ],
        collisions=[CollisionPair("floor", "box", friction=friction, sliding_friction=sliding)],
        **world,
    )
    downhill = np.array([math.cos(down) * math.cos(tilt), math.sin(down) * math.cos(tilt), -math.sin(tilt)])
    return build(proj, bodies), downhill


def coulomb_slide(degrees: float, mu: float, seconds: float = 1.0) -> float:
    """How far a block slides from rest down a slope in ``seconds`` with sliding friction mu."""
    theta = math.radians(degrees)
    return max(0.0, G * (math.sin(theta) - mu * math.cos(theta))) * seconds**2 / 2


def case_slope_slides_the_same_whichever_way_it_faces(build: Build, tmp: Path, azimuth: float, **world: Any) -> None:
    """28 degrees, mu 0.5 (tan 28 = 0.53): 0.137 m down the slope in 1 s, whatever its azimuth."""
    engine, downhill = slope_engine(build, tmp, 28.0, azimuth, 0.5, **world)
    start = root_position(engine, "box")
    run(engine, 1.0)
    moved = root_position(engine, "box") - start
    assert float(moved @ downhill) == pytest.approx(coulomb_slide(28.0, 0.5), rel=0.05)
    assert np.linalg.norm(moved - downhill * (moved @ downhill)) < 0.002  # straight down, not sideways


def case_static_friction_holds_until_its_limit(
    build: Build, tmp: Path, degrees: float, azimuth: float, *, gap: float = GAP, **world: Any
) -> None:
    """friction 0.6, sliding_friction 0.4: on 30 degrees (tan 30 = 0.577) the placed box stays
    (under 2 mm in 1 s), whether placed above the slope, exactly on it or slightly into it; on 33
    degrees (tan 33 = 0.649) it breaks loose and slides with mu 0.4."""
    engine, downhill = slope_engine(build, tmp, degrees, azimuth, 0.6, 0.4, gap=gap, **world)
    start = root_position(engine, "box")
    run(engine, 1.0)
    moved = float((root_position(engine, "box") - start) @ downhill)
    if math.tan(math.radians(degrees)) < 0.6:
        assert abs(moved) < 0.002
    else:
        assert moved == pytest.approx(coulomb_slide(degrees, 0.4), rel=0.05)


def case_push_sticks_below_mu_m_g_and_slides_above(
    build: Build, tmp: Path, azimuth: float, factor: float, **world: Any
) -> None:
    """A horizontal push of ``factor`` mu m g at ``azimuth`` on a resting box (mu 0.5): below 1 it
    stays put; above, it slides along the push with (factor - 1) mu g."""
    mu = 0.5
    proj, bodies = project(
        tmp,
        [
            (model("floor", static=True), floor_body()),
            (model("box", position=(0.0, 0.0, 0.1 + GAP)), box_body(mass=1.0)),
        ],
        collisions=[CollisionPair("floor", "box", friction=mu)],
        **world,
    )
    engine = build(proj, bodies)
    run(engine, 0.05)  # landed and at rest
    angle = math.radians(azimuth)
    along = np.array([math.cos(angle), math.sin(angle), 0.0])
    engine.set_external_force("box", "BOX", (factor * mu * 1.0 * G) * along)
    start = root_position(engine, "box")
    run(engine, 1.0)
    moved = root_position(engine, "box") - start
    if factor < 1.0:
        assert np.linalg.norm(moved) < 0.001
    else:
        assert float(moved @ along) == pytest.approx((factor - 1.0) * mu * G / 2, rel=0.05)
        sideways = float(np.linalg.norm(moved - along * (moved @ along)))
        assert sideways < math.tan(math.radians(2.0)) * float(moved @ along)  # along the push within 2 degrees
