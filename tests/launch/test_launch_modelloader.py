"""`hrpsim launch` starts the modelloader only when something asks it for models: not for a project
whose simulator loads them itself (``services: {loader: local}``), but still beside the collision
service, which reads a body named by model file through it."""

from __future__ import annotations

from pathlib import Path

import pytest
from process_helpers import launch_summary

PROJECT = """world: {{timestep: 0.002, end_time: 0.2{collision}}}
services: {{loader: local}}
models:
  - {{name: floor, file: {models}/floor.wrl, static: true, position: [0, 0, -0.1]}}
  - {{name: box, file: {models}/box2.wrl, position: [0, 0, 0.5]}}
collisions:
  - {{a: floor, b: box}}
"""


def launch_components(tmp_path: Path, models_dir: Path, collision: str = "") -> dict:
    project = tmp_path / "local_loader.yaml"
    project.write_text(PROJECT.format(models=models_dir / "openhrp3" / "model", collision=collision))
    summary = launch_summary(project, tmp_path).summary
    assert summary["error"] is None and summary["sim_time"] == pytest.approx(0.2)
    return summary["launch"]["components"]


def test_a_project_loading_its_models_in_the_simulator_runs_without_a_modelloader(
    tmp_path: Path, models_dir: Path
) -> None:
    components = launch_components(tmp_path, models_dir)
    assert "simserver" in components and "modelloader" not in components, components
    assert not (tmp_path / "run" / "modelloader.log").exists()


def test_the_collision_service_still_gets_its_modelloader(tmp_path: Path, models_dir: Path) -> None:
    components = launch_components(tmp_path, models_dir, collision=", collision: service")
    assert {"simserver", "collision", "modelloader"} <= set(components), components
