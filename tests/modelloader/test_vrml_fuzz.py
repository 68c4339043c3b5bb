"""Truncated and mutated copies of every VRML file of the corpus load into a Body or fail with
ModelError: never another exception, never a hang.

An Inline file is damaged in a copy of its folder and loaded through the model that includes
it, so that the damage reaches the loader the way real files do.
"""

from __future__ import annotations

import random
import re
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from modelloader_helpers import MODELS, vrml_corpus_files, vrml_facts

from hrpsim.bodyinfo import Body
from hrpsim.errors import ModelError
from hrpsim.modelloader import load_body

# Bytes that matter to the grammar, plus some that never belong in VRML.
NASTY = [
    b"{",
    b"}",
    b"[",
    b"]",
    b'"',
    b"#",
    b",",
    b".",
    b"-",
    b"0",
    b"9",
    b"e",
    b"nan",
    b"\x00",
    b"\xff",
    b"\n",
    b" ",
    b"DEF",
    b"USE",
    b"IS",
    b"PROTO",
    b"Joint",
    b"-1",
    b"1e999",
    b"\\",
]


def _including_model(rel: str) -> str:
    for main, facts in vrml_facts().items():
        if rel == main or rel in facts["inline_files"]:
            return main
    return rel


CASES = [
    (f.relative_to(MODELS).as_posix(), _including_model(f.relative_to(MODELS).as_posix())) for f in vrml_corpus_files()
]


def _mutate(data: bytes, rng: random.Random) -> bytes:
    out = bytearray(data)
    for _ in range(rng.randint(1, 6)):
        at = rng.randrange(len(out) + 1)
        action = rng.random()
        if action < 0.4:
            out[at : at + rng.randint(1, 4)] = rng.choice(NASTY)
        elif action < 0.7:
            out[at:at] = rng.choice(NASTY)
        else:
            del out[at : at + rng.randint(1, 16)]
    return bytes(out)


def _load_damaged(workdir: Path, rel: str, main: str, damaged: bytes) -> Body | None:
    (workdir / rel).write_bytes(damaged)
    try:
        return load_body(workdir / main)
    except ModelError as exc:
        assert str(exc)
        return None


@pytest.fixture
def corpus_copy(tmp_path: Path) -> Path:
    shutil.copytree(MODELS / "openhrp3" / "model", tmp_path / "openhrp3" / "model")
    return tmp_path


@pytest.mark.timeout(120)
@pytest.mark.parametrize(("rel", "main"), CASES, ids=[rel for rel, _ in CASES])
def test_truncations_and_mutations_give_a_body_or_model_error(corpus_copy: Path, rel: str, main: str) -> None:
    original = (MODELS / rel).read_bytes()
    rng = random.Random(rel)
    rounds = 3 if len(original) > 100_000 else 8
    outcomes = []
    for _ in range(rounds):
        outcomes.append(_load_damaged(corpus_copy, rel, main, original[: rng.randrange(len(original))]))
        outcomes.append(_load_damaged(corpus_copy, rel, main, _mutate(original, rng)))
    (corpus_copy / rel).write_bytes(original)
    assert isinstance(load_body(corpus_copy / main), Body)
    assert all(o is None or isinstance(o, Body) for o in outcomes)


@pytest.mark.timeout(120)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_hypothesis_mutations_of_sample1(corpus_copy: Path, data: st.DataObject) -> None:
    rel = "openhrp3/model/sample1.wrl"
    original = (MODELS / rel).read_bytes()
    cut = data.draw(st.integers(0, len(original)), label="cut")
    at = data.draw(st.integers(0, cut), label="at")
    insert = data.draw(st.sampled_from(NASTY) | st.binary(max_size=8), label="insert")
    damaged = original[:at] + insert + original[at + data.draw(st.integers(0, 8), label="drop") : cut]
    outcome = _load_damaged(corpus_copy, rel, rel, damaged)
    assert outcome is None or isinstance(outcome, Body)


def test_a_file_cut_short_names_where_it_ended_and_what_was_still_open(tmp_path: Path) -> None:
    original = (MODELS / "openhrp3/model/sample1.wrl").read_text(errors="replace")
    rng = random.Random("cut short")
    ended_early = 0
    for k in range(50):
        text = original[: rng.randrange(len(original) // 10, len(original) - 10)]
        path = tmp_path / f"cut{k}.wrl"
        path.write_text(text)
        with pytest.raises(ModelError) as caught:
            load_body(path)
        problem = caught.value.problems[0]
        if "ends early" not in problem:
            continue
        ended_early += 1
        last_line = text.count("\n") + 1
        assert (problem.file, problem.line) == (str(path), last_line), problem
        assert problem.column == len(text) - text.rfind("\n"), problem
        assert re.search(r"still open: '[{[]' of \S+", problem), problem
    assert ended_early >= 40
