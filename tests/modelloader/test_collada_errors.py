"""Bad COLLADA input: ModelError naming the file (and the member of a .zae), line and element;
all problems collected; mutated corpus documents give a Body or a ModelError, nothing else."""

from __future__ import annotations

import re
import zipfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_collada_loader import MINIMAL
from urdf_helpers import PUMA

from hrpsim.bodyinfo import Body
from hrpsim.errors import ModelError
from hrpsim.modelloader.collada import load_collada


def _problems(path: Path) -> list[str]:
    with pytest.raises(ModelError) as caught:
        load_collada(path)
    return caught.value.problems


def test_malformed_document(tmp_path: Path):
    path = tmp_path / "bad.dae"
    path.write_text('<?xml version="1.0"?>\n<COLLADA>\n<asset>\n</COLLADA>\n')
    (problem,) = _problems(path)
    assert re.match(rf"{re.escape(str(path))}:4:\d+: malformed XML", problem)


def test_a_zae_that_is_not_a_zip(tmp_path: Path):
    path = tmp_path / "bad.zae"
    path.write_bytes(b"PK\x03\x04 this is not really a zip")
    with pytest.raises(ModelError, match="cannot read COLLADA zip"):
        load_collada(path)


def test_a_manifest_naming_a_missing_member(tmp_path: Path):
    path = tmp_path / "m.zae"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("manifest.xml", "<dae_root>./elsewhere.dae</dae_root>")
        archive.writestr("robot.dae", MINIMAL)
    with pytest.raises(ModelError, match=r"dae_root 'elsewhere.dae' is not in the archive"):
        load_collada(path)


def test_problems_inside_a_zae_name_the_member_and_line(tmp_path: Path):
    text = MINIMAL.replace("<mass>3</mass>", "<mass>-3</mass>").replace('joint="k/s"', 'joint="k/nothing"')
    path = tmp_path / "r.zae"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("manifest.xml", "<dae_root>./robot.dae</dae_root>")
        archive.writestr("robot.dae", text)
    problems = _problems(path)
    assert any(f"{path}!robot.dae:" in p and "unknown joint 'k/nothing'" in p for p in problems)


def test_every_problem_is_collected(tmp_path: Path):
    text = (
        MINIMAL.replace("<mass>3</mass>", "<mass>0</mass>")
        .replace("<inertia>1 2 3</inertia>", "<inertia>1 2</inertia>")
        .replace("<max>200</max>", "<max>-200</max>")
    )
    path = tmp_path / "r.dae"
    path.write_text(text)
    problems = _problems(path)
    joined = "\n".join(problems)
    for expected in ("mass 0.0 is not positive", "has 2 numbers, expected 3", "is above max"):
        assert expected in joined
    assert all(re.match(rf"{re.escape(str(path))}:\d+: /COLLADA", p) for p in problems)


def test_a_formula_that_is_not_linear(tmp_path: Path):
    formula = (
        '<formula sid="f"><target><param>k/s</param></target><technique_common><math>'
        "<apply><times/><csymbol>k/s</csymbol><csymbol>k/s</csymbol></apply></math></technique_common></formula>"
    )
    path = tmp_path / "f.dae"
    end = "</technique_common>\n </kinematics_model>"
    path.write_text(MINIMAL.replace(end, formula + end))
    assert any("not linear in exactly one joint" in p for p in _problems(path))


PUMA_DAE = zipfile.ZipFile(PUMA).read("pumaarm.dae")
# the kinematic and physics part of the document: mutations there matter most
KINEMATICS_START = PUMA_DAE.index(b"<library_kinematics_models")


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_mutated_puma_gives_a_body_or_a_model_error(tmp_path: Path, data):
    original = PUMA_DAE
    kind = data.draw(st.sampled_from(["delete", "number", "byte", "truncate"]))
    at = data.draw(st.integers(KINEMATICS_START, len(original) - 1))
    if kind == "delete":
        mutated = original[:at] + original[at + data.draw(st.integers(1, 300)) :]
    elif kind == "truncate":
        mutated = original[:at]
    elif kind == "byte":
        mutated = original[:at] + bytes([data.draw(st.integers(0, 255))]) + original[at + 1 :]
    else:
        numbers = list(re.finditer(rb"-?\d+\.?\d*", original[KINEMATICS_START:]))
        match = numbers[data.draw(st.integers(0, len(numbers) - 1))]
        token = data.draw(st.sampled_from([b"nan", b"-1", b"0", b"1e400", b"x", b""]))
        start, end = KINEMATICS_START + match.start(), KINEMATICS_START + match.end()
        mutated = original[:start] + token + original[end:]
    path = tmp_path / "mutated.dae"
    path.write_bytes(mutated)
    try:
        result = load_collada(path)
    except ModelError as exc:
        assert exc.problems and all(str(path) in p for p in exc.problems)
    else:
        assert isinstance(result, Body)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_mutated_extension_document_gives_a_body_or_a_model_error(tmp_path: Path, data):
    """Every OpenRAVE extension read from a damaged document: numbers, references, elements."""
    from test_collada_extensions import DOC

    original = DOC.encode()
    references = list(re.finditer(rb'(?:joint|link|url|source|target|axis|body)="[^"]*"|>[^<>]+<', original))
    match = references[data.draw(st.integers(0, len(references) - 1))]
    replacement = data.draw(st.sampled_from([b'x="#nowhere"', b">x<", b">nan<", b">-1 0<", b'link="k/l9"', b""]))
    mutated = original[: match.start()] + replacement + original[match.end() :]
    path = tmp_path / "mutated.dae"
    path.write_bytes(mutated)
    try:
        result = load_collada(path)
    except ModelError as exc:
        assert exc.problems and all(str(path) in p for p in exc.problems)
    else:
        assert isinstance(result, Body)
