"""Where a sweep's runs execute: a pool of workers on this machine (the default), or workers on a Ray
cluster (one actor each). Either way a worker is a process that runs many runs in turn
(hrpsim.sweep.worker), keeping its interpreter and the models it has read, and what a run does to
its process (a crash, a hang) costs that run's row and a new worker. ``process_per_run`` runs each
run in a process of its own instead (:func:`execute`), for runs whose own code keeps state in the
process from one run to the next.

Every process a run starts is below a keeper (hrpsim.sweep.kept): it ends with its run, at the
run's deadline, when the sweep is interrupted, and when the sweep is killed with SIGKILL, so a
resumed sweep never meets a run of the last one in its folder.
"""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import asdict
from pathlib import Path
from typing import Any, Protocol

from hrpsim.errors import ConfigError
from hrpsim.sweep import kept
from hrpsim.sweep.run_one import Job
from hrpsim.sweep.worker import Worker, prepare_run_dir

Finished = tuple[Job, dict[str, Any]]


class Runner(Protocol):
    """Runs one job after another; ``close`` ends what it holds (``kill``: at once)."""

    def run(self, job: Job, timeout: float, *, return_recording: bool = False) -> dict[str, Any]: ...

    def close(self, *, kill: bool = False) -> None: ...


class ProcessPerRun:
    """Each run in a process of its own: :func:`execute`."""

    def run(self, job: Job, timeout: float, *, return_recording: bool = False) -> dict[str, Any]:
        return execute(job, timeout, return_recording=return_recording)

    def close(self, *, kill: bool = False) -> None:
        pass


def runner(process_per_run: bool) -> Runner:
    return ProcessPerRun() if process_per_run else Worker()


def execute(job: Job, timeout: float, *, return_recording: bool = False) -> dict[str, Any]:
    """Run one job in a kept process of its own (``hrpsim.sweep.run_one``), ended at ``timeout`` s;
    its result (a failed one when it crashed or ran out of time). ``return_recording``: carry the
    run's recording in the result (``recording_bytes``), for a run on another machine."""
    started = time.perf_counter()
    run_dir = Path(job.run_dir)
    prepare_run_dir(job)
    with open(run_dir / "run.err", "ab") as err:
        proc = kept.start_kept([sys.executable, "-m", "hrpsim.sweep.run_one", str(run_dir / "job.json")], err)
        try:
            status = proc.wait(timeout)
        except subprocess.TimeoutExpired:
            result = kept.timed_out(timeout)
        else:
            result = _result_of(run_dir, status, return_recording)
        finally:
            kept.end(proc)
    result["worker_s"] = time.perf_counter() - started
    return result


def _result_of(run_dir: Path, status: int, return_recording: bool) -> dict[str, Any]:
    result_path = run_dir / "result.json"
    if not result_path.is_file():
        return kept.crashed(status, run_dir / "run.err")
    result = json.loads(result_path.read_text())
    if return_recording and result.get("recording"):
        result["recording_bytes"] = Path(result["recording"]).read_bytes()
    return result


class LocalPool:
    """``workers`` runs at a time on this machine, each slot holding its worker."""

    def __init__(self, workers: int, *, process_per_run: bool = False) -> None:
        if workers < 1:
            raise ConfigError(f"--workers must be at least 1, got {workers}")
        self.workers = workers
        self.process_per_run = process_per_run

    def map(self, jobs: list[Job], timeout: float, stopping: Callable[[], bool]) -> Iterator[Finished]:
        todo: queue.SimpleQueue[Job] = queue.SimpleQueue()
        for job in jobs:
            todo.put(job)
        finished: queue.SimpleQueue[Finished] = queue.SimpleQueue()
        quit_ = threading.Event()
        slots = [
            threading.Thread(
                target=_slot,
                args=(runner(self.process_per_run), todo, finished, timeout, quit_),
                name=f"sweep-worker-{i}",
                daemon=True,
            )
            for i in range(min(self.workers, len(jobs)))
        ]
        for slot in slots:
            slot.start()
        try:
            for _ in jobs:
                item = _next(finished, stopping)
                if item is None or stopping():
                    return
                yield item
        finally:
            quit_.set()
            kept.end_all()
            for slot in slots:
                slot.join(kept.KILL_WAIT_S)
            kept.end_all()  # one a slot started as the sweep stopped


