"""Semantic problems of OpenHRP models: all collected, each with its location, into one
ModelError; a lenient load goes on with warnings."""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest
from modelloader_helpers import HRPSIM, MODELS, REPO, write_model

from hrpsim.errors import ModelError
from hrpsim.modelloader import load_body
from hrpsim.modelloader.openhrp_mass import MassPart, combine

BROKEN = """
DEF R Humanoid { humanoidBody [ DEF ROOT Joint { jointType "free" children [
  DEF LOST Segment { mass -2 momentsOfInertia [1 0 0 0 -1 0 0 0 1] }
  DEF A Joint { jointType "rotate" jointId 0 }
  DEF B Joint { jointType "spin" jointId 0 }
  DEF C Joint { jointType "slide" jointId 3 }
] } ] }
DEF TRAVELLER ForceSensor { sensorId 0 }
"""

SENSOR_PROTO = """
PROTO ForceSensor [ exposedField SFVec3f maxForce -1 -1 -1 exposedField SFVec3f maxTorque -1 -1 -1
  exposedField SFVec3f translation 0 0 0 exposedField SFRotation rotation 0 0 1 0
  exposedField SFInt32 sensorId -1 ] { Transform { } }
"""


def test_every_problem_is_reported_at_once_with_its_location(tmp_path: Path) -> None:
    path = write_model(tmp_path, SENSOR_PROTO + BROKEN)
    with pytest.raises(ModelError) as caught:
        load_body(path)
    problems = caught.value.problems
    text = "\n".join(problems)
    lines = path.read_text().splitlines()

    def line_of(snippet: str) -> int:
        return next(i for i, line in enumerate(lines, 1) if snippet in line)

    assert f"{path}:{line_of('mass -2')}:" in text and "mass -2.0 is not a non-negative number" in text
    assert "not positive semi-definite" in text
    assert f"{path}:{line_of('spin')}:" in text and "unknown jointType 'spin'" in text
    assert f"{path}:{line_of('DEF B Joint')}:" in text and "jointId 0 repeats that of 'A'" in text
    assert "missing 1, 2" in text
    assert f"{path}:{line_of('TRAVELLER')}:" in text and "'TRAVELLER' (ForceSensor) is outside any Joint" in text
    assert len(problems) == 6
    assert str(path) in str(caught.value)


def test_lenient_load_keeps_going_with_warnings(tmp_path: Path) -> None:
    path = write_model(tmp_path, SENSOR_PROTO + BROKEN)
    body = load_body(path, lenient=True)
    assert [lk.name for lk in body.links] == ["ROOT", "A", "B", "C"]
    assert body.links[2].joint_type == "free"  # unknown jointType -> free, as OpenHRP does
    assert body.root.mass == 0.0
    assert np.linalg.eigvalsh(body.root.inertia).min() >= 0.0
    assert len(body.metadata["warnings"]) == 6


def test_missing_inline_names_the_missing_file_and_the_includer(tmp_path: Path) -> None:
    path = write_model(
        tmp_path,
        """
DEF R Humanoid { humanoidBody DEF ROOT Joint { jointType "fixed" children [
  Segment { children [ Inline { url "parts/gone.wrl" } ] } ] } }
""",
    )
    with pytest.raises(ModelError) as caught:
        load_body(path)
    message = str(caught.value)
    assert str(tmp_path / "parts" / "gone.wrl") in message
    assert f"referred to from {path}" in message
    line = next(i for i, text in enumerate(path.read_text().splitlines(), 1) if "gone.wrl" in text)
    assert message.startswith(f"{path}:{line}:")
    assert load_body(path, lenient=True).root.shapes == []


def test_syntax_error_in_an_inline_names_the_inlined_file(tmp_path: Path) -> None:
    (tmp_path / "part.wrl").write_text("Shape { geometry Box { size 1 1 1 }\n")
    path = write_model(
        tmp_path,
        """
DEF R Humanoid { humanoidBody DEF ROOT Joint { jointType "fixed" children Inline { url "part.wrl" } } }
""",
    )
    with pytest.raises(
        ModelError,
        match=rf"{tmp_path / 'part.wrl'}:2:1: syntax error: the file ends early; "
        r"still open: '\{' of Shape at 1:7",
    ):
        load_body(path)


