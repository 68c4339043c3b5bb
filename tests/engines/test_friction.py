"""Coulomb friction on the ODE engine: the contact cases of contact_cases.py, with built-in
contacts and with contacts from the collision service, and the slope example through hrpsim launch."""

from __future__ import annotations

import math
from functools import partial
from pathlib import Path

import contact_cases as cases
import pytest
from collision_helpers import collision_service
from process_helpers import REPO, launch_summary
from sim_helpers import ode_engine


@pytest.mark.parametrize("azimuth", cases.SLOPE_AZIMUTHS)
def test_a_slope_slides_the_same_whichever_way_it_faces(tmp_path: Path, azimuth: float) -> None:
    cases.case_slope_slides_the_same_whichever_way_it_faces(ode_engine, tmp_path, azimuth)


@pytest.mark.parametrize("azimuth", cases.PUSH_AZIMUTHS)
@pytest.mark.parametrize("factor", cases.PUSH_FACTORS)
def test_a_push_sticks_below_mu_m_g_and_slides_above(tmp_path: Path, azimuth: float, factor: float) -> None:
    cases.case_push_sticks_below_mu_m_g_and_slides_above(ode_engine, tmp_path, azimuth, factor)


@pytest.mark.parametrize("gap", [cases.GAP, 0.0, -cases.GAP], ids=["above", "touching", "into"])
@pytest.mark.parametrize("degrees", [30.0, 33.0])
@pytest.mark.parametrize("azimuth", [0.0, 45.0])
def test_static_friction_holds_until_its_limit_then_sliding_friction_acts(
    tmp_path: Path, degrees: float, azimuth: float, gap: float
) -> None:
    """The box placed exactly on the slope (gap 0) first touches it along one edge, then tips onto
    its face: that landing must not count as breaking loose."""
    cases.case_static_friction_holds_until_its_limit(ode_engine, tmp_path, degrees, azimuth, gap=gap)


def test_contacts_from_the_collision_service_get_the_same_friction(nameserver: str, tmp_path: Path) -> None:
    with collision_service(nameserver, tmp_path):
        build = partial(ode_engine, nameserver=nameserver)
        cases.case_slope_slides_the_same_whichever_way_it_faces(build, tmp_path, 45.0, collision="service")
        cases.case_static_friction_holds_until_its_limit(build, tmp_path, 30.0, 45.0, collision="service")


def test_the_slope_example_slides_down_the_diagonal_through_hrpsim_launch(tmp_path: Path) -> None:
    box = launch_summary(REPO / "examples" / "slope.yaml", tmp_path, timeout=120).summary["robots"]["box"]
    dx, dy, dz = (end - start for start, end in zip(box["root_start"], box["root_end"], strict=True))
    tilt = math.radians(28.0)
    assert math.degrees(math.atan2(dy, dx)) == pytest.approx(45.0, abs=1.0)
    assert math.atan2(-dz, math.hypot(dx, dy)) == pytest.approx(tilt, abs=0.01)  # along the surface
    assert math.dist(box["root_start"], box["root_end"]) == pytest.approx(cases.coulomb_slide(28.0, 0.5), rel=0.05)


def test_ode_solves_every_step_of_the_slope_and_push_cases(tmp_path: Path, capfd: pytest.CaptureFixture) -> None:
    """ODE reports "LCP internal error, s <= 0" on stderr when it gives up on a step's contacts."""
    for azimuth in (0.0, 45.0):
        engine, _ = cases.slope_engine(ode_engine, tmp_path, 30.0, azimuth, 0.6, 0.4)
        cases.run(engine, 1.0)
    for azimuth in cases.PUSH_AZIMUTHS:
        cases.case_push_sticks_below_mu_m_g_and_slides_above(ode_engine, tmp_path, azimuth, 0.95)
    assert "LCP internal error" not in capfd.readouterr().err
