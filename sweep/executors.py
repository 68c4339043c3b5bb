"""Where a sweep's runs execute: a pool of worker slots on this machine (the default), or a Ray
cluster. Either way one run is one ``hrpsim.sweep.run_one`` process with a deadline (:func:`execute`),
so what a run does to its process (a crash, a hang, an explosion) stays in its row.

Each run's process is the root of a tree kept by a keeper (hrpsim.process_tree): whatever the run
starts (a launch's stack, a metric's helper that calls setsid) ends with the run, when it finishes,
at its deadline, when the sweep is interrupted, and when the process that started it dies, the sweep
killed with SIGKILL included, so a resumed sweep never meets a run of the last one in its folder.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import asdict
from pathlib import Path
from typing import Any

from hrpsim.errors import ConfigError
from hrpsim.sweep.run_one import Job

KILL_WAIT_S = 10.0
KEEPER = [sys.executable, "-m", "hrpsim.process_tree"]  # runs a command as a tree that ends with it

_running: dict[int, subprocess.Popen] = {}  # pid -> run process, for stopping them all at once
_running_lock = threading.Lock()


def execute(job: Job, timeout: float, *, return_recording: bool = False) -> dict[str, Any]:
    """Run one job in its own kept process tree, ended at ``timeout`` s; returns its result (a failed
    result when it crashed or ran out of time). ``return_recording``: carry the run's recording in
    the result (``recording_bytes``), for a run on another machine. The calling thread must outlive
    the run (its keeper ends the tree when that thread ends)."""
    run_dir = Path(job.run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "result.json").unlink(missing_ok=True)
    (run_dir / "job.json").write_text(json.dumps(asdict(job)))
    with open(run_dir / "run.err", "wb") as err:
        proc = subprocess.Popen(
            [*KEEPER, sys.executable, "-m", "hrpsim.sweep.run_one", str(run_dir / "job.json")],
            stdout=err,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        with _running_lock:
            _running[proc.pid] = proc
        try:
            status = proc.wait(timeout)
        except subprocess.TimeoutExpired:
            _end(proc)
            return {"status": "timeout", "error": f"the run took longer than its {timeout:g} s and was killed"}
        finally:
            with _running_lock:
                _running.pop(proc.pid, None)
            _end(proc)
    result_path = run_dir / "result.json"
    if not result_path.is_file():
        tail = (run_dir / "run.err").read_text(errors="replace").strip().splitlines()[-3:]
        return {"status": "crashed", "error": f"the run's process ended with status {status}: " + " | ".join(tail)}
    result = json.loads(result_path.read_text())
    if return_recording and result.get("recording"):
        result["recording_bytes"] = Path(result["recording"]).read_bytes()
    return result


def stop_all() -> None:
    """Kill every run under way (the sweep was interrupted): their rows are not written."""
    with _running_lock:
        procs = list(_running.values())
    for proc in procs:
        _end(proc)


def _end(proc: subprocess.Popen) -> None:
    """End a run's tree: its keeper, asked with SIGTERM, kills every process of it; a keeper that does
    not end in KILL_WAIT_S is killed with its group."""
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


Finished = tuple[Job, dict[str, Any]]


class LocalPool:
    """``workers`` runs at a time on this machine."""

    def __init__(self, workers: int) -> None:
        if workers < 1:
            raise ConfigError(f"--workers must be at least 1, got {workers}")
        self.workers = workers

    def map(self, jobs: list[Job], timeout: float, stopping: Callable[[], bool]) -> Iterator[Finished]:
        with ThreadPoolExecutor(self.workers, thread_name_prefix="sweep-run") as pool:
            pending = {pool.submit(execute, job, timeout): job for job in jobs}
            try:
                while pending:
                    done, _ = wait(pending, timeout=0.5, return_when=FIRST_COMPLETED)
                    if stopping():
                        break
                    for future in done:
                        yield pending.pop(future), _result(future)
            finally:
                for future in pending:
                    future.cancel()
                stop_all()


class RayCluster:
    """Runs as Ray tasks (one CPU each) on the cluster at ``address`` (``auto``: the one this machine
    belongs to, or a new local one). The project's files must be at the same path on every node."""

    def __init__(self, address: str, workers: int | None) -> None:
        try:
            import ray
        except ImportError:
            raise ConfigError(
                "--ray needs Ray, hrpsim's ray extra: pip install 'hrpsim[ray]' "
                "(in a checkout: pip install -e '.[ray]')"
            ) from None
        self._ray = ray
        self.address = address
        self.workers = workers

    def map(self, jobs: list[Job], timeout: float, stopping: Callable[[], bool]) -> Iterator[Finished]:
        ray = self._ray
        if not ray.is_initialized():
            ray.init(address=None if self.address == "local" else self.address, log_to_driver=False)
        task = ray.remote(num_cpus=1, max_retries=0)(_execute_remote)
        waiting = list(jobs)
        in_flight: dict[Any, Job] = {}
        limit = self.workers or int(ray.cluster_resources().get("CPU", 1))
        try:
            while waiting or in_flight:
                while waiting and len(in_flight) < limit:
                    job = waiting.pop(0)
                    in_flight[task.remote(asdict(job), timeout)] = job
                done, _ = ray.wait(list(in_flight), num_returns=1, timeout=0.5)
                if stopping():
                    break
                for ref in done:
                    job = in_flight.pop(ref)
                    try:
                        yield job, ray.get(ref)
                    except Exception as exc:  # the task itself failed (its node died): the run's row says so
                        yield job, {"status": "crashed", "error": f"the Ray task failed: {type(exc).__name__}: {exc}"}
        finally:
            for ref in in_flight:
                ray.cancel(ref, force=True)


def _execute_remote(job: dict[str, Any], timeout: float) -> dict[str, Any]:
    return execute(Job(**job), timeout, return_recording=True)


def _result(future: Future) -> dict[str, Any]:
    try:
        return future.result()
    except Exception as exc:  # starting the run's process failed
        return {"status": "crashed", "error": f"the run could not be started: {type(exc).__name__}: {exc}"}
