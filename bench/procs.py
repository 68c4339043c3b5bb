"""Starting real hrpsim processes for benchmarks (bench/ is not a package of the distribution)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


@contextmanager
def nameserver_process(*, ttl: float = 3.0) -> Iterator[str]:
    """A real nameserver on an ephemeral port (entries live ``ttl`` s without a heartbeat); yields its address."""
    with tempfile.TemporaryDirectory() as tmp:
        endpoint = Path(tmp) / "ns.endpoint"
        env = {**os.environ, "PYTHONPATH": str(REPO), "HRPSIM_LOG_LEVEL": "WARNING"}
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "hrpsim",
                "run",
                "nameserver",
                "--bind",
                "tcp://127.0.0.1:*",
                "--endpoint-file",
                str(endpoint),
                "--ttl",
                str(ttl),
            ],
            env=env,
            stdout=subprocess.DEVNULL,
            start_new_session=True,
        )
        try:
            deadline = time.monotonic() + 15
            while not endpoint.exists():
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("the nameserver did not start")
                time.sleep(0.02)
            yield endpoint.read_text().strip()
        finally:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(10)


def walk_project(folder: Path, name: str, *, command: str | None = None, **world: object) -> Path:
    """examples/sample_walk.yaml with ``world`` overrides (and ``command`` for its controller),
    written into ``folder`` with absolute paths."""
    import yaml

    walk = REPO / "examples" / "sample_walk.yaml"
    data = yaml.safe_load(walk.read_text())
    data["world"].update(world)
    for model in data["models"]:
        model["file"] = str((walk.parent / model["file"]).resolve())
    for controller in data["controllers"]:
        controller["cwd"] = str((walk.parent / controller.get("cwd", ".")).resolve())
        if command is not None:
            controller["command"] = command
    path = folder / f"{name}.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def launch_summary(project: Path, folder: Path) -> dict:
    """``hrpsim launch PROJECT`` to its end (a private nameserver); the run summary."""
    import json

    summary = folder / f"{project.stem}.json"
    argv = [
        sys.executable,
        "-m",
        "hrpsim",
        "launch",
        str(project),
        "--nameserver",
        "tcp://127.0.0.1:*",
        "--summary",
        str(summary),
        "--run-dir",
        str(folder / project.stem),
        "--quiet",
    ]
    done = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, timeout=900)
    if done.returncode != 0:
        raise RuntimeError(
            f"hrpsim launch {project.name} failed (exit {done.returncode}):\n{done.stdout[-3000:]}{done.stderr[-2000:]}"
        )
    return json.loads(summary.read_text())
