"""Every Python block in README.md and docs/ runs, and every YAML block is a project file's
fragment that hrpsim accepts (problems only about files and models the fragment does not have).

A block that defines a controller (``run_main``) runs as a project's controller through
``hrpsim launch``, from a folder the project's ``cwd`` names; a block that asks the nameserver runs
against a real nameserver, modelloader and collision service; any other block runs as a script
from the repository's top, as the docs say to run them. The shell blocks' ``hrpsim model info``
commands, cheap and writing nothing, run as written; README's hardware-in-the-loop commands run in
tests/hil/test_hil_readme_commands.py and its GrxUI launch in tests/launch/."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from process_helpers import HRPSIM, MODELS, REPO, launch_summary, spawn, start_nameserver, wait_registered

from hrpsim.errors import ConfigError
from hrpsim.project import parse_project
from hrpsim.sweep.spec import parse_sweep

DOCS = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]  # the site's pages, in folders too
_BLOCK = re.compile(r"^```(\w*)\n(.*?)^```$", re.M | re.S)


def blocks(language: str) -> list[tuple[str, str]]:
    """(file:line, text) of every block in ``language``."""
    found = []
    for path in DOCS:
        text = path.read_text()
        for match in _BLOCK.finditer(text):
            if match.group(1) == language:
                line = text.count("\n", 0, match.start()) + 1
                found.append((f"{path.relative_to(REPO)}:{line}", match.group(2)))
    return found


PYTHON = blocks("python")
YAML = blocks("yaml")


def test_the_docs_have_python_and_yaml_blocks() -> None:
    assert len(PYTHON) >= 4 and len(YAML) >= 5 and MODEL_INFO  # the extraction finds them


def run_as_controller(source: str, tmp_path: Path) -> None:
    folder = tmp_path / "controllers"
    folder.mkdir()
    (folder / "block.py").write_text(source)
    project = tmp_path / "block.yaml"
    project.write_text(
        "world: {timestep: 0.002, gravity: [0, 0, -9.8], end_time: 0.1, sync: lockstep}\n"
        "models:\n"
        f"  - {{name: floor, file: {MODELS}/openhrp3/model/floor.wrl, static: true}}\n"
        f"  - {{name: robot, file: {MODELS}/openhrp3/model/sample1.wrl, position: [0, 0, 0.7235], drive: torque}}\n"
        "controllers:\n"
        '  - {name: block, robot: robot, command: "python block.py", cwd: controllers, period: 0.002,\n'
        "     policy: stop, deadline: 60.0}\n"
        "collisions:\n"
        "  - {a: floor, b: robot, friction: 0.5}\n"
    )
    run = launch_summary(project, tmp_path)
    assert run.summary["error"] is None, run.stderr
    assert run.summary["controllers"]["block"]["ticks"] == 50
    root = run.summary["robots"]["robot"]
    assert abs(root["root_end"][2] - root["root_start"][2]) < 0.01  # it held the pose


def run_with_services(source: str, tmp_path: Path) -> str:
    nameserver = start_nameserver(tmp_path)
    services = []
    try:
        for name in ("modelloader", "collision"):
            proc = spawn(["run", name, "--nameserver", nameserver.address], tmp_path / f"{name}.log")
            services.append(proc)
            wait_registered(nameserver.address, name, proc)
        return run_script(source, tmp_path, {"HRPSIM_NAMESERVER": nameserver.address})
    finally:
        for proc in [*services, nameserver]:
            proc.stop()


def run_script(source: str, tmp_path: Path, env: dict[str, str] | None = None) -> str:
    script = tmp_path / "block.py"
    script.write_text(source)
    done = subprocess.run(
        [str(Path(HRPSIM[0])), str(script)],
        cwd=REPO,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture(scope="module")
def script_output(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], str]:
    """What a plain script block prints, each block run once for the module: the python-api page's
    first block is both run as a block and read as a run summary."""
    printed: dict[str, str] = {}

    def output(source: str) -> str:
        if source not in printed:
            printed[source] = run_script(source, tmp_path_factory.mktemp("script"))
        return printed[source]

    return output


@pytest.mark.parametrize(("where", "source"), PYTHON, ids=[where for where, _ in PYTHON])
def test_a_python_block_runs(where: str, source: str, tmp_path: Path, script_output: Callable[[str], str]) -> None:
    if "run_main(" in source:
        run_as_controller(source, tmp_path)
    elif "NameClient()" in source:
        printed = run_with_services(source, tmp_path)
        assert printed.strip(), f"{where} printed nothing"
    else:
        printed = script_output(source)
        assert printed.strip(), f"{where} printed nothing"


# What a fragment may lack: the files and models of the project it belongs to.
FRAGMENT_GAPS = ("no such file", "no model named")


@pytest.mark.parametrize(("where", "source"), YAML, ids=[where for where, _ in YAML])
def test_a_yaml_block_is_a_project_fragment_hrpsim_accepts(where: str, source: str, tmp_path: Path) -> None:
    data = yaml.safe_load(source)
    assert isinstance(data, dict), where
    if "project" in data:  # a sweep file (docs/sweeps.md), as if it were one of examples/sweeps/
        parse_sweep(data, REPO / "examples" / "sweeps" / "fragment.yaml")
        return
    try:
        parse_project(data, str(tmp_path / "fragment.yaml"))
    except ConfigError as exc:
        problems = str(exc).splitlines()[1:]
        real = [p for p in problems if not any(gap in p for gap in FRAGMENT_GAPS)]
        assert not real, f"{where}:\n" + "\n".join(real)


def test_the_python_api_example_gives_a_run_summary(script_output: Callable[[str], str]) -> None:
    where, source = next((w, s) for w, s in PYTHON if w.startswith("docs/python-api.md"))  # the page's first
    printed = script_output(source)
    summary = json.loads(printed.replace("'", '"').replace("True", "true").replace("False", "false"))
    assert summary["has_joints"] and summary["root_end"][2] == pytest.approx(0.7235, abs=0.01), where


def shell_commands(prefix: str) -> list[tuple[str, str]]:
    """(file:line, line) of every line of a shell block that starts with ``prefix``."""
    found = []
    for where, source in blocks("sh"):
        for line in source.replace("\\\n", " ").splitlines():
            words = shlex.split(line, comments=True)
            if words[: len(prefix.split())] == prefix.split():
                found.append((where, line))
    return found


MODEL_INFO = shell_commands("hrpsim model info")  # cheap and writes nothing: run as written


@pytest.mark.parametrize(("where", "line"), MODEL_INFO, ids=[line.split(" ", 3)[3] for _, line in MODEL_INFO])
def test_a_model_info_command_runs_as_written(where: str, line: str) -> None:
    """Run by the shell, as a reader would (``$(python ...)`` in a command is expanded), with the
    environment's ``hrpsim`` and ``python`` first on PATH."""
    env = {**os.environ, "PATH": f"{Path(HRPSIM[0]).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    done = subprocess.run(["bash", "-c", line], cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, f"{where}: {done.stderr}"
    assert done.stdout.strip()
