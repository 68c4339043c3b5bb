"""The run summary's verdict on a robot: only a jointed robot that started upright can fall."""

from __future__ import annotations

import math

import numpy as np
import pytest

from hrpsim.runsummary import fallen, format_summary, upright


def rotation_about_x(angle: float) -> np.ndarray:
    c, s = math.cos(angle), math.sin(angle)
    return np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])


def robot(joints: int, tilt: float, lowest: float) -> dict:
    return {
        "root_start": [0.0, 0.0, 1.0],
        "root_end": [0.0, 0.0, lowest],
        "min_root_z": lowest,
        "has_joints": joints > 0,
        "upright_start": upright(rotation_about_x(tilt)),
    }


@pytest.mark.parametrize(
    "entry, verdict",
    [
        (robot(joints=12, tilt=0.0, lowest=0.2), True),
        (robot(joints=12, tilt=0.0, lowest=0.9), False),
        (robot(joints=0, tilt=0.0, lowest=0.2), None),  # a dropped box
        (robot(joints=12, tilt=math.pi / 2, lowest=0.2), None),  # started lying on its side
    ],
)
def test_only_jointed_robots_that_started_upright_get_a_verdict(entry: dict, verdict: bool | None) -> None:
    assert fallen(entry) is verdict
    line = format_summary({"robots": {"r": entry}}).splitlines()[3]
    assert ("FELL" in line, "stayed up" in line) == (verdict is True, verdict is False)