def _next(finished: queue.SimpleQueue[Finished], stopping: Callable[[], bool]) -> Finished | None:
    """The next finished run; None when the sweep is stopped meanwhile."""
    while True:
        try:
            return finished.get(timeout=0.5)
        except queue.Empty:
            if stopping():
                return None


def _slot(
    held: Runner,
    todo: queue.SimpleQueue[Job],
    finished: queue.SimpleQueue[Finished],
    timeout: float,
    quit_: threading.Event,
) -> None:
    """One slot of the pool: runs jobs until there are none left (or the sweep stops)."""
    try:
        while not quit_.is_set():
            try:
                job = todo.get_nowait()
            except queue.Empty:
                return
            finished.put((job, _guarded(held, job, timeout)))
    finally:
        held.close(kill=quit_.is_set())


def _guarded(held: Runner, job: Job, timeout: float, *, return_recording: bool = False) -> dict[str, Any]:
    try:
        return held.run(job, timeout, return_recording=return_recording)
    except Exception as exc:  # starting the run's process failed
        held.close(kill=True)
        return {"status": "crashed", "error": f"the run could not be started: {type(exc).__name__}: {exc}"}


class RayWorker:
    """A Ray actor of one CPU holding a worker (or a process per run) on its node."""

    def __init__(self, process_per_run: bool) -> None:
        self.held = runner(process_per_run)

    def run(self, job: dict[str, Any], timeout: float) -> dict[str, Any]:
        return _guarded(self.held, Job(**job), timeout, return_recording=True)


class RayCluster:
    """Runs on the Ray cluster at ``address`` (``auto``: the one this machine belongs to, or a new
    local one), one actor of one CPU per worker. The project's files must be at the same path on
    every node."""

    def __init__(self, address: str, workers: int | None, *, process_per_run: bool = False) -> None:
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
        self.process_per_run = process_per_run

    def map(self, jobs: list[Job], timeout: float, stopping: Callable[[], bool]) -> Iterator[Finished]:
        ray = self._ray
        if not ray.is_initialized():
            ray.init(address=None if self.address == "local" else self.address, log_to_driver=False)
        actor_class = ray.remote(num_cpus=1, max_restarts=0, max_task_retries=0)(RayWorker)
        limit = min(self.workers or int(ray.cluster_resources().get("CPU", 1)), len(jobs))
        waiting = deque(jobs)
        idle = [actor_class.remote(self.process_per_run) for _ in range(limit)]
        in_flight: dict[Any, tuple[Any, Job]] = {}
        try:
            while waiting or in_flight:
                while waiting and idle:
                    actor, job = idle.pop(), waiting.popleft()
                    in_flight[actor.run.remote(asdict(job), timeout)] = (actor, job)
                done, _ = ray.wait(list(in_flight), num_returns=1, timeout=0.5)
                if stopping():
                    break
                for ref in done:
                    actor, job = in_flight.pop(ref)
                    try:
                        result = ray.get(ref)
                        idle.append(actor)
                    except Exception as exc:  # the actor itself died (its node went): a new one
                        result = {"status": "crashed", "error": f"the Ray worker failed: {type(exc).__name__}: {exc}"}
                        ray.kill(actor)
                        idle.append(actor_class.remote(self.process_per_run))
                    yield job, result
        finally:
            for actor in [*idle, *(actor for actor, _ in in_flight.values())]:
                ray.kill(actor)  # its worker's keeper ends the worker's tree when the actor goes
