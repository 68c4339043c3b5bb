"""The URDF and COLLADA entries of tests/data/model_facts.json, checked through the real
``hrpsim model info --json`` command (SR1.urdf, pumaarm.zae, barrett-wam-sensors.zae)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from urdf_helpers import MODELS, facts

# OpenRAVE interface names and the spec's names for the sensor types BodyInfo knows
SENSOR_TYPES = {"BaseLaser2D": "range", "BaseCamera": "vision", "base_laser2d": "range",
                "base_pinhole_camera": "vision", "base_force6d": "force"}  # fmt: skip

CASES = ["choreonoid/model/SR1/SR1.urdf", "openrave/robots/pumaarm.zae", "openrave/robots/barrett-wam-sensors.zae"]


@pytest.mark.parametrize("relative", CASES)
def test_model_info_matches_facts(relative: str):
    expected = facts(relative)
    done = subprocess.run(
        [sys.executable, "-m", "hrpsim", "model", "info", str(MODELS / relative), "--json"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    info = json.loads(done.stdout)
    assert info["name"] == expected["model_name"]
    assert info["root"] == expected["root_link"]
    order = expected.get("link_names_preorder", expected["link_names"])  # BodyInfo links are pre-order
    assert info["links"] == order
    assert len(info["links"]) == expected["num_links"]
    assert info["joints"] == expected["joint_names_in_order"]
    assert info["dof"] == expected["dof"]
    assert info["mass"] == pytest.approx(expected["total_mass"], rel=1e-9)
    got = [(s["name"], s["type"], s["link"]) for s in info["sensors"]]
    assert got == [(s["name"], SENSOR_TYPES[s["type"]], s["parent_link"]) for s in expected["sensors"]]
    assert [s["id"] for s in info["sensors"]] == [0] * len(expected["sensors"])  # one of each type here
    assert info["extra_joints"] == expected["extra_joints"] == []
