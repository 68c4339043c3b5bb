"""dm_control's suite of MJCF models (a test-only dependency) and MuJoCo's own view of them."""

from __future__ import annotations

from pathlib import Path

import pytest


def suite_folder() -> Path:
    """dm_control's ``suite`` folder; the test is skipped when dm_control is not installed."""
    suite = pytest.importorskip("dm_control.suite")
    return Path(suite.__file__).parent


def suite_file(name: str) -> Path:
    return suite_folder() / name
