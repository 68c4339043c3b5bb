"""README's project-file section: a controller's ``command`` runs in the project file's folder
and ``cwd`` (relative to the project file) changes that; README shows it, and position control
beside the torque example."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from process_helpers import MODELS, REPO, launch_summary

CONTROLLER = """\
import sys
from pathlib import Path

from hrpsim.controllers import Controller, run_main


class Zero(Controller):
    def start(self, body):
        Path("started-here").write_text(str(Path.cwd()))

    def control(self, state):
        return 0.0 * state.q


if __name__ == "__main__":
    sys.exit(run_main(Zero))
"""


@pytest.mark.parametrize(("cwd", "command"), [(None, "python tools/zero.py"), ("tools", "python zero.py")])
def test_a_command_runs_in_the_project_folder_unless_cwd_says_otherwise(
    tmp_path: Path, cwd: str | None, command: str
) -> None:
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "zero.py").write_text(CONTROLLER)
    where = "" if cwd is None else f", cwd: {cwd}"
    project = tmp_path / "p.yaml"
    project.write_text(
        "world: {timestep: 0.001, end_time: 0.01}\n"
        f"models:\n  - {{name: arm, file: {MODELS}/openhrp3/model/PA10/pa10.main.wrl}}\n"
        f'controllers:\n  - {{name: zero, robot: arm, command: "{command}", policy: stop{where}}}\n'
    )
    run = launch_summary(project, tmp_path)
    assert run.summary["error"] is None, run.stderr
    expected = tmp_path if cwd is None else tmp_path / cwd
    assert (expected / "started-here").read_text() == str(expected.resolve())


def test_readme_says_where_a_command_runs_and_shows_position_control() -> None:
    readme = (REPO / "README.md").read_text()
    section = readme[readme.index("## Project files") :]
    assert re.search(r"`command` runs in the project file's\s+folder, and `cwd`", section)
    python_blocks = re.findall(r"```python\n(.*?)```", readme, re.S)
    assert any("self.targets(" in block for block in python_blocks)
    assert any("joint torques" in block for block in python_blocks)
