"""Project files: every problem is reported at once, naming the file and the key."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from hrpsim.errors import ConfigError
from hrpsim.project import Project, load_project, world_file_section


def write(tmp_path: Path, text: str) -> Path:
    (tmp_path / "m.wrl").write_text("#VRML V2.0 utf8\n")
    path = tmp_path / "p.yaml"
    path.write_text(text)
    return path


def test_a_full_project_parses_with_paths_relative_to_the_file(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """
world: {timestep: 0.002, gravity: [0, 0, -9.8], end_time: 3, sync: realtime, ode: {solver: quickstep}}
models:
  - {name: floor, file: m.wrl, static: true, position: [0, 0, -0.1]}
  - {name: robot, file: m.wrl, rotation: [0, 0, 1, 1.57], joints: {J1: 0.5}, drive: {J1: high_gain}}
controllers:
  - {name: c, robot: robot, command: "python ctl.py", period: 0.004, policy: hold}
collisions:
  - {a: floor, b: robot, friction: 0.7}
""",
    )
    p = load_project(path)
    assert p.world.timestep == 0.002 and p.world.sync == "realtime"
    assert p.world.engine_settings == {"ode": {"solver": "quickstep"}}
    assert p.model("floor").static and p.model("floor").file == str((tmp_path / "m.wrl").resolve())
    assert p.model("robot").joints == {"J1": 0.5} and p.model("robot").drive == {"J1": "high_gain"}
    assert p.controllers[0].policy == "hold" and p.controllers[0].cwd == str(tmp_path.resolve())
    assert p.collisions[0].friction == 0.7 and not p.collisions[0].self_collision
    assert Project.from_wire(p.to_wire()) == p


def test_every_problem_is_collected_with_its_key(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """
world: {timestep: 0, sync: sometimes, colour: red}
models:
  - {name: robot, file: missing.wrl, position: [0, 0]}
  - {name: robot, file: m.wrl, drive: turbo}
controllers:
  - {name: c, robot: nobody, command: x, period: 0.0015}
collisions:
  - {a: robot, b: ghost, friction: .nan}
""",
    )
    with pytest.raises(ConfigError) as err:
        load_project(path)
    text = str(err.value)
    for key in (
        "world.timestep",
        "world.sync",
        "world.colour",
        "models[0].file",
        "models[0].position",
        "models[1].drive",
        "two models are named 'robot'",
        "controllers[0].robot",
        "collisions[0].b",
        "collisions[0].friction",
    ):
        assert key in text, key
    assert str(path) in text


def test_engine_sections_are_checked_with_the_rest_of_the_file(tmp_path: Path) -> None:
    """Each engine's settings are its own (declared in its package) yet reported with every other
    problem; a setting written at the top of world says where it lives now."""
    path = write(
        tmp_path,
        """
world: {engine: mujoco, erp: 0.5, solver: PGS, end_time: -1,
        ode: {solver: dantzig, cfm: 0, quickstep_iterations: 2.5},
        mujoco: {cone: round, substeps: 4}}
""",
    )
    with pytest.raises(ConfigError) as err:
        load_project(path)
    lines = str(err.value).splitlines()
    for expected in (
        "world.erp: moved to world.ode.erp",
        "world.solver: moved to world.mujoco.solver",  # the project's engine has one
        "world.end_time: must be positive",
        "world.ode.solver: must be one of step, quickstep, got 'dantzig'",
        "world.ode.cfm: must be greater than 0, got 0",
        "world.ode.quickstep_iterations: must be an integer, got 2.5",
        "world.mujoco.cone: must be one of pyramidal, elliptic, got 'round'",
        "world.mujoco.substeps: unknown setting (settings: cone, impratio, integrator, iterations,",
    ):
        assert any(line.strip().startswith(f"{path}: {expected}") for line in lines), expected
    assert f"{path}: 8 problem(s)" in lines[0]


def test_a_yaml_syntax_error_names_line_and_column(tmp_path: Path) -> None:
    path = write(tmp_path, "world: {timestep: 0.001\nmodels: [\n")
    with pytest.raises(ConfigError, match=rf"{path}:\d+:\d+: not valid YAML"):
        load_project(path)


def test_a_period_that_is_not_a_multiple_of_the_timestep_is_refused(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """
world: {timestep: 0.001}
models: [{name: r, file: m.wrl}]
controllers: [{name: c, robot: r, command: x, period: 0.0025}]
""",
    )
    with pytest.raises(ConfigError, match="not a whole multiple"):
        load_project(path)


def test_a_controller_without_period_runs_at_one_time_step(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """
world: {timestep: 0.002}
models: [{name: r, file: m.wrl}]
controllers: [{name: c, robot: r, command: x}]
""",
    )
    assert load_project(path).controllers[0].period == 0.002


@pytest.mark.parametrize(
    "key, entry",
    [
        ("models[0].static", 'models: [{name: r, file: m.wrl, static: "no"}]'),
        ("world.joint_limits", 'world: {joint_limits: "false"}\nmodels: [{name: r, file: m.wrl}]'),
        ("services.collision", 'models: [{name: r, file: m.wrl}]\nservices: {collision: "no"}'),
        ("models[0].options.lenient", "models: [{name: r, file: m.wrl, options: {lenient: 1}}]"),
        (
            "collisions[0].self_collision",
            'models: [{name: r, file: m.wrl}]\ncollisions: [{a: r, b: r, self_collision: "yes"}]',
        ),
    ],
)
def test_a_flag_that_is_not_a_boolean_is_refused_naming_its_key(tmp_path: Path, key: str, entry: str) -> None:
    path = write(tmp_path, entry + "\n")
    with pytest.raises(ConfigError, match=re.escape(f"{key}: must be true or false")):
        load_project(path)


@pytest.mark.parametrize("key", ["friction", "sliding_friction", "restitution", "soft_cfm"])
def test_a_negative_contact_parameter_is_refused_naming_its_key(tmp_path: Path, key: str) -> None:
    path = write(tmp_path, f"models: [{{name: r, file: m.wrl}}]\ncollisions: [{{a: r, b: r, {key}: -0.5}}]\n")
    with pytest.raises(ConfigError, match=re.escape(f"collisions[0].{key}: must not be negative, got -0.5")):
        load_project(path)


def test_true_and_false_flags_are_read_as_written(tmp_path: Path) -> None:
    path = write(tmp_path, "models: [{name: a, file: m.wrl, static: false}, {name: b, file: m.wrl, static: true}]\n")
    p = load_project(path)
    assert (p.model("a").static, p.model("b").static) == (False, True)


def test_an_empty_project_file_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path, "# nothing yet\n")
    with pytest.raises(ConfigError, match=rf"{path}: the project file is empty"):
        load_project(path)


@pytest.mark.parametrize("cut_after", ["models:", "collisions:", "  - {name: box, file: m.wrl}\n  -"])
def test_a_file_cut_short_after_a_key_is_refused(tmp_path: Path, cut_after: str) -> None:
    full = """world: {timestep: 0.001, end_time: 2.0}
