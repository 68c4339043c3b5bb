"""The processes a sweep starts, each the root of a tree under a keeper (hrpsim.process_tree): whatever
a run starts (a launch's stack, a metric's helper that calls setsid) ends with it, when the process
ends, when it is ended here, when the sweep is interrupted and when the process that started it
dies, the sweep killed with SIGKILL included. The thread that starts one must outlive it (the
keeper ends its tree when that thread ends).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from collections.abc import Collection
from pathlib import Path
from typing import IO

KILL_WAIT_S = 10.0
KEEPER = [sys.executable, "-m", "hrpsim.process_tree"]  # runs a command as a tree that ends with it

_running: dict[int, subprocess.Popen] = {}  # pid -> kept process, for stopping them all at once
_running_lock = threading.Lock()


def start_kept(argv: list[str], output: IO[bytes], pass_fds: Collection[int] = ()) -> subprocess.Popen:
    """``argv`` under a keeper, in a session of its own, its output to ``output``."""
    proc = subprocess.Popen(
        [*KEEPER, *argv],
        stdout=output,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
        pass_fds=tuple(pass_fds),
    )
    with _running_lock:
        _running[proc.pid] = proc
    return proc


def end(proc: subprocess.Popen) -> None:
    """End a kept tree: its keeper, asked with SIGTERM, kills every process of it; a keeper that does
    not end in KILL_WAIT_S is killed with its group."""
    try:
        if proc.poll() is not None:
            return
        proc.terminate()
        try:
            proc.wait(KILL_WAIT_S)
            return
        except subprocess.TimeoutExpired:
            pass
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            proc.wait(KILL_WAIT_S)
        except subprocess.TimeoutExpired:
            pass
    finally:
        forget(proc)


def forget(proc: subprocess.Popen) -> None:
    """``proc`` has ended (or is ended by its caller): stop_all no longer needs it."""
    with _running_lock:
        _running.pop(proc.pid, None)


def end_all() -> None:
    """End every kept tree under way (the sweep was interrupted)."""
    with _running_lock:
        procs = list(_running.values())
    for proc in procs:
        end(proc)


def crashed(status: int | None, output: Path, what: str = "the run's process") -> dict[str, str]:
    """The result of a run whose process died: its status and the end of its output."""
    tail = output.read_text(errors="replace").strip().splitlines()[-3:] if output.is_file() else []
    return {"status": "crashed", "error": f"{what} ended with status {status}: " + " | ".join(tail)}


def timed_out(timeout: float) -> dict[str, str]:
    return {"status": "timeout", "error": f"the run took longer than its {timeout:g} s and was killed"}
