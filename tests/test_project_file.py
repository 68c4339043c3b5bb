"""Project files: every problem is reported at once, naming the file and the key."""

from __future__ import annotations

from pathlib import Path

import pytest

from hrpsim.errors import ConfigError
from hrpsim.project import Project, load_project


def write(tmp_path: Path, text: str) -> Path:
    (tmp_path / "m.wrl").write_text("#VRML V2.0 utf8\n")
    path = tmp_path / "p.yaml"
    path.write_text(text)
    return path


def test_a_full_project_parses_with_paths_relative_to_the_file(tmp_path: Path) -> None:
    path = write(tmp_path, """
world: {timestep: 0.002, gravity: [0, 0, -9.8], end_time: 3, sync: realtime, ode: {solver: quickstep}}
models:
  - {name: floor, file: m.wrl, static: true, position: [0, 0, -0.1]}
  - {name: robot, file: m.wrl, rotation: [0, 0, 1, 1.57], joints: {J1: 0.5}, drive: {J1: high_gain}}
controllers:
  - {name: c, robot: robot, command: "python ctl.py", period: 0.004, policy: hold}
collisions:
  - {a: floor, b: robot, friction: 0.7}
""")
    p = load_project(path)
    assert p.world.timestep == 0.002 and p.world.sync == "realtime" and p.world.ode.solver == "quickstep"
    assert p.model("floor").static and p.model("floor").file == str((tmp_path / "m.wrl").resolve())
    assert p.model("robot").joints == {"J1": 0.5} and p.model("robot").drive == {"J1": "high_gain"}
    assert p.controllers[0].policy == "hold" and p.controllers[0].cwd == str(tmp_path.resolve())
    assert p.collisions[0].friction == 0.7 and not p.collisions[0].self_collision
    assert Project.from_wire(p.to_wire()) == p


def test_every_problem_is_collected_with_its_key(tmp_path: Path) -> None:
    path = write(tmp_path, """
world: {timestep: 0, sync: sometimes, colour: red}
models:
  - {name: robot, file: missing.wrl, position: [0, 0]}
  - {name: robot, file: m.wrl, drive: turbo}
controllers:
  - {name: c, robot: nobody, command: x, period: 0.0015}
collisions:
  - {a: robot, b: ghost, friction: .nan}
""")
    with pytest.raises(ConfigError) as err:
        load_project(path)
    text = str(err.value)
    for key in ("world.timestep", "world.sync", "world.colour", "models[0].file", "models[0].position",
                "models[1].drive", "two models are named 'robot'", "controllers[0].robot", "collisions[0].b",
                "collisions[0].friction"):
        assert key in text, key
    assert str(path) in text


def test_a_yaml_syntax_error_names_line_and_column(tmp_path: Path) -> None:
    path = write(tmp_path, "world: {timestep: 0.001\nmodels: [\n")
    with pytest.raises(ConfigError, match=rf"{path}:\d+:\d+: not valid YAML"):
        load_project(path)


def test_a_period_that_is_not_a_multiple_of_the_timestep_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path, """
world: {timestep: 0.001}
models: [{name: r, file: m.wrl}]
controllers: [{name: c, robot: r, command: x, period: 0.0025}]
""")
    with pytest.raises(ConfigError, match="not a whole multiple"):
        load_project(path)


def test_record_names_an_mcap_file_relative_to_the_project(tmp_path: Path) -> None:
    path = tmp_path / "p.yaml"
    path.write_text("record: runs/walk.mcap\n")
    assert load_project(path).record.file == str(tmp_path / "runs" / "walk.mcap")
    path.write_text("record: {file: walk.mcap, contacts: true}\n")
    project = load_project(path)
    assert project.record.contacts and Project.from_wire(project.to_wire()).record == project.record
    path.write_text("record: {file: walk.txt, every: 2}\n")
    with pytest.raises(ConfigError) as err:
        load_project(path)
    assert "record.file: must be the path of an .mcap file" in str(err.value)
    assert "record.every: unknown key" in str(err.value)
