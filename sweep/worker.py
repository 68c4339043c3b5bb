"""A worker: one process that runs many runs of a sweep in turn, keeping its interpreter, its imports
and the models it has read, so that a run costs its simulation and not a process's start.

``python -m hrpsim.sweep.worker JOBS_FD RESULTS_FD`` reads jobs (hrpsim.sweep.run_one.Job, one JSON
line each) from JOBS_FD and writes each run's result as one JSON line to RESULTS_FD; it ends when
JOBS_FD closes. Each run builds a fresh world (hrpsim.sweep.run_one), its output goes to its own
``run.err``, and whatever it started ends with it: the worker is the subreaper of its tree
(hrpsim.process_tree) and ends every process below it between runs. :class:`Worker` is the sweep's
end: it starts the worker under a keeper, hands it one run at a time with the run's deadline, and
when a run crashes or hangs its worker, ends that worker's whole tree (the run is one row) and
starts a new worker for the next run.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict
from pathlib import Path
from typing import Any

from hrpsim.sweep import kept
from hrpsim.sweep.run_one import Job

RUNS_PER_WORKER = 1000  # then a new worker: what a long study leaks into one process stays bounded
START_TIMEOUT_S = 120.0  # a worker's start (its imports) is not its first run's time
READY = b"ready"
READ_BYTES = 1 << 16


class WorkerGone(Exception):
    """The worker ended between runs: the next run starts a new one."""


class Worker:
    """The sweep's end of one worker process; :meth:`run` runs a job in it, starting a worker first
    when there is none. The thread that calls :meth:`run` must outlive the worker (:meth:`close`)."""

    def __init__(self) -> None:
        self.proc: subprocess.Popen | None = None
        self._jobs = -1  # the write end of the worker's jobs pipe
        self._results = -1  # the read end of its results pipe
        self._pending = b""
        self.runs = 0

    def run(self, job: Job, timeout: float, *, return_recording: bool = False) -> dict[str, Any]:
        """Run ``job`` within ``timeout`` s; its result (a failed one when the run crashed or hung the
        worker). ``worker_s``: the wall time the run cost the worker, a worker's start included."""
        started = time.perf_counter()
        run_dir = Path(job.run_dir)
        prepare_run_dir(job)
        try:
            result = self._run(job, timeout, run_dir / "run.err")
        except WorkerGone:  # it ended after the last run (a daemon of it killed it, say): once more
            self.close()
            result = self._run(job, timeout, run_dir / "run.err")
        result["worker_s"] = time.perf_counter() - started
        if return_recording and result.get("recording"):
            result["recording_bytes"] = Path(result["recording"]).read_bytes()
        return result

    def _run(self, job: Job, timeout: float, output: Path) -> dict[str, Any]:
        if self.proc is None:
            self._start(output)
            ready = self._read_line(time.monotonic() + START_TIMEOUT_S)
            if ready != READY:
                return kept.crashed(self._ended(), output, "the worker that was to run it")
        try:
            os.write(self._jobs, (json.dumps(asdict(job)) + "\n").encode())
        except BrokenPipeError:
            raise WorkerGone from None
        line = self._read_line(time.monotonic() + timeout)
        if line is None:
            self.close(kill=True)
            return kept.timed_out(timeout)
        if not line:
            status = self._ended()
            return kept.crashed(status, output)
        self.runs += 1
        if self.runs >= RUNS_PER_WORKER:
            self.close()
        return json.loads(line)

    def _start(self, output: Path) -> None:
        """A new worker, its start-up's output (an import that fails) to ``output``."""
        jobs_read, self._jobs = os.pipe()
        self._results, results_write = os.pipe()
        try:
            with open(output, "ab") as out:
                argv = [sys.executable, "-m", "hrpsim.sweep.worker", str(jobs_read), str(results_write)]
                self.proc = kept.start_kept(argv, out, pass_fds=(jobs_read, results_write))
        finally:
            os.close(jobs_read)
            os.close(results_write)
        self._pending, self.runs = b"", 0

    def _read_line(self, deadline: float) -> bytes | None:
        """The worker's next line: b"" when it ended, None when ``deadline`` came first."""
        while b"\n" not in self._pending:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            ready, _, _ = select.select([self._results], [], [], left)
            if not ready:
                continue
            chunk = os.read(self._results, READ_BYTES)
            if not chunk:
                return b""
            self._pending += chunk
        line, _, self._pending = self._pending.partition(b"\n")
        return line

    def _ended(self) -> int | None:
        """The worker's exit status, once it has ended; the worker is forgotten."""
        assert self.proc is not None
        try:
            status = self.proc.wait(kept.KILL_WAIT_S)
        except subprocess.TimeoutExpired:
            status = None
        self.close(kill=True)
        return status

    def close(self, *, kill: bool = False) -> None:
        """The worker ends: asked to (its jobs pipe closes) or, with ``kill``, killed with its tree."""
        for fd in (self._jobs, self._results):
            if fd >= 0:
                os.close(fd)
        self._jobs = self._results = -1
        if self.proc is not None:
            if not kill:
                try:
                    self.proc.wait(kept.KILL_WAIT_S)
                except subprocess.TimeoutExpired:
                    pass
            kept.end(self.proc)
            self.proc = None


def prepare_run_dir(job: Job) -> None:
    """The run's folder, with its job and an empty output file (a failed run's folder keeps both)."""
    run_dir = Path(job.run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "result.json").unlink(missing_ok=True)
    (run_dir / "job.json").write_text(json.dumps(asdict(job)))
    (run_dir / "run.err").write_bytes(b"")


# --- the worker process ---


def main(argv: list[str]) -> int:
    from hrpsim.process_tree import become_subreaper, die_with_parent, end_descendants
    from hrpsim.simserver.bodies import BodyCache
    from hrpsim.simulation import Simulation  # noqa: F401  imported once, before the first run's clock starts
    from hrpsim.sweep.run_one import result_json, run_job

    jobs_fd, results_fd = int(argv[0]), int(argv[1])
    for fd in (jobs_fd, results_fd):  # the processes a run starts must not hold them
        os.set_inheritable(fd, False)
    if not die_with_parent(signal.SIGKILL, os.getppid()):  # its keeper
        return 1
    become_subreaper()
    bodies = BodyCache()
    _quiet_between_runs()
    with os.fdopen(jobs_fd, "rb") as jobs, os.fdopen(results_fd, "wb", buffering=0) as results:
        results.write(READY + b"\n")
        for line in jobs:
            job = Job(**json.loads(line))
            with _output_to(Path(job.run_dir) / "run.err"):
                result = run_job(job, bodies)
                end_descendants()  # what the run started ends with it
            results.write((result_json(result) + "\n").encode())
    return 0


def _quiet_between_runs() -> None:
    """Output between runs goes nowhere (a run's goes to its run.err)."""
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.dup2(null, 2)
    os.close(null)


@contextmanager
def _output_to(path: Path) -> Iterator[None]:
    """This process's standard output and error (its children's too) go to ``path`` meanwhile."""
    sys.stdout.flush()
    sys.stderr.flush()
    target = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    saved = os.dup(1), os.dup(2)
    os.dup2(target, 1)
    os.dup2(target, 2)
    os.close(target)
    try:
        yield
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        os.close(saved[0])
        os.close(saved[1])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
