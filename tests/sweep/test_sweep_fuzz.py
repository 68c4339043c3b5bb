"""Generated sweep files, sensible and hostile (huge numbers and counts, powers, deep expressions,
YAML alias bombs and deep nesting, damaged text), read and planned as ``hrpsim sweep`` does: each
gives runs or a ConfigError naming the file; never another exception, never memory past the bound
docs/sweeps.md gives for reading and planning a sweep file (the suite's timeout bounds a hang)."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sweep_helpers import SLOPE

from hrpsim.errors import ConfigError
from hrpsim.sweep.plan import load_plan

PLAN_MEMORY_BOUND = 200 * 1024 * 1024  # docs/sweeps.md: reading and planning a sweep file

NUMBERS = st.one_of(
    st.integers(min_value=-(10**30), max_value=10**30),
    st.sampled_from([0, 1, -1, 2, 10**400, 9, 1e308, -1e308, 1e-320]),
    st.floats(allow_nan=True, allow_infinity=True),
)
VALUES = st.recursive(
    st.one_of(NUMBERS, st.text(max_size=8), st.booleans(), st.none()),
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=6), inner, max_size=3)),
    max_leaves=12,
)
VARIABLES = ["size", "angle", "n"]
PLACES = ["collisions[0].friction", "world.timestep", "models[box].position[2]", "disturbances[0].force", "a..b"]
NAMES = st.sampled_from(VARIABLES + PLACES + ["world", "models[nobody].x", "x[", "1abc"])


def _expressions() -> st.SearchStrategy[str]:
    leaves = st.one_of(
        st.sampled_from([*VARIABLES, "pi", "missing", "1e308", "9", "0", "10**10", "'text'", "[]"]),
        NUMBERS.map(repr),
    )

    def combine(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
        binary = st.tuples(inner, st.sampled_from(["+", "-", "*", "/", "**", "%"]), inner)
        call = st.tuples(st.sampled_from(["sqrt", "exp", "log", "round", "min", "hypot", "cos", "open"]), inner)
        return st.one_of(
            binary.map(lambda t: f"({t[0]} {t[1]} {t[2]})"),
            call.map(lambda t: f"{t[0]}({t[1]})"),
            st.lists(inner, max_size=4).map(lambda items: f"[{', '.join(items)}]"),
            inner.map(lambda e: f"-{e}"),
            inner.map(lambda e: f"[{e}] * 10**9"),
        )

    built = st.recursive(leaves, combine, max_leaves=10)
    return st.one_of(built, st.integers(1, 3000).map(lambda n: "-" * n + "1"), st.text(max_size=20))


def _sweeps() -> st.SearchStrategy[dict]:
    grid = st.dictionaries(NAMES, st.one_of(st.lists(VALUES, max_size=4), VALUES), max_size=3)
    runs = st.one_of(st.lists(st.dictionaries(NAMES, VALUES, max_size=2), max_size=3), VALUES)
    kinds = st.sampled_from(["uniform", "normal", "integers", "choice"])
    distribution = st.one_of(st.tuples(kinds, st.lists(NUMBERS, max_size=3)).map(lambda t: {t[0]: t[1]}), VALUES)
    samples = st.fixed_dictionaries(
        {
            "count": st.one_of(st.integers(-2, 50), st.sampled_from([10**9, 10**12])),
            "vary": st.dictionaries(NAMES, distribution, max_size=2),
        }
    )
    return st.fixed_dictionaries(
        {"project": st.sampled_from([str(SLOPE), "nowhere.yaml", ".", "sweep.yaml", str(SLOPE.parent)])},
        optional={
            "seed": VALUES,
            "until": VALUES,
            "timeout": VALUES,
            "grid": grid,
            "runs": runs,
            "samples": samples,
            "set": st.dictionaries(NAMES, _expressions(), max_size=3),
            "max_runs": VALUES,
            "colour": VALUES,
        },
    )


def _hostile_texts() -> st.SearchStrategy[str]:
    def bomb(depth: int) -> str:
        lines = [f"project: {SLOPE}", "a0: &a0 [1, 2]"]
        lines += [f"a{i}: &a{i} [*a{i - 1}, *a{i - 1}]" for i in range(1, depth)]
        return "\n".join([*lines, f"grid: {{size: [*a{depth - 1}]}}", 'set: {world.timestep: "size"}', ""])

    def nested(depth: int) -> str:
        return f"project: {SLOPE}\ngrid: {{size: [{'[' * depth}1{']' * depth}]}}\n"

    return st.one_of(st.integers(2, 40).map(bomb), st.integers(1, 700).map(nested))  # 700: past YAML's recursion


def _damaged(text: str, data: st.DataObject) -> str:
    """``text`` with a few of YAML's and Python's special characters put in or taken out."""
    for _ in range(data.draw(st.integers(0, 4))):
        at = data.draw(st.integers(0, len(text)))
        token = data.draw(
            st.sampled_from(["{", "}", "[", "]", ":", "- ", "&x ", "*x", "!!python/object ", "\t", "\x00", "'", "\n  "])
        )
        text = text[:at] + token + text[at + data.draw(st.integers(0, 3)) :]
    return text


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("sweep-fuzz")


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(sweep=_sweeps(), hostile=st.one_of(st.none(), st.none(), st.none(), _hostile_texts()), data=st.data())
def test_a_generated_sweep_file_plans_or_is_an_error_naming_the_file(
    folder: Path, sweep: dict, hostile: str | None, data: st.DataObject
) -> None:
    text = hostile if hostile is not None else yaml.safe_dump(sweep, allow_unicode=True)
    if data.draw(st.booleans()):
        text = _damaged(text, data)
    path = folder / "sweep.yaml"
    path.write_text(text, errors="surrogatepass")
    tracemalloc.start()
    try:
        spec, runs = load_plan(path)
    except ConfigError as exc:
        assert str(path) in str(exc), str(exc)[:500]
    else:
        assert len(runs) <= spec.max_runs
    finally:
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    assert peak < PLAN_MEMORY_BOUND, f"{peak / 2**20:.0f} MB to read and plan {text[:300]!r}"
