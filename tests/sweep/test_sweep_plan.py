"""A sweep's plan and its runs' projects: which runs, with which parameters set where."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from sweep_helpers import SLOPE, write_sweep

from hrpsim.errors import ConfigError
from hrpsim.sweep.overrides import absolute_paths, apply_parameters, split_parameter
from hrpsim.sweep.plan import parameter_names, plan
from hrpsim.sweep.spec import load_sweep


def test_runs_are_every_combination_of_grid_runs_and_samples(tmp_path: Path) -> None:
    path = write_sweep(
        tmp_path,
        """
        seed: 3
        grid:
          collisions[0].friction: [0.3, 0.6]
          world.engine: [ode, mujoco]
        runs:
          - world.timestep: 0.001
          - world.timestep: 0.002
        samples:
          count: 3
          vary:
            models[box].position[2]: {uniform: [0.09, 0.1]}
        """,
    )
    runs = plan(load_sweep(path))
    assert len(runs) == 2 * 2 * 2 * 3 and [r.index for r in runs] == list(range(24))
    assert parameter_names(runs) == [
        "collisions[0].friction",
        "world.engine",
        "world.timestep",
        "models[box].position[2]",
    ]
    heights = {r.params["models[box].position[2]"] for r in runs}
    assert len(heights) == 3 and all(0.09 <= h <= 0.1 for h in heights)
    assert plan(load_sweep(path)) == runs  # the same file, the same plan
    again = path.read_text().replace("seed: 3", "seed: 4")
    path.write_text(again)
    assert {r.params["models[box].position[2]"] for r in plan(load_sweep(path))} != heights


def test_parameters_set_their_place_in_the_project() -> None:
    base = yaml.safe_load(SLOPE.read_text())
    data = apply_parameters(
        base,
        {
            "collisions[0].friction": 0.9,
            "models[box].joints.X": 0.1,
            "models[box].position[2]": 0.5,
            "world.ode.erp": 0.3,
        },
    )
    assert data["collisions"][0]["friction"] == 0.9 and data["world"]["ode"] == {"erp": 0.3}
    box = next(m for m in data["models"] if m["name"] == "box")
    assert box["joints"] == {"X": 0.1} and box["position"][2] == 0.5
    assert base["collisions"][0]["friction"] == 0.5  # the base project is left as it was
    assert split_parameter("a.b[0].c[robot]") == ["a", "b", 0, "c", "robot"]


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("models[nobody].mass_scale", "no entry named 'nobody' (entries: floor, box)"),
        ("collisions[3].friction", "the list has 1 item(s), no item [3]"),
        ("world..engine", "cannot read"),
    ],
)
def test_a_parameter_that_names_no_place_is_an_error_naming_it(name: str, words: str) -> None:
    with pytest.raises(
        ConfigError,
        match=r"parameter .*" + words.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[").replace("]", r"\]"),
    ):
        apply_parameters(yaml.safe_load(SLOPE.read_text()), {name: 1.0})


def test_a_runs_project_keeps_its_meaning_in_another_folder() -> None:
    data = absolute_paths(yaml.safe_load(SLOPE.read_text()), SLOPE.parent)
    for model in data["models"]:
        assert Path(model["file"]).is_absolute() and Path(model["file"]).is_file()


def test_every_problem_of_a_sweep_file_is_reported_at_once(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(
        "project: nowhere.yaml\nseed: x\ngrid: {a: []}\nsamples: {count: 0, vary: {b: {gamma: [1]}}}\n"
        "metrics: {m: missing.py:f}\ncolour: red\n"
    )
    with pytest.raises(ConfigError) as caught:
        load_sweep(path)
    text = str(caught.value)
    for key in (
        "project: no such file",
        "seed:",
        "grid.a:",
        "samples.count:",
        "samples.vary.b:",
        "metrics.m:",
        "colour:",
    ):
        assert key in text, key
