"""A service the launcher started that dies is noticed at once: the launcher removes its registration
(which the nameserver would otherwise keep until it expires), so its restart registers under the same
name and whoever asks for it finds the new one. A nameserver whose registrations live ten minutes
makes the difference plain: without the removal the restarted modelloader could not register, nor a
simulator find it, for that long. Real processes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from process_helpers import HRPSIM, REPO, start_nameserver

from hrpsim.errors import NotFound
from hrpsim.naming import NameClient

TTL_S = 600.0
DEADLINE_S = 120.0  # far below the TTL

PROJECT = """world: {{timestep: 0.001, end_time: 600, sync: realtime}}
models:
  - {{name: floor, file: {models}/floor.wrl, static: true, position: [0, 0, -0.1]}}
  - {{name: box, file: {models}/box2.wrl, position: [0, 0, 0.5]}}
collisions:
  - {{a: floor, b: box}}
"""


def _modelloader(ns: NameClient, other_than: str = "") -> dict | None:
    """The modelloader's entry (one at another endpoint than ``other_than``), or None."""
    try:
        entry = ns.resolve("modelloader")
    except NotFound:
        return None
    return entry if entry["endpoint"] != other_than else None


def _until(what: str, found: Callable[[], dict | None], launch: subprocess.Popen) -> dict:
    deadline = time.monotonic() + DEADLINE_S
    while (value := found()) is None:
        assert launch.poll() is None, f"the launch ended while waiting for {what}"
        assert time.monotonic() < deadline, f"no {what} within {DEADLINE_S:g} s"
        time.sleep(0.05)
    return value


def test_a_dead_modelloader_is_replaced_in_the_registry_at_once(tmp_path: Path, models_dir: Path) -> None:
    nameserver = start_nameserver(tmp_path, ttl=TTL_S)
    project = tmp_path / "long.yaml"
    project.write_text(PROJECT.format(models=models_dir / "openhrp3" / "model"))
    summary = tmp_path / "summary.json"
    argv = [*HRPSIM, "launch", str(project), "--join", nameserver.address, "--quiet"]
    launch = subprocess.Popen(
        [*argv, "--run-dir", str(tmp_path / "run"), "--summary", str(summary)],
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        with NameClient(nameserver.address, timeout=5.0) as ns:
            first = _until("modelloader", lambda: _modelloader(ns), launch)
            os.kill(first["metadata"]["pid"], signal.SIGKILL)
            second = _until("new modelloader", lambda: _modelloader(ns, first["endpoint"]), launch)
        assert second["metadata"]["pid"] != first["metadata"]["pid"]
        launch.send_signal(signal.SIGINT)
        assert launch.wait(DEADLINE_S) == 128 + signal.SIGINT
    finally:
        if launch.poll() is None:
            launch.kill()
            launch.wait(30)
        nameserver.stop()
    components = json.loads(summary.read_text())["launch"]["components"]
    assert components["modelloader"]["restarts"] == 1 and not components["modelloader"]["lost"]
