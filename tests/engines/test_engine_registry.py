"""Adding an engine is one folder plus one registry line: a toy engine (tests/data/engines/toy_engine)
registered by name runs a project, its settings checked with the project file, and nothing else
in the repository knows of it."""

from __future__ import annotations

import math
import subprocess
from pathlib import Path

import pytest
from process_helpers import REPO
from sim_helpers import BOX_URDF

import hrpsim
from hrpsim import engine_registry
from hrpsim.errors import ConfigError
from hrpsim.project import load_project

TOY_FOLDER = REPO / "tests" / "data" / "engines"
G = 9.8


@pytest.fixture
def toy(monkeypatch: pytest.MonkeyPatch) -> str:
    """The toy engine's folder on the path and its one registry line."""
    monkeypatch.syspath_prepend(str(TOY_FOLDER))
    monkeypatch.setitem(engine_registry.ENGINES, "toy", "toy_engine")
    return "toy"


def _project(folder: Path, world: str) -> Path:
    (folder / "box.urdf").write_text(BOX_URDF.format(mass=1.0, i=1.0 / 60))
    path = folder / "toy.yaml"
    models = "models:\n  - {name: box, file: box.urdf, position: [0, 0, 5]}\n"
    path.write_text(f"world: {{{world}}}\nservices: {{loader: local}}\n{models}")
    return path


def test_a_registered_engine_runs_a_project_with_its_own_settings(toy: str, tmp_path: Path) -> None:
    free = hrpsim.Simulation(_project(tmp_path, f"engine: {toy}, end_time: 1.0")).run()
    (tmp_path / "slow").mkdir()
    slowed = hrpsim.Simulation(_project(tmp_path / "slow", f"engine: {toy}, end_time: 1.0, {toy}: {{drag: 2.0}}"))
    summary = slowed.run()
    assert free["engine"] == summary["engine"] == toy
    # semi-implicit Euler at 1 ms falls g t dt / 2 further than the curve: 5 mm after 1 s
    assert free["robots"]["box"]["root_end"][2] == pytest.approx(5.0 - G / 2, abs=0.01)
    # with drag k the fall is g/k (t - (1 - e^-kt)/k): 1.6 m after 1 s at k = 2
    k = 2.0
    fallen = G / k * (1.0 - (1.0 - math.exp(-k)) / k)
    assert summary["robots"]["box"]["root_end"][2] == pytest.approx(5.0 - fallen, abs=0.02)
    assert slowed.state("box").root_velocity[2] == pytest.approx(-G / k * (1.0 - math.exp(-k)), abs=0.01)


def test_its_settings_are_checked_with_the_rest_of_the_project_file(toy: str, tmp_path: Path) -> None:
    path = _project(tmp_path, f"engine: {toy}, sync: sometimes, {toy}: {{drag: -1, colour: red}}")
    with pytest.raises(ConfigError) as err:
        load_project(path)
    text = str(err.value)
    assert f"{path}: world.sync: must be one of" in text
    assert f"{path}: world.{toy}.drag: must be at least 0, got -1" in text
    assert f"{path}: world.{toy}.colour: unknown setting (settings: drag)" in text


def test_an_unregistered_engine_is_refused_naming_the_registered_ones(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"world\.engine: must be one of ode, kinematic, mujoco, got 'toy'"):
        load_project(_project(tmp_path, "engine: toy"))
    with pytest.raises(ConfigError, match=r"world\.toy: unknown key"):
        load_project(_project(tmp_path, "toy: {drag: 1}"))


def test_nothing_outside_its_folder_names_the_toy_engine() -> None:
    """The registration above is the only other place: the kernel, the simulator and the install
    take the engine from the registry."""
    tracked = subprocess.run(
        ["git", "grep", "-l", "toy_engine", "--", ":!tests/engines", ":!tests/data/engines", ":!docs"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert tracked.stdout.split() == []
