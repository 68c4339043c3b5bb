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
    set:                               # places computed from the sweep's variables (below)
      disturbances[0].force: "[size * cos(radians(angle)), size * sin(radians(angle)), 0]"
    metrics:                           # column -> FILE.py:function, called with each finished run
      max_knee: metrics.py:max_knee
    max_runs: 200000                   # more runs than the default bound (MAX_RUNS)

A name without dots or brackets that is not a section of a project file (``size``, ``angle``) is a
variable of the sweep: it is a column of the table, and ``set`` expressions compute places of the
project from it.

The runs are every combination of a grid point, an explicit run and a sample (a section that is
absent counts as one empty choice). Every problem in the file is reported at once, naming the key.

Reading a sweep file is bounded: at most MAX_FILE_BYTES, at most MAX_VALUES values once YAML's
aliases are expanded, at most MAX_RUNS runs unless ``max_runs`` says more (the count is checked before
any run is planned), and ``set`` expressions as hrpsim.sweep.expressions bounds them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hrpsim.errors import ConfigError, HrpsimError
from hrpsim.files import ReadPolicy, read_regular, reading_under

DEFAULT_TIMEOUT_S = 600.0
MAX_TIMEOUT_S = 7 * 24 * 3600.0  # a week: a run's deadline must fit the clocks' waits
MAX_FILE_BYTES = 4 * 1024 * 1024  # a sweep file is a page of YAML; a long list of runs fits too
MAX_VALUES = 1_000_000  # values in the file, YAML aliases expanded
MAX_RUNS = 100_000  # runs a sweep plans unless its max_runs says more
DISTRIBUTIONS = {"uniform": 2, "normal": 2, "choice": None, "integers": 2}
KEYS = {"project", "seed", "until", "timeout", "grid", "runs", "samples", "set", "metrics", "max_runs"}


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
    computed: dict[str, str] = field(default_factory=dict)  # place -> expression of the variables
    metrics: dict[str, str] = field(default_factory=dict)  # column -> FILE.py:function, absolute
    max_runs: int = MAX_RUNS
    robots: list[str] = field(default_factory=list)  # the base project's models that are not static
    controllers: list[str] = field(default_factory=list)  # and its controllers

    @property
    def folder(self) -> Path:
        return Path(self.path).parent


class Problems:
    """Every problem of a sweep file, each naming the key; :meth:`check` raises them at once."""

    LISTED = 50  # past this many, the rest are counted

    def __init__(self, path: str) -> None:
        self.path, self.items = path, []

    def bad(self, key: str, message: str) -> None:
        self.items.append(_cut(f"{self.path}: {key}: {message}"))

    def check(self) -> None:
        if not self.items:
            return
        listed = self.items[: self.LISTED]
        more = [f"... and {len(self.items) - len(listed)} more"] if len(self.items) > len(listed) else []
        raise ConfigError(
            "\n  ".join([f"{self.path}: {len(self.items)} problem(s) in the sweep file:", *listed, *more])
        )


def load_sweep(path: str | Path) -> SweepSpec:
    """Read and check a sweep file; ConfigError listing every problem, each naming the key."""
    spec, problems = read_sweep(path)
    problems.check()
    return spec


def read_sweep(path: str | Path) -> tuple[SweepSpec, Problems]:
    """Read a sweep file: what of it is right, and the problems of the rest (ConfigError when the
    file itself cannot be read as a sweep file)."""
    from hrpsim.project import parse_yaml

    path = Path(path).resolve()
    try:
        with reading_under(ReadPolicy(max_file_bytes=MAX_FILE_BYTES)):
            text = read_regular(path, "sweep file").decode("utf-8")
    except HrpsimError as exc:
        raise ConfigError(str(exc)) from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text (byte {exc.start}); a sweep file is YAML") from None
    data = parse_yaml(text, path, "a sweep file")
    if count_values(data, MAX_VALUES) > MAX_VALUES:
        raise ConfigError(
            f"{path}: holds more than {MAX_VALUES} values once its YAML aliases (*name) are expanded; "
            "a sweep file is a page of settings"
        )
    problems = Problems(str(path))
    return parse_sweep(data, path, problems), problems


def count_values(data: Any, limit: int) -> int:
    """How many values ``data`` holds with shared parts counted each time they are used (as JSON or
    a run's project would write them), counting no further than one past ``limit``."""
    count, waiting = 0, [data]
    while waiting and count <= limit:
        value = waiting.pop()
        count += 1
        if isinstance(value, dict):
            waiting.extend(value.keys())
            waiting.extend(value.values())
        elif isinstance(value, list):
            waiting.extend(value)
    return count


