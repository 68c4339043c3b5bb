"""One run of a sweep (:func:`run_job`), in a worker that runs many in turn (hrpsim.sweep.worker) or in
a process of its own (``python -m hrpsim.sweep.run_one JOB.json``, the result written beside it as
``result.json``). Whatever goes wrong in the run is its result, and what it does to its process
(a crash, a hang) is the executor's to end.

The run's project (the base project with the run's parameters set) is written to the run's folder.
When every controller of it runs in process the run is an :class:`hrpsim.Simulation` in this process;
otherwise it is a whole ``hrpsim launch`` with its own nameserver on a free loopback port, so runs
never see each other. The result is the run's row: its status, the run summary's figures and the
sweep's metrics.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from hrpsim.errors import HrpsimError

if TYPE_CHECKING:
    from hrpsim.simserver.bodies import BodyCache


@dataclass
class Job:
    """What one run needs to know; written as JSON for the run's process."""

    index: int
    seed: int
    params: dict[str, Any]
    project: str  # the base project, absolute
    run_dir: str
    until: float | None = None
    metrics: dict[str, str] = field(default_factory=dict)  # column -> FILE.py:function
    record: bool = False  # keep a recording of the run (run.mcap in run_dir)


@dataclass
class RunResult:
    """A finished run as a metric function sees it: ``summary`` is the run summary (docs/architecture.md),
    ``series(robot)`` the recorded time series of one robot (hrpsim.recording.reader.Series)."""

    index: int
    seed: int
    params: dict[str, Any]
    summary: dict[str, Any]
    recording: str | None

    def series(self, robot: str) -> Any:
        if self.recording is None:
            raise HrpsimError("this run was not recorded: the sweep records runs only when it has metrics")
        from hrpsim.recording.reader import open_recording

        return open_recording(self.recording).series(robot)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    job = Job(**json.loads(Path(argv[0]).read_text()))
    result = run_job(job)
    (Path(job.run_dir) / "result.json").write_text(result_json(result))
    return 0


def run_job(job: Job, bodies: BodyCache | None = None) -> dict[str, Any]:
    """One run, in this process, and its result; whatever goes wrong is the result's error.
    ``bodies``: models read by earlier runs of this process (a worker's)."""
    started = time.perf_counter()
    try:
        result = execute(job, bodies)
    except Exception as exc:  # the run's failure is its row, never the sweep's
        result = {"status": "error", "error": _one_line(exc), "traceback": traceback.format_exc()}
    result["wall_s"] = time.perf_counter() - started
    return result


def result_json(result: dict[str, Any]) -> str:
    """A result as one line of JSON (numpy values a metric returned as plain ones)."""
    return json.dumps(result, default=_plain)


def execute(job: Job, bodies: BodyCache | None = None) -> dict[str, Any]:
    from hrpsim.project import load_project
    from hrpsim.sweep.overrides import absolute_paths, apply_parameters

    run_dir = Path(job.run_dir)
    base = Path(job.project)
    data = absolute_paths(apply_parameters(yaml.safe_load(base.read_text()), job.params), base.parent)
    if job.until is not None:
        data.setdefault("world", {})["end_time"] = job.until
    recording = str(run_dir / "run.mcap") if job.record else None
    if recording is not None:
        data["record"] = {"file": recording}
    path = run_dir / "project.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    project = load_project(path)
    in_process = all(c.in_process for c in project.controllers)
    summary = _in_process(project, bodies) if in_process else _launch(path, run_dir)
    result: dict[str, Any] = {
        "status": "ok" if summary.get("error") is None else "failed",
        "error": summary.get("error"),
        "mode": "in_process" if in_process else "launch",
        "summary": summary,
        "recording": recording if recording and Path(recording).is_file() else None,
    }
    run = RunResult(job.index, job.seed, job.params, summary, result["recording"])
    result["metrics"] = {}
    for name, target in job.metrics.items() if result["status"] == "ok" else ():
        try:
            result["metrics"][name] = _metric(target)(run)
        except Exception as exc:
            result["status"] = "failed"
            result["error"] = f"metric {name!r} ({target}) raised {_one_line(exc)}"
            break
    return result


def _in_process(project: Any, cache: BodyCache | None) -> dict[str, Any]:
    from hrpsim.errors import SimulationError
    from hrpsim.simserver.bodies import load_bodies
    from hrpsim.simulation import Simulation

    with Simulation(project, bodies=load_bodies(project, None, local=True, cache=cache)) as sim:
        try:
            return sim.run()
        except SimulationError as exc:
            summary = sim.summary()
            summary["error"] = summary.get("error") or str(exc)
            return summary


def _launch(project: Path, run_dir: Path) -> dict[str, Any]:
    summary_path = run_dir / "summary.json"
    with open(run_dir / "launch.out", "wb") as out:
        command = [sys.executable, "-m", "hrpsim", "launch", str(project), "--nameserver", "tcp://127.0.0.1:*"]
        command += ["--summary", str(summary_path), "--run-dir", str(run_dir / "launch")]
        status = subprocess.run(command, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL).returncode
    if summary_path.is_file():
        return json.loads(summary_path.read_text())
    tail = (run_dir / "launch.out").read_text(errors="replace").strip().splitlines()[-5:]
    return {"error": f"hrpsim launch exited with status {status} and wrote no summary: " + " | ".join(tail)}


_METRICS: dict[str, Callable[[RunResult], Any]] = {}


def _metric(target: str) -> Callable[[RunResult], Any]:
    """The function ``FILE.py:function`` names, its module loaded once per process."""
    if target not in _METRICS:
        file, _, func = target.rpartition(":")
        spec = importlib.util.spec_from_file_location(f"hrpsim_sweep_metrics_{len(_METRICS)}", file)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        _METRICS[target] = getattr(module, func)
    return _METRICS[target]


def _one_line(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {' '.join(str(exc).split())}"


def _plain(value: Any) -> Any:
    """numpy numbers and arrays a metric may return, as JSON values."""
    if hasattr(value, "tolist"):
        return value.tolist()
    if hasattr(value, "__dataclass_fields__"):
        return asdict(value)
    return str(value)


if __name__ == "__main__":
    sys.exit(main())