def test_inline_that_includes_itself_is_a_problem_not_a_hang(tmp_path: Path) -> None:
    (tmp_path / "loop.wrl").write_text('Group { children Inline { url "loop.wrl" } }')
    path = write_model(
        tmp_path,
        """
DEF R Humanoid { humanoidBody DEF ROOT Joint { jointType "fixed" children Inline { url "loop.wrl" } } }
""",
    )
    with pytest.raises(ModelError, match="includes itself"):
        load_body(path)


def test_use_of_an_unknown_name_and_a_file_without_humanoid(tmp_path: Path) -> None:
    path = write_model(tmp_path, "Transform { children USE NOWHERE }\nShape { geometry Box {} }")
    with pytest.raises(ModelError) as caught:
        load_body(path)
    text = "\n".join(caught.value.problems)
    assert "USE NOWHERE: no node of that name" in text
    assert "no Humanoid node" in text
    scenery = load_body(path, lenient=True)
    assert scenery.static and scenery.root.name == "m" and scenery.root.shapes[0].kind == "box"


def test_unknown_suffix_names_the_file_and_the_known_formats(tmp_path: Path) -> None:
    with pytest.raises(ModelError, match=r"model\.obj: unknown model format '\.obj'; known: \.wrl"):
        load_body(tmp_path / "model.obj")