def parse_sweep(data: Any, path: Path, problems: Problems | None = None) -> SweepSpec:
    """The sweep of already-read YAML; its problems go to ``problems``, each naming the key, or
    without it are raised at once (ConfigError)."""
    p = Problems(str(path)) if problems is None else problems
    spec = _parse_sweep(data, path, p)
    if problems is None:
        p.check()
    return spec


def _parse_sweep(data: Any, path: Path, p: Problems) -> SweepSpec:
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
        project = ""
    spec = SweepSpec(path=str(path), project=str((path.parent / project).resolve()) if project else "")
    if project:
        spec.robots, spec.controllers = _base_project(p, spec.project)
    spec.seed = _integer(p, "seed", data.get("seed", 0))
    if data.get("until") is not None:
        spec.until = _positive(p, "until", data["until"])
    spec.timeout = _positive(p, "timeout", data.get("timeout", DEFAULT_TIMEOUT_S))
    if spec.timeout > MAX_TIMEOUT_S:
        p.bad("timeout", f"at most {MAX_TIMEOUT_S:g} s (a week), got {spec.timeout:g}")
    spec.grid = _grid(p, data.get("grid") or {})
    spec.runs = _runs(p, data.get("runs") or [])
    spec.sample_count, spec.vary = _samples(p, data.get("samples"))
    spec.computed = _computed(p, data.get("set") or {}, spec)
    spec.metrics = _metrics(p, data.get("metrics") or {}, path.parent)
    spec.max_runs = _max_runs(p, data.get("max_runs", MAX_RUNS))
    if (count := run_count(spec)) > spec.max_runs:
        p.bad(
            "grid, runs, samples",
            f"make {count} runs, more than the bound of {spec.max_runs}: "
            "make the sweep smaller, or raise the bound with max_runs: N",
        )
    return spec


def run_count(spec: SweepSpec) -> int:
    """How many runs the plan has: every combination of a grid point, an explicit run and a sample."""
    return math.prod(len(values) for values in spec.grid.values()) * max(1, len(spec.runs)) * max(1, spec.sample_count)


def _base_project(p: Problems, project: str) -> tuple[list[str], list[str]]:
    """The base project's robots (models not static) and controllers, for the table's columns."""
    from hrpsim.project import load_project

    try:
        base = load_project(project)
    except HrpsimError as exc:
        p.bad("project", f"is not a project hrpsim can run: {exc}")
        return [], []
    return [m.name for m in base.models if not m.static], [c.name for c in base.controllers]


