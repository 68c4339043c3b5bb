"""The VRML97 parser on the syntax real files use, and its syntax errors."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from modelloader_helpers import JOINT_PROTO, write_model

from hrpsim.errors import ModelError
from hrpsim.modelloader import load_body
from hrpsim.modelloader.vrml.nodes import Node
from hrpsim.modelloader.vrml.parser import parse_text
from hrpsim.modelloader.vrml.scope import instantiate, resolve_file


def test_commas_bare_mf_values_trailing_commas_and_nan(tmp_path: Path) -> None:
    path = write_model(
        tmp_path,
        """
DEF R Humanoid { humanoidBody [ DEF ROOT Joint { jointType "free"
  children [ DEF SEG Segment { mass 2, centerOfMass 0, 0, 0.5,
     momentsOfInertia [1 0 0, 0 1 0, 0 0 1,]
     children Shape { geometry IndexedFaceSet {
        coord Coordinate { point [0 0 0, 1 0 0, 1 1 0, 0 1 0,] } coordIndex [0, 1, 2, 3, -1,] } } }
   DEF J1 Joint { jointType "rotate" jointAxis "Y" jointId 0 ulimit 1.5 llimit [ -1.5 ] translation 0 0 nan } ] } ] }
""",
    )
    with pytest.raises(ModelError, match=r"Joint 'J1': translation or rotation is not finite"):
        load_body(path)
    body = load_body(path, lenient=True)
    root, j1 = body.links
    assert root.mass == 2.0 and root.com == pytest.approx([0, 0, 0.5])
    assert root.shapes[0].triangles.tolist() == [[0, 1, 2], [0, 2, 3]]
    assert j1.joint_axis.tolist() == [0.0, 1.0, 0.0]
    assert (j1.q_lower, j1.q_upper) == (-1.5, 1.5)
    assert j1.translation.tolist() == [0, 0, 0] and len(body.metadata["warnings"]) == 1


def test_crlf_shift_jis_comment_and_no_header(tmp_path: Path) -> None:
    text = (
        "#VRML V2.0 utf8\r\n# \x82\xb1\x82\xcc\r\n"
        + JOINT_PROTO.replace("\n", "\r\n")
        + 'DEF R Humanoid { humanoidBody DEF ROOT Joint { jointType "fixed" } }\r\n'
    )
    path = tmp_path / "crlf.wrl"
    path.write_bytes(text.encode("latin-1"))
    assert load_body(path).links[0].name == "ROOT"
    headerless = write_model(
        tmp_path, 'DEF R Humanoid { humanoidBody DEF ROOT Joint { jointType "fixed" } }', name="bare.wrl", header=""
    )
    assert load_body(headerless).name == "R"


def test_def_use_shares_nodes_and_each_file_is_its_own_scope(tmp_path: Path) -> None:
    (tmp_path / "part.wrl").write_text(
        "DEF ROOT Transform { children DEF B Shape { geometry Box { size 1 2 3 } } }\n"
        "Transform { translation 0 0 1 children USE B }"
    )
    path = write_model(
        tmp_path,
        """
DEF R Humanoid { humanoidBody DEF ROOT Joint { jointType "fixed" children [
  DEF S Segment { children [ Inline { url "part.wrl" } ] }
  Transform { translation 1 0 0 children USE S } ] } }
""",
    )
    body = load_body(path)
    # ROOT inside part.wrl names a Transform there, not the Joint: each file has its own names.
    assert [lk.name for lk in body.links] == ["ROOT"]
    positions = sorted(tuple(s.translation) for s in body.root.shapes)
    assert positions == [(0, 0, 0), (0, 0, 1), (1, 0, 0), (1, 0, 1)]
    assert all(s.size.tolist() == [1, 2, 3] for s in body.root.shapes)
    assert body.metadata["files"] == [str(path), str(tmp_path / "part.wrl")]


def test_proto_is_defaults_externproto_and_route() -> None:
    parsed = parse_text(
        """
PROTO Thing [ field SFVec3f size 1 2 3  exposedField SFFloat r 0.5 ] {
  DEF IN Group { children [ Shape { geometry Box { size IS size } } ] }
  ROUTE IN.children TO IN.set_children
}
EXTERNPROTO Far [ field SFFloat r ] [ "elsewhere.wrl#Far", "urn:x" ]
Script { field SFFloat k 3 eventIn SFTime tick url "javascript: 1" }
DEF A Thing { }
DEF B Thing { size 4 5 6 }
""",
        "inline.wrl",
    )
    problems: list[str] = []
    resolve_file(parsed, problems)
    assert problems == []
    script, a, b = parsed.statements
    assert script.fields["k"] == [3.0]
    assert a.proto is b.proto and a.get("r") == [0.5]
    (group_a,), (group_b,) = instantiate(a), instantiate(b)
    box_a = group_a.fields["children"][0].fields["geometry"]
    box_b = group_b.fields["children"][0].fields["geometry"]
    assert list(box_a.fields["size"]) == [1, 2, 3] and list(box_b.fields["size"]) == [4, 5, 6]
    assert isinstance(box_a, Node) and box_a is not box_b


def test_user_proto_geometry_is_expanded(tmp_path: Path) -> None:
    path = write_model(
        tmp_path,
        """
PROTO Wheel [ field SFFloat radius 0.1 ] { Transform { rotation 1 0 0 1.5707963267948966
  children Shape { geometry Cylinder { radius IS radius height 0.05 } } } }
