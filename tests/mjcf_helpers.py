"""dm_control's suite of MJCF models (a test-only dependency) and MuJoCo's own view of them."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest


def suite_folder() -> Path:
    """dm_control's ``suite`` folder; the test is skipped when dm_control is not installed."""
    spec = importlib.util.find_spec("dm_control")  # found, not imported: dm_control's import starts GLFW
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("dm_control is not installed (pip install 'hrpsim[dev]')")
    return Path(spec.submodule_search_locations[0]) / "suite"


def suite_file(name: str) -> Path:
    return suite_folder() / name