def _max_runs(p: Problems, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        p.bad("max_runs", f"must be a whole number of runs, at least 1, got {_shown(value)}")
        return MAX_RUNS
    return value


def _integer(p: Problems, key: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        p.bad(key, f"must be a whole number, got {_shown(value)}")
        return 0
    return value


def _positive(p: Problems, key: str, value: Any) -> float:
    if not _finite_number(value) or value <= 0:
        p.bad(key, f"must be a positive number of seconds, got {_shown(value)}")
        return 1.0
    return float(value)


def _grid(p: Problems, grid: Any) -> dict[str, list[Any]]:
    if not isinstance(grid, dict):
        p.bad("grid", "must map parameters to lists of values")
        return {}
    out = {}
    for name, values in grid.items():
        if not isinstance(values, list) or not values:
            p.bad(f"grid.{name}", f"must be a non-empty list of values, got {_shown(values)}")
        elif _parameter(p, f"grid.{name}", name):
            out[str(name)] = values
    return out


def _runs(p: Problems, runs: Any) -> list[dict[str, Any]]:
    if not isinstance(runs, list):
        p.bad("runs", "must be a list of mappings (parameter: value)")
        return []
    out = []
    for i, run in enumerate(runs):
        if not isinstance(run, dict) or not run:
            p.bad(f"runs[{i}]", f"must be a non-empty mapping of parameter: value, got {_shown(run)}")
        elif all([_parameter(p, f"runs[{i}].{name}", name) for name in run]):
            out.append({str(k): v for k, v in run.items()})
    return out


def _parameter(p: Problems, key: str, name: Any) -> bool:
    """Whether ``name`` is a sweep variable or a place in a project file (problem of ``key`` if not)."""
    from hrpsim.sweep.overrides import is_variable, split_parameter

    try:
        if not is_variable(str(name)):
            split_parameter(str(name))
    except ConfigError as exc:
        p.bad(key, str(exc))
        return False
    return True


def _samples(p: Problems, samples: Any) -> tuple[int, dict[str, Distribution]]:
    if samples is None:
        return 0, {}
    if not isinstance(samples, dict) or set(samples) - {"count", "vary"}:
        p.bad("samples", "must be {count: N, vary: {parameter: {uniform|normal|integers|choice: [...]}}}")
        return 0, {}
    count = _integer(p, "samples.count", samples.get("count"))
    if count <= 0:
        p.bad("samples.count", f"must be at least 1, got {_shown(samples.get('count'))}")
    vary = samples.get("vary")
    if not isinstance(vary, dict) or not vary:
        p.bad("samples.vary", "must map parameters to distributions")
        return count, {}
    out = {}
    for name, dist in vary.items():
        key = f"samples.vary.{name}"
        if not isinstance(dist, dict) or len(dist) != 1 or next(iter(dist)) not in DISTRIBUTIONS:
            p.bad(key, f"must be one of {', '.join(f'{{{d}: [...]}}' for d in DISTRIBUTIONS)}, got {_shown(dist)}")
            continue
        kind, args = next(iter(dist.items()))
        problem = _distribution_problem(kind, args)
        if problem:
            p.bad(key, f"{problem}, got {_shown(args)}")
        elif _parameter(p, key, name):
            out[str(name)] = Distribution(kind, args)
    return count, out


def _distribution_problem(kind: str, args: Any) -> str | None:
    """What is wrong with a distribution's arguments, or None."""
    arity = DISTRIBUTIONS[kind]
    if not isinstance(args, list) or (arity is not None and len(args) != arity) or not args:
        return f"{kind} takes {'a list of values' if arity is None else f'[{arity} numbers]'}"
    if kind == "choice":
        return None
    if not all(_finite_number(a) for a in args):
        return f"{kind} takes finite numbers"
    low, high = args
    if kind == "integers" and not all(float(a).is_integer() and abs(a) < 2**63 for a in args):
        return "integers takes [low, high], whole numbers within 64 bits"
    if kind in ("integers", "uniform") and low > high:
        return f"{kind} takes [low, high] with low at most high"
    if kind == "normal" and high < 0:
        return "normal takes [mean, standard deviation], the deviation zero or more"
    return None


def _computed(p: Problems, computed: Any, spec: SweepSpec) -> dict[str, str]:
    from hrpsim.sweep.expressions import check

    if not isinstance(computed, dict):
        p.bad("set", "must map places of the project to expressions of the sweep's variables")
        return {}
    known = {*spec.grid, *spec.vary, *(name for run in spec.runs for name in run)}
    out = {}
    for place, text in computed.items():
        if not _parameter(p, f"set.{place}", place):
            continue
        try:
            missing = check(str(text)) - known
        except ConfigError as exc:
            p.bad(f"set.{place}", str(exc))
            continue
        if missing:
            p.bad(f"set.{place}", f"uses {', '.join(sorted(missing))}, which the grid, runs and samples do not set")
            continue
        out[str(place)] = str(text)
    return out


def _metrics(p: Problems, metrics: Any, folder: Path) -> dict[str, str]:
    if not isinstance(metrics, dict):
        p.bad("metrics", "must map column names to FILE.py:function")
        return {}
    out = {}
    for name, target in metrics.items():
        file, _, func = str(target).partition(":")
        if not file.endswith(".py") or not func.isidentifier():
            p.bad(f"metrics.{name}", f"must be FILE.py:function, got {_shown(target)}")
        elif not (folder / file).is_file():
            p.bad(f"metrics.{name}", f"no such file: {folder / file}")
        else:
            out[str(name)] = f"{(folder / file).resolve()}:{func}"
    return out


def _finite_number(value: Any) -> bool:
    from hrpsim.project import finite_number

    return not isinstance(value, bool) and isinstance(value, int | float) and finite_number(value)


SHOWN_CHARS = 80  # of a value quoted in a problem
LINE_CHARS = 400  # of one problem


def _shown(value: Any) -> str:
    """``repr(value)``, cut short: a problem quotes what it is about, not a whole section."""
    return _cut(repr(value), SHOWN_CHARS)


def _cut(text: str, limit: int = LINE_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."
