"""The runs of a sweep: every combination of a grid point, an explicit run and a random sample, each
with its own seed. The plan depends only on the sweep file (and its seed), never on how or where the
runs are executed, so the same file gives the same table on one worker or a cluster."""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass
from typing import Any

from hrpsim.sweep.spec import Distribution, SweepSpec


@dataclass(frozen=True)
class PlannedRun:
    index: int
    seed: int
    params: dict[str, Any]


def plan(spec: SweepSpec) -> list[PlannedRun]:
    names = list(spec.grid)
    grid_points = [dict(zip(names, values, strict=True)) for values in itertools.product(*spec.grid.values())]
    samples = _samples(spec)
    choices = itertools.product(grid_points or [{}], spec.runs or [{}], samples or [{}])
    rng = random.Random(f"hrpsim-sweep-seeds-{spec.seed}")
    return [
        PlannedRun(index=i, seed=rng.randrange(2**31), params={**g, **r, **s}) for i, (g, r, s) in enumerate(choices)
    ]


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
