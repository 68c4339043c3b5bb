"""Bad URDF input: each problem is a ModelError naming the file, line and element; all problems in
a file are reported together; mutated corpus files give a Body or a ModelError, nothing else."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from urdf_helpers import SR1, inertial, robot, write

from hrpsim.bodyinfo import Body
from hrpsim.errors import ModelError
from hrpsim.modelloader.urdf import load_urdf


def _problems(tmp_path: Path, text: str) -> tuple[Path, list[str]]:
    path = write(tmp_path, "bad.urdf", text)
    with pytest.raises(ModelError) as caught:
        load_urdf(path)
    return path, caught.value.problems


def _line_of(text: str, needle: str) -> int:
    return text[: text.index(needle)].count("\n") + 1


def test_malformed_xml_names_file_line_and_column(tmp_path: Path):
    path, problems = _problems(tmp_path, '<robot name="r">\n<link name="a">\n</robot>\n')
    assert len(problems) == 1
    assert re.search(rf"{re.escape(str(path))}:3:\d+: malformed XML", problems[0])


def test_a_missing_mesh_names_the_urdf_line_and_every_path_tried(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("ROS_PACKAGE_PATH", str(tmp_path / "nowhere"))
    text = robot(
        '<link name="a">\n<collision><geometry>\n<mesh filename="package://pkg/m.stl"/></geometry></collision></link>'
    )
    path, problems = _problems(tmp_path, text)
    (problem,) = problems
    element = "/robot(name='r')/link(name='a')/collision/geometry/mesh"
    assert problem.startswith(f"{path}:{_line_of(text, '<mesh')}: {element}")
    assert str(tmp_path / "nowhere" / "pkg" / "m.stl") in problem
    assert str(tmp_path / "pkg" / "m.stl") in problem  # looked upwards from the file too


def test_a_joint_naming_an_unknown_link(tmp_path: Path):
    text = robot(
        f'<link name="a">{inertial()}</link>\n'
        '<joint name="j" type="fixed"><parent link="a"/>\n<child link="ghost"/></joint>'
    )
    _path, problems = _problems(tmp_path, text)
    line = _line_of(text, '<child link="ghost"')
    assert any("child link 'ghost' is not defined" in p and f":{line}:" in p for p in problems)


def test_two_roots(tmp_path: Path):
    _path, problems = _problems(tmp_path, robot('<link name="a"/><link name="b"/>'))
    assert any("exactly one root link; found 'a', 'b'" in p for p in problems)


def test_a_cycle(tmp_path: Path):
    joints = "".join(
        f'<joint name="{p}{c}" type="fixed"><parent link="{p}"/><child link="{c}"/></joint>'
        for p, c in (("a", "b"), ("b", "c"), ("c", "b"))
    )
    _path, problems = _problems(tmp_path, robot('<link name="a"/><link name="b"/><link name="c"/>' + joints))
    assert any("already has parent joint" in p for p in problems)


def test_a_pure_cycle_without_root(tmp_path: Path):
    joints = (
        '<joint name="ab" type="fixed"><parent link="a"/><child link="b"/></joint>'
        '<joint name="ba" type="fixed"><parent link="b"/><child link="a"/></joint>'
    )
    _path, problems = _problems(tmp_path, robot('<link name="a"/><link name="b"/>' + joints))
    assert any("a cycle" in p for p in problems)


def test_negative_mass(tmp_path: Path):
    text = robot(f'<link name="a">\n{inertial(-2.0)}</link>')
    path, problems = _problems(tmp_path, text)
    line = _line_of(text, "<inertial>")
    assert problems == [f"{path}:{line}: /robot(name='r')/link(name='a')/inertial/mass: mass -2.0 is negative"]


def test_planar_joints_are_refused_clearly(tmp_path: Path):
    text = robot(
        '<link name="a"/><link name="b"/><joint name="p" type="planar"><parent link="a"/><child link="b"/></joint>'
    )
    _path, problems = _problems(tmp_path, text)
    assert any("planar joints are not supported" in p for p in problems)


def test_every_problem_is_collected_with_its_own_line(tmp_path: Path):
    text = robot(
        '<link name="a">\n'
        '<inertial><mass value="-1"/><inertia ixx="1" iyy="1" izz="1"/></inertial></link>\n'
        '<link name="b"><visual><origin xyz="0 nan 0"/><geometry><box size="1 1"/></geometry></visual></link>\n'
        '<joint name="j" type="revolute"><parent link="a"/><child link="b"/>\n'
        '<limit lower="one" upper="1"/><mimic joint="nobody"/></joint>\n'
        '<joint name="k" type="screw"><parent link="a"/><child link="b"/></joint>'
    )
    path, problems = _problems(tmp_path, text)
    lines = {int(p.split(":")[1]) for p in problems}
    assert len(problems) >= 5
    expected_lines = {_line_of(text, n) for n in ('<mass value="-1"', "nan", '<limit lower="one"', 'name="k"')}
    assert expected_lines <= lines
    joined = "\n".join(problems)
    for expected in (
        "is negative",
        "non-finite",
        "has 2 numbers, expected 3",
        "lower 'one' is not a list of numbers",
        "unknown joint type 'screw'",
    ):
        assert expected in joined
    assert all(p.startswith(str(path)) for p in problems)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_mutated_sr1_gives_a_body_or_a_model_error(tmp_path: Path, data):
    original = SR1.read_bytes()
    mutated = _mutate(original, data)
    path = tmp_path / "mutated.urdf"
    path.write_bytes(mutated)
    try:
        result = load_urdf(path)
    except ModelError as exc:
        assert exc.problems and all(str(path) in p for p in exc.problems)
    else:
        assert isinstance(result, Body)


def _mutate(original: bytes, data) -> bytes:
    kind = data.draw(st.sampled_from(["delete", "number", "duplicate", "truncate", "byte"]))
    size = len(original)
    at = data.draw(st.integers(0, size - 1))
    if kind == "delete":
        return original[:at] + original[at + data.draw(st.integers(1, 200)) :]
    if kind == "truncate":
        return original[:at]
    if kind == "byte":
        return original[:at] + bytes([data.draw(st.integers(0, 255))]) + original[at + 1 :]
    if kind == "duplicate":
        end = min(size, at + data.draw(st.integers(1, 400)))
        return original[:end] + original[at:end] + original[end:]
    numbers = list(re.finditer(rb"-?\d+\.?\d*", original))
    match = numbers[data.draw(st.integers(0, len(numbers) - 1))]
    token = data.draw(st.sampled_from([b"nan", b"-inf", b"-1", b"0", b"1e400", b"x", b""]))
    return original[: match.start()] + token + original[match.end() :]


def test_mimic_joints_in_a_circle(tmp_path: Path):
    links = "".join(f'<link name="{n}"/>' for n in "abc")
    joints = (
        '<joint name="jb" type="continuous"><parent link="a"/><child link="b"/><mimic joint="jc"/></joint>'
        '<joint name="jc" type="continuous"><parent link="b"/><child link="c"/><mimic joint="jb"/></joint>'
    )
    _path, problems = _problems(tmp_path, robot(links + joints))
    assert len(problems) == 2 and all("mimic each other in a circle" in p for p in problems)