DEF R Humanoid { humanoidBody DEF ROOT Joint { jointType "free" children [
  Segment { mass 1 children [ Wheel { radius 0.3 } ] } ] } }
""",
    )
    (shape,) = load_body(path).root.shapes
    assert shape.kind == "cylinder" and shape.radius == pytest.approx(0.3)
    assert shape.rotation @ np.array([0, 1, 0]) == pytest.approx([0, 0, 1])


def test_transforms_scale_primitives_or_turn_them_into_meshes(tmp_path: Path) -> None:
    path = write_model(
        tmp_path,
        """
DEF R Humanoid { humanoidBody DEF ROOT Joint { jointType "free" children [ Segment { children [
  Transform { scale 2 3 4 translation 1 0 0 children Shape { geometry Box { size 1 1 1 } } }
  Transform { scale 2 2 2 center 0 1 0 children Shape { geometry Sphere { radius 0.5 } } }
  Transform { scale 1 2 1 children Shape { geometry Sphere { radius 0.5 } } }
  Transform { scale 2 3 2 children Shape { geometry Cone { bottomRadius 0.5 height 1 } } }
  Transform { rotation 0 0 1 0.5 children Transform { scale 1 3 1 children Shape { geometry Box { } } } }
] } ] } }
""",
    )
    box, sphere, squashed, cone, sheared = load_body(path).root.shapes
    assert box.kind == "box" and box.size.tolist() == [2, 3, 4] and box.translation.tolist() == [1, 0, 0]
    assert sphere.kind == "sphere" and sphere.radius == 1.0 and sphere.translation == pytest.approx([0, -1, 0])
    assert squashed.kind == "mesh" and squashed.vertices[:, 1].max() == pytest.approx(1.0)
    assert cone.kind == "cone" and (cone.radius, cone.height) == (1.0, 3.0)
    assert sheared.kind == "box" and sheared.size.tolist() == [2, 6, 2]


def test_elevation_grid_and_extrusion_become_meshes(tmp_path: Path) -> None:
    path = write_model(
        tmp_path,
        """
DEF R Humanoid { humanoidBody DEF ROOT Joint { jointType "fixed" children [ Segment { children [
  Shape { geometry ElevationGrid { xDimension 3 zDimension 2 xSpacing 0.5 zSpacing 2 height [0 1 2 3 4 5] } }
  Shape { geometry Extrusion { crossSection [1 1, 1 -1, -1 -1, -1 1, 1 1] spine [0 0 0, 0 2 0] } }
] } ] } }
""",
    )
    grid, prism = load_body(path).root.shapes
    assert grid.triangles.shape == (4, 3) and grid.vertices[:, 0].max() == 1.0 and grid.vertices[:, 2].max() == 2.0
    assert grid.vertices[:, 1].tolist() == [0, 1, 2, 3, 4, 5]
    normal = np.cross(*(grid.vertices[grid.triangles[0, 1:]] - grid.vertices[grid.triangles[0, 0]]))
    assert normal[1] > 0  # faces up
    assert prism.vertices.min(axis=0).tolist() == [-1, 0, -1] and prism.vertices.max(axis=0).tolist() == [1, 2, 1]
    assert len(prism.triangles) == 8 + 2 + 2  # four sides, two caps


def test_concave_faces_are_ear_clipped_when_not_convex(tmp_path: Path) -> None:
    u_shape = "0 0 0, 3 0 0, 3 2 0, 2 2 0, 2 1 0, 1 1 0, 1 2 0, 0 2 0"
    path = write_model(
        tmp_path,
        f"""
DEF R Humanoid {{ humanoidBody DEF ROOT Joint {{ jointType "fixed" children [ Segment {{ children [
  Shape {{ geometry IndexedFaceSet {{ convex FALSE coord Coordinate {{ point [{u_shape}] }}
     coordIndex [0 1 2 3 4 5 6 7 -1] }} }} ] }} ] }} }}
""",
    )
    (shape,) = load_body(path).root.shapes
    corners = shape.vertices[shape.triangles]
    normals = np.cross(corners[:, 1] - corners[:, 0], corners[:, 2] - corners[:, 0])
    assert len(shape.triangles) == 6
    assert np.all(normals[:, 2] > 0)  # no triangle folds over: each lies inside the U
    assert normals[:, 2].sum() / 2 == pytest.approx(5.0)


@pytest.mark.parametrize(
    ("text", "line", "column", "expected"),
    [
        ("Transform {\n  children [ Shape { } \n}", 3, 1, "']'"),
        ("Transform { translation 1 2 3 ] }", 1, 31, "'}'"),
        ("DEF 9x Transform {}", 1, 5, "a name"),
        ('Transform { children [ "text" Shape {} }', 1, 40, "']'"),
    ],
)
def test_syntax_errors_name_file_line_column_and_expectation(text: str, line: int, column: int, expected: str) -> None:
    with pytest.raises(ModelError) as caught:
        parse_text(text, "/models/bad.wrl")
    message = str(caught.value)
    assert message.startswith(f"/models/bad.wrl:{line}:{column}: syntax error")
    assert expected in message


def test_a_file_that_ends_early_says_so() -> None:
    with pytest.raises(
        ModelError,
        match=r"bad\.wrl:1:35: syntax error: the file ends early; "
        r"still open: '\{' of Transform at 1:11; expected .*'\}'",
    ):
        parse_text("Transform { children [ Shape { } ]", "bad.wrl")