def test_model_info_reports_problems_on_stderr_with_status_1(tmp_path: Path) -> None:
    path = write_model(tmp_path, SENSOR_PROTO + BROKEN)
    done = subprocess.run([*HRPSIM, "model", "info", str(path)], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and "unknown jointType 'spin'" in done.stderr and done.stdout == ""
    lenient = subprocess.run(
        [*HRPSIM, "model", "info", "--lenient", str(path)], cwd=REPO, capture_output=True, text=True, timeout=60
    )
    assert lenient.returncode == 0 and "warning:" in lenient.stdout and "ROOT  free" in lenient.stdout


def test_model_info_tree_shows_links_types_ids_and_sensors() -> None:
    done = subprocess.run(
        [*HRPSIM, "model", "info", str(MODELS / "openhrp3/model/sample1.wrl")],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0
    out = done.stdout.splitlines()
    assert out[0].startswith("SampleRobot  (vrml, 30 links, 29 dof, 130.8 kg)")
    assert "  WAIST  free  27 kg" in out[1]
    assert any(line.strip().startswith("RLEG_KNEE  rotate id 3 axis 0 1 0  7 kg") for line in out)
    assert "  rhsensor  force id 3 on RARM_WRIST_P" in out


def test_parallel_axis_rule_merges_segments() -> None:
    # Two point-like 1 kg masses 1 m either side of the origin: 2 kg at the origin with
    # inertia 2 about the two axes across the line joining them.
    merged = combine(
        [MassPart(1.0, np.array([1.0, 0, 0]), np.zeros((3, 3))), MassPart(1.0, np.array([-1.0, 0, 0]), np.eye(3) * 0.1)]
    )
    assert merged.mass == 2.0 and merged.com.tolist() == [0, 0, 0]
    assert np.diag(merged.inertia) == pytest.approx([0.1, 2.1, 2.1])


def test_segments_in_transforms_merge_into_the_link_frame(tmp_path: Path) -> None:
    path = write_model(
        tmp_path,
        """
DEF R Humanoid { humanoidBody DEF ROOT Joint { jointType "free" children [
  Segment { mass 1 centerOfMass 0 0 0 momentsOfInertia [1 0 0 0 2 0 0 0 3] }
  Transform { translation 0 0 2 rotation 0 0 1 1.5707963267948966 children
    Segment { mass 3 centerOfMass 1 0 0 momentsOfInertia [1 0 0 0 2 0 0 0 3] } } ] } }
""",
    )
    root = load_body(path).root
    assert root.mass == 4.0
    assert root.com == pytest.approx([0.0, 0.75, 1.5])
    # The turned segment's inertia swaps its x and y; then both move to the common centre.
    d1, d2 = np.array([0, -0.75, -1.5]), np.array([0, 0.25, 0.5])
    expected = np.diag([1.0, 2.0, 3.0]) + np.diag([2.0, 1.0, 3.0])
    expected += 1 * (d1 @ d1 * np.eye(3) - np.outer(d1, d1)) + 3 * (d2 @ d2 * np.eye(3) - np.outer(d2, d2))
    assert np.allclose(root.inertia, expected)


def test_house_models_share_a_def_name_but_load_apart() -> None:
    names = {load_body(MODELS / f"openhrp3/model/house/{n}.main.wrl").name for n in ("house", "floor", "table")}
    assert names == {"longfloor"}


def test_bad_geometry_is_reported_where_it_is_written(tmp_path: Path) -> None:
    path = write_model(
        tmp_path,
        """
DEF R Humanoid { humanoidBody DEF ROOT Joint { jointType "fixed" children [ Segment { children [
  Shape { geometry Box { size -1 1 1 } }
  Shape { geometry Sphere { radius nan } }
  Shape { geometry IndexedFaceSet { coord Coordinate { point [0 0 0, 1 0 0, 0 1 0] } coordIndex [0 1 7 -1] } }
  Shape { geometry Box { size 1 1 1 } }
] } ] } }
""",
    )
    with pytest.raises(ModelError) as caught:
        load_body(path)
    problems = caught.value.problems
    assert len(problems) == 3
    assert "Box: negative size" in problems[0] and "Sphere: size or pose is not finite" in problems[1]
    assert "coordIndex refers to vertex 7 but there are only 3" in problems[2]
    lines = path.read_text().splitlines()
    assert all(p.startswith(f"{path}:") for p in problems)
    assert problems[0].split(":")[1] == str(next(i for i, t in enumerate(lines, 1) if "size -1" in t))
    (kept,) = load_body(path, lenient=True).root.shapes
    assert kept.size.tolist() == [1, 1, 1]


def test_use_bombs_and_huge_sweeps_are_refused_not_expanded(tmp_path: Path) -> None:
    levels = ["DEF L0 Group { }"]
    levels += [
        f"DEF L{i} Group {{ children [ USE L{i - 1} USE L{i - 1} USE L{i - 1} USE L{i - 1} ] }}" for i in range(1, 12)
    ]  # 4^11 groups from a few hundred bytes
    path = write_model(
        tmp_path,
        f"""
DEF R Humanoid {{ humanoidBody DEF ROOT Joint {{ jointType "fixed" children [ Segment {{ children [
  {" ".join(levels)} ] }} ] }} }}
""",
    )
    with pytest.raises(ModelError, match=r"expands .* to more than 100000 nodes"):
        load_body(path, lenient=True)
    ring = ", ".join(f"{i} 0" for i in range(3000))
    spine = ", ".join(f"0 {i} 0" for i in range(3000))
    sweep = write_model(
        tmp_path,
        f"""
DEF R Humanoid {{ humanoidBody DEF ROOT Joint {{ jointType "fixed" children [ Segment {{ children [
  Shape {{ geometry Extrusion {{ crossSection [{ring}] spine [{spine}] }} }} ] }} ] }} }}
""",
        name="sweep.wrl",
    )
    with pytest.raises(ModelError, match="more than 5000000 vertices"):
        load_body(sweep)


def test_a_massless_segment_with_inertia_loads_with_a_warning_naming_its_place(tmp_path: Path) -> None:
    path = write_model(
        tmp_path,
        """
DEF R Humanoid { humanoidBody [ DEF ROOT Joint { jointType "free" children [
  DEF GHOST Segment {
    mass 0
    momentsOfInertia [0.1 0 0 0 0.1 0 0 0 0.1] }
] } ] }
""",
    )
    body = load_body(path)
    mass_line = path.read_text().splitlines().index("    mass 0") + 1
    warnings = [w for w in body.metadata.get("warnings", []) if "mass 0 with a non-zero momentsOfInertia" in w]
    assert len(warnings) == 1 and warnings[0].startswith(f"{path}:{mass_line}:"), body.metadata.get("warnings")
    assert "GHOST" in warnings[0]
