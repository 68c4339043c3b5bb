"""Bad Choreonoid body files: every problem is reported at once, each with its file and line and
the element at fault."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from hrpsim.errors import ModelError
from hrpsim.modelloader import load_body


def write(tmp_path: Path, text: str, name: str = "bad.body") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text).lstrip())
    return path


MANY_PROBLEMS = """
format: ChoreonoidBody
formatVersion: 1.0
links:
  - name: BASE
    jointType: free
  - name: J1
    parent: BASE
    jointType: hinge
    jointAxis: W
  - name: J2
    parent: NOWHERE
    mass: heavy
  - name: J3
    parent: BASE
    elements:
      - { type: Gizmo }
      - { type: Resource, uri: missing.stl }
      - { type: Resource, uri: part.stl, metadata: { length_unit: millimeter } }
      - type: Collision
        elements:
          - { type: Visual }
"""


def problems_of(path: Path) -> list[str]:
    with pytest.raises(ModelError) as caught:
        load_body(path)
    return caught.value.problems


def test_every_problem_is_reported_with_its_file_line_and_element(tmp_path: Path) -> None:
    path = write(tmp_path, MANY_PROBLEMS)
    problems = problems_of(path)
    expected = [
        (8, "jointType 'hinge'"),
        (9, "jointAxis 'W'"),
        (12, "mass must be a finite number"),
        (16, "element Gizmo"),
        (17, "missing.stl"),
        (18, "metadata (length unit, upper axis) is not read"),
        (21, "a Visual node inside a Collision node"),
        (11, "parent link 'NOWHERE' is not defined"),
    ]
    assert len(problems) == len(expected), problems
    for (line, words), problem in zip(expected, problems, strict=True):
        assert problem.file == str(path)
        assert problem.line == line, problem
        assert words in problem
    assert "J1" in problems[0] and "J2" in problems[2]


def test_yaml_syntax_error_names_line_and_column(tmp_path: Path) -> None:
    path = write(tmp_path, "format: ChoreonoidBody\nformatVersion: 1.0\nlinks:\n  - name: [ A\n    mass: 1\n")
    problems = problems_of(path)
    assert len(problems) == 1
    assert problems[0].file == str(path) and problems[0].line == 5 and problems[0].column
    assert "YAML syntax error" in problems[0]


@pytest.mark.parametrize(
    ("header", "words"),
    [
        ("format: OpenHRPBody\nformatVersion: 1.0\n", "expected ChoreonoidBody"),
        ("format: ChoreonoidBody\n", "format version (1.0 or 2.0) is missing"),
        ("format: ChoreonoidBody\nformatVersion: 3.0\n", "newer than 2.0"),
        ("format: ChoreonoidBody\nformat_version: 2.0\nangle_unit: radian\n", "radian is not allowed in format 2.0"),
        ("format: ChoreonoidBody\nformatVersion: 1.0\nrootLink: NONE\n", "link 'NONE' is not defined"),
    ],
)
def test_header_problems(tmp_path: Path, header: str, words: str) -> None:
    path = write(tmp_path, header + "links:\n  - { name: A, jointType: free }\n")
    problems = problems_of(path)
    assert any(words in p and p.file == str(path) and p.line for p in problems), problems


def test_a_problem_in_an_included_file_names_that_file(tmp_path: Path) -> None:
    write(
        tmp_path,
        "format: ChoreonoidBody\nformatVersion: 1.0\nlinks:\n  - { name: A, jointType: rolling }\n",
        "sub.body",
    )
    path = write(tmp_path, "format: ChoreonoidBody\nformatVersion: 1.0\nlinks:\n  - { type: SubBody, uri: sub.body }\n")
    problems = problems_of(path)
    assert [(p.file, p.line) for p in problems] == [(str(tmp_path / "sub.body"), 4)]
    assert "jointType 'rolling'" in problems[0]


def test_a_sub_body_including_itself_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path, "format: ChoreonoidBody\nformatVersion: 1.0\nlinks:\n  - { type: SubBody, uri: bad.body }\n")
    problems = problems_of(path)
    assert len(problems) == 1 and "includes itself" in problems[0] and problems[0].line == 4
