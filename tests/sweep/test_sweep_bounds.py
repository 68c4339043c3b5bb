"""What a sweep file can make the sweep's own process do is bounded: expressions, values and the number
of runs, and every problem comes back at once, naming the file and the key, as ``hrpsim sweep``
prints it (a real process, so a hang or a traceback shows)."""

from __future__ import annotations

import subprocess
import textwrap
from pathlib import Path

from sweep_helpers import SLOPE, sweep

from hrpsim.sweep.spec import MAX_RUNS, MAX_VALUES

BOUND_S = 120  # each refusal below comes long before this; a hang or a runaway grows past it


def _refused(tmp_path: Path, text: str) -> str:
    """``hrpsim sweep`` on a sweep file of ``text``: it must refuse the file (status 2) without a
    traceback; what it printed on stderr."""
    path = tmp_path / "sweep.yaml"
    path.write_text(textwrap.dedent(text))
    try:
        done = sweep(str(path), "--out", str(tmp_path / "out.csv"), cwd=tmp_path, timeout=BOUND_S)
    except subprocess.TimeoutExpired:
        raise AssertionError(f"hrpsim sweep still ran after {BOUND_S} s on {text!r}") from None
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    assert str(path) in done.stderr
    assert not (tmp_path / "out.csv").exists(), "no run started"
    return done.stderr


def test_every_problem_of_the_set_expressions_is_reported_at_once(tmp_path: Path) -> None:
    err = _refused(
        tmp_path,
        f"""
        project: {SLOPE}
        grid:
          size: [0, 1, 2]
        runs:
          - {{angle: 1}}
          - {{other: 2}}
        set:
          world.timestep: "9**9**9"
          world.gravity: "size ** (10**10)"
          collisions[0].friction: "1 / size"
          collisions[0].restitution: "exp(size * 1000)"
          world.end_time: "angle * 2"
          world.ode.erp: "sqrt(0 - size - 1)"
          world.ode.cfm: "[size] * 1000000000"
          world.ode.iterations: "{"-" * 500}1"
          world.ode.: "size"
        """,
    )
    for words in (
        "set.world.timestep: 9 ** 387420489 is larger than 1024-bit whole numbers (runs 0, 1, 2, 3, 4 and 1 more)",
        "set.world.gravity: 2 ** 10000000000 is larger than 1024-bit whole numbers (runs 4, 5)",
        "set.collisions[0].friction: cannot compute '1 / size': division by zero (runs 0, 1)",
        "set.collisions[0].restitution: cannot compute 'exp(size * 1000)': the result is past a float's range",
        "set.world.end_time: uses 'angle', which is not set (runs 1, 3, 5)",
        "set.world.ode.erp: cannot compute 'sqrt(0 - size - 1)': outside the function's domain (runs 0, 1, 2",
        "set.world.ode.cfm: a list repeated 1000000000 times is longer than 100 items",
        "set.world.ode.iterations: nested more than 32 levels deep",
        "set.world.ode.: parameter 'world.ode.': not a place in the project file",
    ):
        assert words in err, f"{words!r} not in:\n{err}"
    assert "9 problem(s)" in err


def test_a_sweep_of_too_many_runs_is_refused_before_any_is_planned(tmp_path: Path) -> None:
    err = _refused(
        tmp_path,
        f"""
        project: {SLOPE}
        grid:
          collisions[0].friction: [0.1, 0.2]
        samples:
          count: 1000000000
          vary:
            models[box].position[2]: {{uniform: [0.09, 0.1]}}
        """,
    )
    assert f"grid, runs, samples: make 2000000000 runs, more than the bound of {MAX_RUNS}" in err
    assert "max_runs" in err


def test_max_runs_moves_the_bound(tmp_path: Path) -> None:
    from hrpsim.sweep.plan import plan
    from hrpsim.sweep.spec import load_sweep

    path = tmp_path / "sweep.yaml"
    for bound, planned in ((3, None), (4, 4)):
        path.write_text(f"project: {SLOPE}\nmax_runs: {bound}\ngrid:\n  collisions[0].friction: [0.1, 0.2, 0.3, 0.4]\n")
        if planned is None:
            err = _refused(tmp_path, path.read_text())
            assert "make 4 runs, more than the bound of 3" in err
        else:
            assert len(plan(load_sweep(path))) == planned


def test_yaml_that_expands_or_nests_without_end_is_refused(tmp_path: Path) -> None:
    bomb = [f"project: {SLOPE}", "a0: &a0 [1, 2]"]
    bomb += [f"a{i}: &a{i} [*a{i - 1}, *a{i - 1}]" for i in range(1, 30)]  # 2**30 values from 1 KB
    err = _refused(tmp_path, "\n".join([*bomb, "grid: {x: [*a29]}", ""]))
    assert f"more than {MAX_VALUES} values once its YAML aliases" in err
    err = _refused(tmp_path, f"project: {SLOPE}\ngrid: {{x: {'[' * 5000}{']' * 5000}}}\n")
    assert "nested too deeply" in err


def test_a_base_project_that_is_not_a_project_is_a_problem_of_the_project_key(tmp_path: Path) -> None:
    (tmp_path / "list.yaml").write_text("- 1\n- 2\n")
    err = _refused(tmp_path, "project: list.yaml\ngrid: {'collisions[0].friction': [0.1]}\nseed: 1.5\n")
    assert "project: is not a project hrpsim can run" in err and "must be a mapping" in err
    assert "seed: must be a whole number" in err  # and the rest of the file is still checked
    (tmp_path / "folder.yaml").mkdir()
    err = _refused(tmp_path, "project: folder.yaml\n")
    assert "project: no such file" in err


def test_distributions_and_parameters_are_checked_before_any_run(tmp_path: Path) -> None:
    err = _refused(
        tmp_path,
        f"""
        project: {SLOPE}
        timeout: 1.0e+300
        samples:
          count: 2
          vary:
            a: {{integers: [5, 1]}}
            b: {{uniform: [0, .inf]}}
            c: {{integers: [0.5, 2]}}
            world..engine: {{uniform: [0, 1]}}
        """,
    )
    for words in (
        "timeout: at most 604800 s",
        "samples.vary.a: integers takes [low, high] with low at most high",
        "samples.vary.b: uniform takes finite numbers",
        "samples.vary.c: integers takes [low, high], whole numbers",
        "samples.vary.world..engine: parameter 'world..engine': cannot read",
    ):
        assert words in err, f"{words!r} not in:\n{err}"
