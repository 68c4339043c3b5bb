"""Starting and stopping real hrpsim processes from tests, always with deadlines."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

REPO = Path(__file__).resolve().parents[1]
MODELS = REPO / "models"  # the real model corpus (OpenHRP3, Choreonoid, OpenRAVE files)
MODEL_FACTS = REPO / "tests" / "data" / "model_facts.json"  # its facts; paths relative to MODELS
HRPSIM = [sys.executable, "-m", "hrpsim"]


@dataclass
class ManagedProcess:
    popen: subprocess.Popen
    log: Path
    address: str = ""

    @property
    def pid(self) -> int:
        return self.popen.pid

    def stop(self, timeout: float = 5.0) -> int | None:
        """SIGTERM, then SIGKILL after ``timeout``; returns the exit status."""
        if self.popen.poll() is None:
            try:
                os.killpg(self.popen.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                self.popen.wait(timeout)
            except subprocess.TimeoutExpired:
                os.killpg(self.popen.pid, signal.SIGKILL)
                self.popen.wait(timeout)
        return self.popen.returncode

    def kill(self) -> None:
        try:
            os.killpg(self.popen.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.popen.wait(5.0)

    def log_text(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""


def model_roots_for(folder: Path) -> str:
    """What a test's services may read: the repository (the model corpus included) and the test's folder."""
    return os.pathsep.join(map(str, (REPO, folder)))


def spawn(args: list[str], log: Path, env: dict[str, str] | None = None) -> ManagedProcess:
    """Start ``hrpsim ARGS`` in its own session, output to ``log``."""
    # A service binds with the deployment's server key, whichever key the test itself uses.
    inherited = {k: v for k, v in os.environ.items() if k != "HRPSIM_KEY"}
    full_env = {**inherited, "HRPSIM_MODEL_ROOTS": model_roots_for(log.parent), **(env or {})}
    full_env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), full_env.get("PYTHONPATH", "")]))
    with open(log, "wb") as out:
        popen = subprocess.Popen(
            HRPSIM + args, stdout=out, stderr=subprocess.STDOUT, cwd=REPO, env=full_env, start_new_session=True
        )
    return ManagedProcess(popen, log)


def wait_for_file(path: Path, proc: ManagedProcess, timeout: float = 15.0) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and path.read_text().strip():
            return path.read_text().strip()
        if proc.popen.poll() is not None:
            raise RuntimeError(
                f"process exited with {proc.popen.returncode} before writing {path}:\n" + proc.log_text()
            )
        time.sleep(0.02)
    proc.stop()
    raise RuntimeError(f"{path} not written within {timeout} s:\n{proc.log_text()}")


def start_nameserver(
    folder: Path, *, bind: str = "tcp://127.0.0.1:*", ttl: float = 3.0, name: str = "nameserver"
) -> ManagedProcess:
    endpoint_file = folder / f"{name}.endpoint"
    endpoint_file.unlink(missing_ok=True)
    proc = spawn(
        ["run", "nameserver", "--bind", bind, "--ttl", str(ttl), "--endpoint-file", str(endpoint_file)],
        folder / f"{name}.log",
    )
    proc.address = wait_for_file(endpoint_file, proc)
    return proc


def wait_registered(nameserver: str, name: str, proc: ManagedProcess, timeout: float = 30.0) -> dict:
    """The nameserver's entry for ``name`` once ``proc`` has registered it; fails (with the
    process's log) if it exits first or the deadline passes."""
    from hrpsim.errors import NotFound, Timeout
    from hrpsim.naming import NameClient

    deadline = time.monotonic() + timeout
    with NameClient(nameserver, timeout=1.0) as ns:
        while time.monotonic() < deadline:
            if proc.popen.poll() is not None:
                raise AssertionError(f"{name} exited with {proc.popen.returncode}:\n{proc.log_text()}")
            try:
                return ns.resolve(name)
            except (NotFound, Timeout):
                time.sleep(0.05)
    raise AssertionError(f"{name} did not register within {timeout} s:\n{proc.log_text()}")


class Launched(NamedTuple):
    summary: dict
    stdout: str
    stderr: str


def launch_summary(project: Path, tmp_path: Path, *extra: str, timeout: float = 240) -> Launched:
    """Run ``hrpsim launch`` on a project to its end (a private nameserver, ``--quiet``): the run summary
    and what it printed on stdout and stderr."""
    import json

    summary = tmp_path / "summary.json"
    done = subprocess.run(
        [
            *HRPSIM,
            "launch",
            str(project),
            "--summary",
            str(summary),
            "--nameserver",
            "tcp://127.0.0.1:*",
            "--run-dir",
            str(tmp_path / "run"),
            "--quiet",
            *extra,
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return Launched(json.loads(summary.read_text()), done.stdout, done.stderr)


def wait_unregistered(nameserver: str, name: str, timeout: float = 60.0) -> None:
    """Until the nameserver has no entry for ``name`` (a dead process's entry expires after one TTL)."""
    from hrpsim.errors import NotFound
    from hrpsim.naming import NameClient

    deadline = time.monotonic() + timeout
    with NameClient(nameserver, timeout=2.0) as ns:
        while time.monotonic() < deadline:
            try:
                ns.resolve(name)
            except NotFound:
                return
            time.sleep(0.05)
    raise AssertionError(f"{name!r} stayed registered for {timeout} s")


def run_hrpsim(args: list[str], *, timeout: float = 60.0, cwd: Path = REPO) -> subprocess.CompletedProcess:
    """``hrpsim ARGS...`` as a shell runs it, to its end: its exit status, stdout and stderr."""
    return subprocess.run([*HRPSIM, *args], cwd=cwd, capture_output=True, text=True, timeout=timeout)
