"""The runs of a sweep: every combination of a grid point, an explicit run and a random sample, each
with its own seed. The plan depends only on the sweep file (and its seed), never on how or where the
runs are executed, so the same file gives the same table on one worker or a cluster.

A ``set`` expression that cannot be computed for some runs (a division by zero, a variable those runs
do not set) is a problem of the sweep file: every such problem is reported at once, naming the place
and the runs, before any run starts."""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hrpsim.sweep.expressions import Budget, ExpressionError, OverBudget, evaluate
from hrpsim.sweep.spec import Distribution, Problems, SweepSpec, read_sweep, run_count

RUNS_NAMED = 5  # runs named in one problem of a set expression; the rest are counted


@dataclass(frozen=True)
class PlannedRun:
    index: int
    seed: int
    params: dict[str, Any]


def load_plan(path: str | Path) -> tuple[SweepSpec, list[PlannedRun]]:
    """A sweep file and its runs; ConfigError listing every problem of the file, those its ``set``
    expressions meet in the runs included."""
    spec, problems = read_sweep(path)
    runs = plan_into(spec, problems) if run_count(spec) <= spec.max_runs else []
    problems.check()
    return spec, runs


def plan(spec: SweepSpec) -> list[PlannedRun]:
    """The runs; ConfigError listing every problem of the sweep's ``set`` expressions."""
    problems = Problems(spec.path)
    if (count := run_count(spec)) > spec.max_runs:
        problems.bad("grid, runs, samples", f"make {count} runs, more than the bound of {spec.max_runs} (max_runs)")
    runs = plan_into(spec, problems) if not problems.items else []
    problems.check()
    return runs


def plan_into(spec: SweepSpec, problems: Problems) -> list[PlannedRun]:
    """The runs, the problems of the ``set`` expressions going to ``problems``."""
    names = list(spec.grid)
    grid_points = [dict(zip(names, values, strict=True)) for values in itertools.product(*spec.grid.values())]
    samples = _samples(spec)
    choices = itertools.product(grid_points or [{}], spec.runs or [{}], samples or [{}])
    rng = random.Random(f"hrpsim-sweep-seeds-{spec.seed}")
    failing: dict[tuple[str, str], list[int]] = {}  # (place, why) -> the runs it fails for
    runs = []
    budget = Budget()
    for i, (g, r, s) in enumerate(choices):
        params = {**g, **r, **s}
        try:
            computed, failures = _computed(params, spec, budget)
        except OverBudget as exc:
            problems.bad("set", str(exc))
            break
        for failure in failures:
            failing.setdefault(failure, []).append(i)
        runs.append(PlannedRun(index=i, seed=rng.randrange(2**31), params={**params, **computed}))
    for (place, why), indices in failing.items():
        problems.bad(f"set.{place}", f"{why} ({_runs_named(indices)})")
    return runs


def _computed(params: dict[str, Any], spec: SweepSpec, budget: Budget) -> tuple[dict[str, Any], list[tuple[str, str]]]:
    """The places ``set`` computes from the run's parameters, and (place, why) for each that cannot be."""
    values, failures = {}, []
    for place, text in spec.computed.items():
        try:
            values[place] = evaluate(text, params, budget)
        except OverBudget:
            raise
        except ExpressionError as exc:
            failures.append((place, str(exc)))
    return values, failures


def _runs_named(indices: list[int]) -> str:
    named = ", ".join(map(str, indices[:RUNS_NAMED]))
    more = f" and {len(indices) - RUNS_NAMED} more" if len(indices) > RUNS_NAMED else ""
    return f"run {named}" if len(indices) == 1 else f"runs {named}{more}"


def parameter_names(runs: list[PlannedRun]) -> list[str]:
    """Every parameter any run sets, in the order they first appear."""
    return list(dict.fromkeys(name for run in runs for name in run.params))


def _samples(spec: SweepSpec) -> list[dict[str, Any]]:
    rng = random.Random(f"hrpsim-sweep-samples-{spec.seed}")
    return [{name: _draw(rng, dist) for name, dist in spec.vary.items()} for _ in range(spec.sample_count)]


def _draw(rng: random.Random, dist: Distribution) -> Any:
    if dist.kind == "uniform":
        return rng.uniform(*dist.args)
    if dist.kind == "normal":
        return rng.gauss(*dist.args)
    if dist.kind == "integers":
        return rng.randint(int(dist.args[0]), int(dist.args[1]))
    return rng.choice(dist.args)
