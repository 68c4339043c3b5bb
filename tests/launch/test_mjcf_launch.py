"""An MJCF project run end to end by ``hrpsim launch`` (real processes: the nameserver, the
modelloader service reading dm_control's humanoid and, with the world option, its floor, the
simulator): the humanoid falls onto its own floor and rests there on ODE, on MuJoCo, and on ODE with
the collision service finding the contacts."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from mjcf_helpers import suite_folder
from process_helpers import launch_summary

pytest.importorskip("mujoco")

PROJECT = """world: {{timestep: 0.002, end_time: 2.0, joint_limits: true, engine: {engine}, collision: {collision}}}
models:
  - {{name: floor, file: humanoid.xml, static: true, options: {{world: true}}}}
  - {{name: humanoid, file: humanoid.xml}}
collisions:
  - {{a: floor, b: humanoid, friction: 0.7}}
"""


@pytest.mark.parametrize(("engine", "collision"), [("ode", "builtin"), ("mujoco", "builtin"), ("ode", "service")])
def test_the_humanoid_falls_onto_its_own_floor_and_rests(engine: str, collision: str, tmp_path: Path) -> None:
    shutil.copy(suite_folder() / "humanoid.xml", tmp_path / "humanoid.xml")
    shutil.copytree(suite_folder() / "common", tmp_path / "common")
    project = tmp_path / "humanoid.yaml"
    project.write_text(PROJECT.format(engine=engine, collision=collision))
    summary = launch_summary(project, tmp_path, timeout=600).summary
    assert summary["error"] is None and summary["sim_time"] == pytest.approx(2.0)
    components = summary["launch"]["components"]
    assert "modelloader" in components and ("collision" in components) == (collision == "service")
    loaded = Path(components["modelloader"]["log"]).read_text()
    assert "(humanoid_world, 1 links)" in loaded and "(humanoid, 25 links)" in loaded  # both through the service
    robot = summary["robots"]["humanoid"]
    assert robot["root_start"][2] == pytest.approx(1.5, abs=1e-3)  # the torso where the file puts it
    assert 0.05 < robot["root_end"][2] < 0.6  # fallen onto the floor, not through it
    assert robot["min_root_z"] > 0.0