models:
  - {name: floor, file: m.wrl, static: true}
  - {name: box, file: m.wrl}
  - {name: ball, file: m.wrl}
collisions:
  - {a: floor, b: box}
"""
    path = write(tmp_path, full[: full.index(cut_after) + len(cut_after)])
    with pytest.raises(ConfigError, match=r"empty"):
        load_project(path)


def test_end_time_without_models_is_noted_and_the_example_does_not_write_it(tmp_path: Path) -> None:
    path = write(tmp_path, "world: {timestep: 0.001, end_time: 1.0}\n")
    assert any("end_time has no effect" in note for note in load_project(path).notes)
    examples = Path(__file__).resolve().parents[2] / "examples"
    assert load_project(examples / "nameserver_only.yaml").notes == []


def test_restart_policies_of_services_and_controllers(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """
models:
  - {name: robot, file: m.wrl}
services: {nameserver: {restart: never}, collision: {restarts: 2}, loader: local}
controllers:
  - {name: c, robot: robot, command: x, restart: on-failure, restarts: 4}
  - {name: d, robot: robot, command: y}
""",
    )
    p = load_project(path)
    assert (p.service_restart("nameserver").restart, p.service_restart("collision").restarts) == ("never", 2)
    assert p.service_restart("modelloader").restart == "on-failure"  # the default for a service
    assert (p.controllers[0].restart, p.controllers[0].restarts) == ("on-failure", 4)
    assert p.controllers[1].restart == "never"  # the default for a controller


def test_bad_restart_policies_are_named_by_key(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """
models:
  - {name: robot, file: m.wrl}
services: {modelloader: {restart: always, retries: 3}}
controllers:
  - {name: c, robot: robot, command: x, restarts: -1}
""",
    )
    with pytest.raises(ConfigError) as err:
        load_project(path)
    for key in ("services.modelloader.restart", "services.modelloader.retries", "controllers[0].restarts"):
        assert key in str(err.value), key


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


def test_how_long_a_tick_waits_for_a_lost_collision_service_is_a_world_setting(tmp_path: Path) -> None:
    model = "models:\n  - {name: robot, file: m.wrl}\n"
    project = load_project(write(tmp_path, "world: {collision: service, collision_wait: 5}\n" + model))
    assert project.world.collision_wait == 5.0
    with pytest.raises(ConfigError, match=r"world\.collision_wait: must be positive"):
        load_project(write(tmp_path, "world: {collision: service, collision_wait: 0}\n" + model))


def test_a_world_written_back_as_a_project_file_reads_the_same(tmp_path: Path) -> None:
    """hrpsim replay writes a recorded project back as a file; recordings made when the settings
    sat at world.ode / world.mujoco on the wire still read."""
    path = write(tmp_path, "world: {engine: mujoco, timestep: 0.002, ode: {erp: 0.5}, mujoco: {cone: elliptic}}\n")
    project = load_project(path)
    again = write(tmp_path, yaml.safe_dump({"world": world_file_section(project.to_wire()["world"])}))
    assert load_project(again).world == project.world
    old_wire = {**project.to_wire()["world"], "ode": {"erp": 0.5}, "mujoco": {"cone": "elliptic"}}
    del old_wire["engine_settings"]
    assert Project.from_wire({"path": str(path), "world": old_wire}).world == project.world
