"""Fixtures for the whole suite: the model corpus in models/ and real nameserver processes."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from process_helpers import MODELS, ManagedProcess, start_nameserver


@pytest.fixture(scope="session")
def models_dir() -> Path:
    if not MODELS.is_dir():
        pytest.fail(f"the model corpus is missing: expected {MODELS} in the repository")
    return MODELS


@pytest.fixture
def nameserver(tmp_path: Path) -> Iterator[str]:
    """The address of a fresh nameserver process (tcp, ephemeral port), stopped afterwards."""
    proc = start_nameserver(tmp_path)
    try:
        yield proc.address
    finally:
        proc.stop()


@pytest.fixture(scope="module")
def shared_nameserver(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """One nameserver for a module whose tests each register a service of their own there and
    unregister it as they close (as a test that runs several hubs one after another does)."""
    proc = start_nameserver(tmp_path_factory.mktemp("nameserver"))
    try:
        yield proc.address
    finally:
        proc.stop()


@pytest.fixture
def nameserver_process(tmp_path: Path) -> Iterator[ManagedProcess]:
    """Like ``nameserver`` but yields the process, for tests that kill or restart it."""
    proc = start_nameserver(tmp_path)
    try:
        yield proc
    finally:
        proc.stop()
