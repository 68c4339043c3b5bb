"""Fixtures of the collision tests: the walk with the collision service, run once for the session."""

from __future__ import annotations

import fcntl
import json
import os
from pathlib import Path

import pytest
from launched_walks import launch_walk


@pytest.fixture(scope="session")
def service_walk(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, Path]:
    """(summary, run folder) of the walking example launched with ``collision: service``. The tests
    that need it only read it, so it runs once: the parallel test processes of one session share
    it through their common temporary folder, the first one to ask running it under a file lock."""
    shared = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        shared = shared.parent  # each worker's folder is inside the session's
    folder = shared / "collision-service-walk"
    folder.mkdir(exist_ok=True)
    done = folder / "done"  # written after a successful run only: a failed one is tried again
    with open(folder / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.exists():
            launch_walk(folder, "service")
            done.touch()
    return json.loads((folder / "service.json").read_text()), folder / "run_service"
