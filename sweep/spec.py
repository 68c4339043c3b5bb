"""A sweep file: one base project and what varies between its runs (docs/sweeps.md).

    project: ../sample_stand.yaml      # the base project, relative to this file
    seed: 7                            # seeds the random samples and each run's seed
    until: 2.0                         # each run's end (default: the project's end_time)
    timeout: 300                       # wall seconds a run may take before it is a failed row
    grid:                              # every combination of these
      collisions[0].friction: [0.3, 0.6, 1.0]
      world.engine: [ode, mujoco]
    runs:                              # and/or explicit runs
      - {models[robot].mass_scale: 0.9}
    samples:                           # and/or seeded random samples
      count: 20
      vary:
        disturbances[0].force[0]: {uniform: [20, 80]}
    metrics:                           # column -> FILE.py:function, called with each finished run
      max_knee: metrics.py:max_knee

The runs are every combination of a grid point, an explicit run and a sample (a section that is
absent counts as one empty choice). Every problem in the file is reported at once, naming the key.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from hrpsim.errors import ConfigError

DEFAULT_TIMEOUT_S = 600.0
DISTRIBUTIONS = {"uniform": 2, "normal": 2, "choice": None, "integers": 2}
KEYS = {"project", "seed", "until", "timeout", "grid", "runs", "samples", "metrics"}


@dataclass
class Distribution:
    kind: str  # uniform [low, high], normal [mean, std], integers [low, high], choice [values...]
    args: list[Any]


@dataclass
class SweepSpec:
    path: str  # the sweep file, absolute
    project: str  # the base project, absolute
    seed: int = 0
    until: float | None = None
    timeout: float = DEFAULT_TIMEOUT_S
    grid: dict[str, list[Any]] = field(default_factory=dict)
    runs: list[dict[str, Any]] = field(default_factory=list)
    sample_count: int = 0
    vary: dict[str, Distribution] = field(default_factory=dict)
    metrics: dict[str, str] = field(default_factory=dict)  # column -> FILE.py:function, absolute

    @property
    def folder(self) -> Path:
        return Path(self.path).parent


class _Problems:
    def __init__(self, path: str) -> None:
        self.path, self.items = path, []

    def bad(self, key: str, message: str) -> None:
        self.items.append(f"{self.path}: {key}: {message}")


def load_sweep(path: str | Path) -> SweepSpec:
    """Read and check a sweep file; ConfigError listing every problem, each naming the key."""
    path = Path(path).resolve()
    try:
        data = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError(f"{path}: cannot read the sweep file: {exc}") from None
    return parse_sweep(data, path)


def parse_sweep(data: Any, path: Path) -> SweepSpec:
    p = _Problems(str(path))
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: a sweep file is a mapping with at least 'project' (docs/sweeps.md)")
    for key in sorted(set(data) - KEYS):
        p.bad(key, f"unknown key (known: {', '.join(sorted(KEYS))})")
    project = data.get("project")
    if not isinstance(project, str) or not project:
        p.bad("project", "required: the base project file, relative to the sweep file")
        project = ""
    elif not (path.parent / project).is_file():
        p.bad("project", f"no such file: {path.parent / project}")
    spec = SweepSpec(path=str(path), project=str((path.parent / project).resolve()) if project else "")
    spec.seed = _integer(p, "seed", data.get("seed", 0))
    if data.get("until") is not None:
        spec.until = _positive(p, "until", data["until"])
    spec.timeout = _positive(p, "timeout", data.get("timeout", DEFAULT_TIMEOUT_S))
    spec.grid = _grid(p, data.get("grid") or {})
    spec.runs = _runs(p, data.get("runs") or [])
    spec.sample_count, spec.vary = _samples(p, data.get("samples"))
    spec.metrics = _metrics(p, data.get("metrics") or {}, path.parent)
    if p.items:
        raise ConfigError("\n  ".join([f"{path}: {len(p.items)} problem(s) in the sweep file:", *p.items]))
    return spec


def _integer(p: _Problems, key: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        p.bad(key, f"must be a whole number, got {value!r}")
        return 0
    return value


def _positive(p: _Problems, key: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value <= 0:
        p.bad(key, f"must be a positive number of seconds, got {value!r}")
        return 1.0
    return float(value)


def _grid(p: _Problems, grid: Any) -> dict[str, list[Any]]:
    if not isinstance(grid, dict):
        p.bad("grid", "must map parameters to lists of values")
        return {}
    out = {}
    for name, values in grid.items():
        if not isinstance(values, list) or not values:
            p.bad(f"grid.{name}", f"must be a non-empty list of values, got {values!r}")
            continue
        out[str(name)] = values
    return out


def _runs(p: _Problems, runs: Any) -> list[dict[str, Any]]:
    if not isinstance(runs, list):
        p.bad("runs", "must be a list of mappings (parameter: value)")
        return []
    out = []
    for i, run in enumerate(runs):
        if not isinstance(run, dict) or not run:
            p.bad(f"runs[{i}]", f"must be a non-empty mapping of parameter: value, got {run!r}")
            continue
        out.append({str(k): v for k, v in run.items()})
    return out


def _samples(p: _Problems, samples: Any) -> tuple[int, dict[str, Distribution]]:
    if samples is None:
        return 0, {}
    if not isinstance(samples, dict) or set(samples) - {"count", "vary"}:
        p.bad("samples", "must be {count: N, vary: {parameter: {uniform|normal|integers|choice: [...]}}}")
        return 0, {}
    count = _integer(p, "samples.count", samples.get("count"))
    if count <= 0:
        p.bad("samples.count", f"must be at least 1, got {samples.get('count')!r}")
    vary = samples.get("vary")
    if not isinstance(vary, dict) or not vary:
        p.bad("samples.vary", "must map parameters to distributions")
        return count, {}
    out = {}
    for name, dist in vary.items():
        key = f"samples.vary.{name}"
        if not isinstance(dist, dict) or len(dist) != 1 or next(iter(dist)) not in DISTRIBUTIONS:
            p.bad(key, f"must be one of {', '.join(f'{{{d}: [...]}}' for d in DISTRIBUTIONS)}, got {dist!r}")
            continue
        kind, args = next(iter(dist.items()))
        arity = DISTRIBUTIONS[kind]
        if not isinstance(args, list) or (arity is not None and len(args) != arity) or not args:
            p.bad(key, f"{kind} takes {'a list of values' if arity is None else f'[{arity} numbers]'}, got {args!r}")
            continue
        if kind != "choice" and not all(isinstance(a, int | float) and not isinstance(a, bool) for a in args):
            p.bad(key, f"{kind} takes numbers, got {args!r}")
            continue
        out[str(name)] = Distribution(kind, args)
    return count, out


def _metrics(p: _Problems, metrics: Any, folder: Path) -> dict[str, str]:
    if not isinstance(metrics, dict):
        p.bad("metrics", "must map column names to FILE.py:function")
        return {}
    out = {}
    for name, target in metrics.items():
        file, _, func = str(target).partition(":")
        if not file.endswith(".py") or not func.isidentifier():
            p.bad(f"metrics.{name}", f"must be FILE.py:function, got {target!r}")
        elif not (folder / file).is_file():
            p.bad(f"metrics.{name}", f"no such file: {folder / file}")
        else:
            out[str(name)] = f"{(folder / file).resolve()}:{func}"
    return out
