"""``hrpsim sweep``: run one project many times with parameters varied, and report on the results.

hrpsim sweep SWEEP.yaml [--out RESULTS.csv] [--workers N | --ray ADDRESS] [--resume]
                        [--record-failures DIR] [--parquet FILE] [--process-per-run]
hrpsim sweep report RESULTS.csv [--metric COLUMN] [--x COLUMN] [--y COLUMN] [-o PLOT.png]
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import sys
import time
from pathlib import Path
from typing import Any

from hrpsim.errors import ConfigError
from hrpsim.sweep.executors import LocalPool, RayCluster
from hrpsim.sweep.plan import PlannedRun, load_plan, parameter_names
from hrpsim.sweep.run_one import Job
from hrpsim.sweep.table import ResultsTable, columns, row_of

EXIT_INTERRUPTED = 130


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="hrpsim sweep", description=__doc__.split("\n\n")[0])
    parser.add_argument("sweep", help="the sweep file (docs/sweeps.md)")
    parser.add_argument("--out", help="the results table (CSV); default: SWEEP-results.csv in this folder")
    parser.add_argument("--workers", type=int, help="runs at a time (default: this machine's cores)")
    parser.add_argument("--ray", metavar="ADDRESS", help="run on a Ray cluster: auto, local or HOST:PORT")
    parser.add_argument("--resume", action="store_true", help="keep the finished rows of --out and run the rest")
    parser.add_argument("--record-failures", metavar="DIR", help="keep the recording of every run that failed or fell")
    parser.add_argument("--parquet", metavar="FILE", help="also write the table as Parquet (needs pyarrow)")
    parser.add_argument(
        "--process-per-run",
        action="store_true",
        help="start a process for each run instead of workers that run many in turn",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress line")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["report"]:
        from hrpsim.sweep.report import main as report

        return report(argv[1:])
    args = parse_args(argv)
    try:
        return Sweep(args).run()
    except (ConfigError, ValueError) as exc:
        print(f"sweep: {exc}", file=sys.stderr)
        return 2


class Sweep:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.spec, self.runs = load_plan(args.sweep)
        default = Path.cwd() / f"{Path(args.sweep).stem}-results.csv"
        self.out = Path(args.out).resolve() if args.out else default
        self.runs_dir = self.out.with_name(self.out.name + ".runs")
        self.failures = Path(args.record_failures).resolve() if args.record_failures else None
        params = parameter_names(self.runs)
        spec = self.spec
        self.table = ResultsTable(self.out, columns(params, spec.robots, spec.controllers, list(spec.metrics)))
        self._stop = False
        per_run = args.process_per_run
        if args.ray:
            self.executor: LocalPool | RayCluster = RayCluster(args.ray, args.workers, process_per_run=per_run)
        else:
            self.executor = LocalPool(args.workers or os.cpu_count() or 1, process_per_run=per_run)
        self.efficiency = Efficiency()

    def run(self) -> int:
        done = self.table.resume() if self.args.resume else set()
        if not self.args.resume:
            self.table.start()
        todo = [run for run in self.runs if run.index not in done]
        jobs = [self._job(run) for run in todo]
        params = {run.index: run for run in todo}
        progress = Progress(len(self.runs), len(done), quiet=self.args.quiet)
        previous = {sig: signal.signal(sig, self._on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
        try:
            for job, result in self.executor.map(jobs, self.spec.timeout, lambda: self._stop):
                row = row_of(job.index, job.seed, params[job.index].params, result)
                self._keep_recording(job, result, row)
                self.table.add(row)
                self.efficiency.add(result)
                progress.add(row["status"] != "ok")
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
            progress.close()
        if self._stop:
            print(
                f"sweep: interrupted; {len(self.table.rows)} of {len(self.runs)} runs are in {self.out}: "
                "run again with --resume to finish",
                file=sys.stderr,
            )
            return EXIT_INTERRUPTED
        self.table.finish(Path(self.args.parquet) if self.args.parquet else None)
        failed = sum(1 for r in self.table.rows.values() if r["status"] != "ok")
        print(f"sweep: {len(self.table.rows)} runs, {failed} failed: {self.out}{self.efficiency.note()}")
        return 0

    def _job(self, run: PlannedRun) -> Job:
        record = bool(self.spec.metrics) or self.failures is not None
        run_dir = self.runs_dir / f"run-{run.index:05d}"
        return Job(
            index=run.index,
            seed=run.seed,
            params=run.params,
            project=self.spec.project,
            run_dir=str(run_dir),
            until=self.spec.until,
            metrics=self.spec.metrics,
            record=record,
        )

    def _keep_recording(self, job: Job, result: dict[str, Any], row: dict[str, Any]) -> None:
        """A failed or fallen run's recording goes to --record-failures; a finished run's folder goes."""
        bad = row["status"] != "ok" or any(v is False for k, v in row.items() if k.endswith(".stayed_up"))
        if bad and self.failures is not None:
            self.failures.mkdir(parents=True, exist_ok=True)
            target = self.failures / f"run-{job.index:05d}.mcap"
            if result.get("recording_bytes") is not None:
                target.write_bytes(result["recording_bytes"])
            elif result.get("recording") and Path(result["recording"]).is_file():
                shutil.move(result["recording"], target)
        if row["status"] == "ok":
            shutil.rmtree(job.run_dir, ignore_errors=True)

    def _on_signal(self, signum: int, _frame: object) -> None:
        self._stop = True


class Efficiency:
    """The share of the workers' wall time spent stepping worlds (each run's loop wall time, over what
    the run cost its worker: the worker's start, the world's build, the result's way back)."""

    def __init__(self) -> None:
        self.stepping = self.working = 0.0

    def add(self, result: dict[str, Any]) -> None:
        wall = (result.get("summary") or {}).get("wall_time")
        if isinstance(wall, int | float) and isinstance(result.get("worker_s"), int | float):
            self.stepping += wall
            self.working += result["worker_s"]

    @property
    def share(self) -> float | None:
        return self.stepping / self.working if self.working > 0 else None

    def note(self) -> str:
        share = self.share
        return "" if share is None else f" (the workers spent {share:.0%} of their time stepping worlds)"


class Progress:
    """done/failed/ETA on stderr: one line kept up to date on a terminal, a line per run elsewhere."""

    def __init__(self, total: int, done: int, *, quiet: bool) -> None:
        self.total, self.done_before, self.done, self.failed = total, done, done, 0
        self.quiet, self.tty = quiet, sys.stderr.isatty()
        self.started = time.monotonic()

    def add(self, failed: bool) -> None:
        self.done += 1
        self.failed += failed
        if self.quiet:
            return
        elapsed = time.monotonic() - self.started
        rate = (self.done - self.done_before) / elapsed if elapsed > 0 else 0.0
        left = (self.total - self.done) / rate if rate > 0 else float("nan")
        line = f"sweep: {self.done}/{self.total} runs, {self.failed} failed, about {left:.0f} s left"
        print(("\r" + line) if self.tty else line, end="" if self.tty else "\n", file=sys.stderr, flush=True)

    def close(self) -> None:
        if self.tty and not self.quiet:
            print(file=sys.stderr)
