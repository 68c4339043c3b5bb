"""ODE's own limits on joints beyond the tree (closed loops, joint limits and crawler tracks on every
engine are the conformance suite's: tests/engines/test_conformance_physics.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from sim_helpers import four_bar_body, model, project

from hrpsim.engines.ode.engine import OdeEngine
from hrpsim.errors import ConfigError


def test_extra_joint_type_ode_cannot_impose_is_refused_by_name(tmp_path: Path) -> None:
    proj, bodies = project(tmp_path, [(model("bar"), four_bar_body("z"))])
    with pytest.raises(ConfigError, match="extra joint 'AB' has type 'z'"):
        OdeEngine(proj, bodies)
