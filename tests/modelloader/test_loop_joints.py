"""Closed loops as each format writes them: Choreonoid's extraJoints (ball, piston, hinge, fixed,
in either spelling, its default axis and rotationInLink1), OpenHRP VRML ExtraJoint nodes and GrxUI
extra-joint items of the same types, and an unknown type refused with its file and line."""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
import pytest
from modelloader_helpers import MODELS

from hrpsim.errors import ModelError
from hrpsim.modelloader import load_body
from hrpsim.project import load_project

LINKS = """
links:
  - { name: BASE, jointType: fixed }
  - { name: A, parent: BASE, jointType: revolute, jointId: 0, jointAxis: [ 0, 1, 0 ] }
  - { name: B, parent: BASE, jointType: revolute, jointId: 1, jointAxis: [ 0, 1, 0 ], translation: [ 0.3, 0, 0 ] }
"""


def body_file(tmp_path: Path, extra_joints: str, *, version: str = "1.0") -> Path:
    path = tmp_path / "loop.body"
    header = f"format: ChoreonoidBody\nformatVersion: {version}\nname: Loop\n"
    path.write_text(header + textwrap.dedent(LINKS) + "extraJoints:\n" + textwrap.dedent(extra_joints))
    return path


def test_choreonoid_hinge_and_fixed_extra_joints_are_read(tmp_path: Path) -> None:
    path = body_file(
        tmp_path,
        """
        - { name: H, link1Name: A, link2Name: B, jointType: hinge, jointAxis: [ 0, 2, 0 ],
            link1LocalPos: [ 0, 0, -0.5 ], link2LocalPos: [ 0, 0, -0.4 ] }
        - { link1Name: A, link2Name: B, jointType: fixed }
        - { link1Name: A, link2Name: B, jointType: hinge, rotationInLink1: [ 0, 0, 1, 90 ] }
        """,
    )
    hinge, fixed, turned = load_body(path).extra_joints
    assert (hinge.name, hinge.type, hinge.link1, hinge.link2) == ("H", "hinge", "A", "B")
    assert hinge.axis.tolist() == [0.0, 1.0, 0.0]  # normalised
    assert hinge.point1.tolist() == [0.0, 0.0, -0.5] and hinge.point2.tolist() == [0.0, 0.0, -0.4]
    assert (fixed.name, fixed.type) == ("A-B", "fixed")
    # Choreonoid's default axis is X; rotationInLink1 turns it into link1's frame (X about Z by 90: Y)
    assert turned.axis == pytest.approx([0.0, 1.0, 0.0])
    assert fixed.axis.tolist() == [1.0, 0.0, 0.0]


def test_format_2_snake_case_keys_are_read(tmp_path: Path) -> None:
    path = body_file(
        tmp_path,
        """
        - { link1_name: A, link2_name: B, joint_type: hinge, axis: [ 0, 0, 1 ],
            translation_in_link1: [ 0.1, 0, 0 ], translation_in_link2: [ 0.2, 0, 0 ] }
        """,
        version="2.0",
    )
    (loop,) = load_body(path).extra_joints
    assert loop.type == "hinge" and loop.axis.tolist() == [0.0, 0.0, 1.0]
    assert loop.point1.tolist() == [0.1, 0.0, 0.0] and loop.point2.tolist() == [0.2, 0.0, 0.0]


def test_an_unknown_extra_joint_type_is_refused_with_its_line(tmp_path: Path) -> None:
    path = body_file(tmp_path, "- { link1Name: A, link2Name: B, jointType: screw }\n")
    with pytest.raises(ModelError) as caught:
        load_body(path)
    (problem,) = caught.value.problems
    line = path.read_text().splitlines().index("- { link1Name: A, link2Name: B, jointType: screw }") + 1
    assert problem.file == str(path) and problem.line == line
    assert "jointType 'screw' is not one of ball, piston, hinge, fixed" in problem


@pytest.mark.parametrize("kind", ["hinge", "fixed"])
def test_a_vrml_extra_joint_may_be_a_hinge_or_fixed(tmp_path: Path, kind: str) -> None:
    source = (MODELS / "openhrp3" / "model" / "closed-link-sample.wrl").read_text()
    path = tmp_path / "closed.wrl"
    path.write_text(source.replace('jointType "xy"', f'jointType "{kind}"'))
    (loop,) = load_body(path).extra_joints
    assert (loop.type, loop.link1, loop.link2) == (kind, "J1", "J3")
    assert loop.axis.tolist() == [0.0, 0.0, 1.0]


ITEM = "com.generalrobotix.ui.item."


@pytest.mark.parametrize("kind", ["Hinge", "fixed"])
def test_a_grxui_extra_joint_item_may_be_a_hinge_or_fixed(tmp_path: Path, kind: str) -> None:
    box = MODELS / "openhrp3" / "model" / "box.wrl"
    models = "".join(
        f'<item class="{ITEM}GrxModelItem" name="{name}" url="{box}">'
        f'<property name="isRobot" value="{robot}"/></item>\n'
        for name, robot in (("anchor", "false"), ("box", "true"))
    )
    joint = (
        f'<item class="{ITEM}GrxExtraJointItem" name="pin">'
        '<property name="object1Name" value="anchor"/><property name="link1Name" value="WAIST"/>'
        '<property name="object2Name" value="box"/><property name="link2Name" value="WAIST"/>'
        f'<property name="jointType" value="{kind}"/><property name="jointAxis" value="0 1 0"/></item>\n'
    )
    path = tmp_path / "grx.xml"
    path.write_text(f'<grxui><mode name="Simulation">\n{models}{joint}</mode></grxui>\n')
    (loop,) = load_project(path).extra_joints
    assert (loop.type, loop.model1, loop.model2) == (kind.lower(), "anchor", "box")
    assert np.array(loop.axis).tolist() == [0.0, 1.0, 0.0]
