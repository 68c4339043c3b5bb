"""A project file nested thousands of levels deep is a named error, not a RecursionError traceback."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from process_helpers import HRPSIM

from hrpsim.errors import ConfigError
from hrpsim.project import load_project

LEVELS = 10_000
BLOCK_LEVELS = 700  # indented, so within a project file's 1 MB; past the YAML reader's recursion all the same


def _deep_projects(folder: Path) -> list[Path]:
    flow = folder / "flow.yaml"
    flow.write_text("models: " + "[" * LEVELS + "]" * LEVELS + "\n")
    block = folder / "block.yaml"
    block.write_text("world:\n" + "".join("  " * depth + f"k{depth}:\n" for depth in range(1, BLOCK_LEVELS)))
    return [flow, block]


def test_loading_a_deeply_nested_project_names_the_file(tmp_path: Path) -> None:
    for path in _deep_projects(tmp_path):
        with pytest.raises(ConfigError, match="nested too deeply") as refused:
            load_project(path)
        assert str(path) in str(refused.value)


def test_launching_a_deeply_nested_project_is_an_error_without_a_traceback(tmp_path: Path) -> None:
    for path in _deep_projects(tmp_path):
        done = subprocess.run([*HRPSIM, "launch", str(path)], capture_output=True, text=True, timeout=120)
        assert done.returncode != 0
        assert "Traceback" not in done.stderr and "RecursionError" not in done.stderr, done.stderr
        assert f"{path}: nested too deeply" in done.stderr
