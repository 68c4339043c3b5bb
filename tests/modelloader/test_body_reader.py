"""Choreonoid body semantics, one rule at a time, on small files written here (the corpus test
covers the real files): angle units, joint axes and limits, masses, elements, resources, YAML
anchors, devices, SubBody and extra joints."""

from __future__ import annotations

import math
import textwrap
from pathlib import Path

import numpy as np
import pytest
import trimesh
from modelloader_helpers import MODELS

from hrpsim.modelloader import load_body

HEADER = "format: ChoreonoidBody\nformatVersion: {version}\nangleUnit: {unit}\nname: T\n"


def write_body(tmp_path: Path, links: str, *, version: str = "1.0", unit: str = "degree", extra: str = "") -> Path:
    path = tmp_path / "t.body"
    path.write_text(HEADER.format(version=version, unit=unit) + textwrap.dedent(extra) + textwrap.dedent(links))
    return path


TWO_LINKS = """
links:
  - name: BASE
    jointType: free
    mass: 2.0
    inertia: [ 1, 0, 0, 0, 1, 0, 0, 0, 1 ]
  - name: ARM
    parent: BASE
    translation: [ 0, 0, 0.5 ]
    rotation: [ 0, 0, 1, 90 ]
    jointType: revolute
    jointId: 0
    jointAxis: -Y
    jointRange: [ -90, unlimited ]
    maxJointVelocity: 180
    jointAngle: 45
    max_joint_effort: 30
    rotorInertia: 0.001
    gearRatio: 100
"""


def test_degrees_become_radians_and_limits_keep_choreonoid_meanings(tmp_path: Path) -> None:
    body = load_body(write_body(tmp_path, TWO_LINKS))
    arm = body.links[1]
    assert arm.joint_type == "rotate" and arm.joint_id == 0
    assert arm.joint_axis.tolist() == [0.0, -1.0, 0.0]
    assert arm.rotation == pytest.approx(np.array([[0, -1, 0], [1, 0, 0], [0, 0, 1]]), abs=1e-12)
    assert (arm.q_lower, arm.q_upper) == (pytest.approx(-math.pi / 2), math.inf)
    assert (arm.dq_lower, arm.dq_upper) == (pytest.approx(-math.pi), pytest.approx(math.pi))
    assert (arm.torque_lower, arm.torque_upper) == (-30.0, 30.0)
    assert arm.reflected_inertia == pytest.approx(0.001 * 100**2)
    assert body.metadata["initial_joint_values"] == {"ARM": pytest.approx(math.pi / 4)}
    # a link with no mass keys and no RigidBody has Choreonoid's default: 1 kg, unit inertia
    assert arm.mass == 1.0 and np.array_equal(arm.inertia, np.eye(3))
    assert body.links[0].mass == 2.0 and body.links[0].joint_type == "free"


def test_radian_files_and_format_2_snake_case_keys(tmp_path: Path) -> None:
    radian = load_body(
        write_body(tmp_path, TWO_LINKS.replace("[ -90, unlimited ]", "[ -1.5, unlimited ]"), unit="radian")
    )
    assert radian.links[1].q_lower == pytest.approx(-1.5)
    snake = write_body(
        tmp_path,
        """
        links:
          - { name: B, joint_type: fixed }
          - { name: S, parent: B, joint_type: prismatic, joint_id: 0, joint_axis: [ 0, 0, 2 ], joint_range: 0.3 }
        """,
        version="2.0",
    )
    body = load_body(snake)
    slide = body.links[1]
    assert slide.joint_type == "slide" and slide.joint_axis.tolist() == [0.0, 0.0, 1.0]
    assert (slide.q_lower, slide.q_upper) == (-0.3, 0.3)  # a prismatic range is a length, never converted


def test_rigid_bodies_combine_with_the_link_mass_by_the_parallel_axis_rule(tmp_path: Path) -> None:
    path = write_body(
        tmp_path,
        """
        links:
          - name: B
            jointType: free
            mass: 1.0
            centerOfMass: [ 0, 0, 1 ]
            inertia: [ 0, 0, 0, 0, 0, 0, 0, 0, 0 ]
            elements:
              - type: Transform
                translation: [ 0, 0, -1 ]
                elements:
                  - { type: RigidBody, mass: 1.0, centerOfMass: [ 0, 0, 0 ], inertia: [ 1, 0, 0, 0, 1, 0, 0, 0, 1 ] }
        """,
    )
    link = load_body(path).root
    assert link.mass == 2.0
    assert link.com == pytest.approx([0, 0, 0])
    # each point 1 kg at 1 m from the combined centre about X and Y; the RigidBody's own unit inertia adds
    assert np.diag(link.inertia) == pytest.approx([3.0, 3.0, 1.0])


def test_visual_and_collision_split_the_shapes_and_primitives_keep_their_axes(tmp_path: Path) -> None:
    path = write_body(
        tmp_path,
        """
        links:
          - name: B
            jointType: fixed
            elements:
              - { type: Shape, geometry: { type: Box } }
              - type: Visual
                elements: { Shape: { geometry: { type: Sphere, radius: 0.5 } } }
              - type: Collision
                elements:
                  - type: Shape
                    translation: [ 1, 0, 0 ]
                    rotation: [ 1, 0, 0, 90 ]
                    geometry: { type: Cylinder, radius: 0.1, height: 0.4 }
                    appearance: { material: { diffuseColor: [ 1, 0, 0 ] } }
                  - { type: Shape, geometry: { type: Capsule, radius: 0.2, height: 0.3 } }
                  - { type: Shape, geometry: { type: Cone } }
        """,
    )
    link = load_body(path).root
    assert [s.kind for s in link.shapes] == ["box", "cylinder", "capsule", "cone"]
    assert [s.kind for s in link.visuals] == ["box", "sphere"]
    box, cylinder = link.shapes[0], link.shapes[1]
    assert box.size.tolist() == [1.0, 1.0, 1.0]  # Choreonoid's default box, not VRML's 2 m
    assert cylinder.translation.tolist() == [1.0, 0.0, 0.0]
    assert cylinder.rotation @ np.array([0, 1, 0]) == pytest.approx([0, 0, 1])  # its Y axis turned onto Z
    assert (cylinder.radius, cylinder.height) == (0.1, 0.4)
    assert cylinder.appearance.diffuse.tolist() == [1.0, 0.0, 0.0]


def test_polygon_geometry_becomes_meshes(tmp_path: Path) -> None:
    path = write_body(
        tmp_path,
        """
        links:
          - name: B
            elements:
              - type: Shape
                geometry:
                  type: IndexedFaceSet
                  coordinate: [ 0, 0, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0 ]
                  coordIndex: [ 0, 1, 2, 3, -1 ]
              - type: Shape
                geometry: { type: TriangleMesh, vertices: [ 0, 0, 0, 1, 0, 0, 0, 1, 0 ], faces: [ 0, 1, 2 ] }
              - type: Shape
                geometry: { type: ElevationGrid, xDimension: 3, zDimension: 2, xSpacing: 0.5, zSpacing: 1.0,
                            height: [ 0, 0.1, 0, 0, 0.2, 0 ] }
              - type: Shape
                geometry:
                  { type: Extrusion, crossSection: [ 1, 1, 1, -1, -1, -1, -1, 1, 1, 1 ], spine: [ 0, 0, 0, 0, 2, 0 ] }
        """,
    )
    shapes = load_body(path).root.shapes
    assert [s.kind for s in shapes] == ["mesh"] * 4
    assert [len(s.triangles) for s in shapes[:3]] == [2, 1, 4]
    assert shapes[3].vertices[:, 1].max() == pytest.approx(2.0)


def test_resources_meshes_vrml_nodes_and_yaml_anchors(tmp_path: Path) -> None:
    trimesh.creation.box(extents=(1.0, 2.0, 3.0)).export(tmp_path / "part.stl")
    trimesh.creation.icosphere(radius=0.5).export(tmp_path / "ball.obj")
    (tmp_path / "scene.wrl").write_text(
        "#VRML V2.0 utf8\nDEF Root Transform { translation 5 0 0 rotation 0 0 1 1.5707963267948966 children [\n"
        "  DEF WHEEL Transform { translation 9 9 9 children Shape { geometry Box { size 0.2 0.4 0.6 } } }\n"
        "  Shape { geometry Sphere { radius 3 } } ] }\n"
    )
    (tmp_path / "parts.yaml").write_text(
        "ARM: &ARM\n  type: Transform\n  translation: [ 0, 0, 1 ]\n"
        "  elements:\n    - { type: Shape, geometry: { type: Sphere, radius: 0.25 } }\n"
    )
    path = write_body(
        tmp_path,
        """
        links:
          - name: B
            elements:
              - { type: Resource, uri: part.stl, translation: [ 0, 0, 1 ] }
              - { type: Shape, geometry: { type: Resource, uri: ball.obj }, translation: [ 2, 0, 0 ] }
              - { type: Resource, uri: scene.wrl, node: WHEEL }
              - { type: Resource, uri: parts.yaml, node: ARM }
              - &AGAIN { type: Shape, geometry: { type: Box, size: [ 0.1, 0.1, 0.1 ] } }
              - *AGAIN
        """,
    )
    body = load_body(path)
    mesh, obj, wheel, ball, *boxes = body.root.shapes
    assert mesh.kind == "mesh" and np.ptp(mesh.vertices, axis=0) == pytest.approx([1.0, 2.0, 3.0])
    assert mesh.vertices.mean(axis=0)[2] == pytest.approx(1.0)
    assert obj.kind == "mesh" and obj.vertices.mean(axis=0) == pytest.approx([2.0, 0.0, 0.0], abs=1e-9)
    # the named node keeps the rotation above it, not the translations (Choreonoid's rule)
    assert wheel.kind == "box" and wheel.translation == pytest.approx([0, 0, 0])
    assert np.abs(wheel.rotation @ wheel.size) == pytest.approx([0.4, 0.2, 0.6])
    assert ball.kind == "sphere" and ball.radius == 0.25 and ball.translation.tolist() == [0.0, 0.0, 1.0]
    assert len(boxes) == 2
    read = ("t.body", "part.stl", "ball.obj", "scene.wrl", "parts.yaml")
    assert set(body.metadata["files"]) == {str(tmp_path / n) for n in read}


def test_devices_become_sensors_posed_in_their_link_and_the_rest_notes(tmp_path: Path) -> None:
    path = write_body(
        tmp_path,
        """
        links:
          - name: B
            jointType: free
            elements:
              - type: Transform
                translation: [ 0.1, 0, 0 ]
                elements:
                  - { type: ForceSensor, name: FS, id: 0, maxForce: [ 100, 100, 100 ] }
                  - { type: Camera, name: CAM, format: COLOR_DEPTH, width: 320, height: 240, fieldOfView: 90 }
              - { type: AccelerationSensor, name: ACC }
              - { type: RateGyroSensor, name: GYRO }
              - { type: RangeSensor, name: LRF, yawRange: 180, yawStep: 1, scanRate: 20, maxDistance: 8 }
              - { type: Camera, name: NOFORMAT }
              - { type: Camera, name: ROBO, id: 1, format: COLOR, optical_frame: robotics }
              - { type: Camera, name: TURNED, id: 2, format: COLOR, optical_frame_rotation: [ 0, 1, 0, -90 ] }
              - { type: SpotLight, name: LIGHT }
        """,
    )
    body = load_body(path)
    sensors = {s.name: s for s in body.sensors}
    assert [(s.name, s.type, s.id) for s in body.sensors] == [
        ("FS", "force", 0), ("CAM", "vision", 0), ("ACC", "accel", 0), ("GYRO", "gyro", 0), ("LRF", "range", 0),
        ("ROBO", "vision", 1), ("TURNED", "vision", 2),
    ]  # fmt: skip
    assert sensors["FS"].translation.tolist() == [0.1, 0.0, 0.0]
    assert sensors["FS"].params["maxForce"] == [100.0, 100.0, 100.0]
    assert sensors["CAM"].params["fieldOfView"] == pytest.approx(math.pi / 2)
    assert sensors["CAM"].params["imageType"] == "COLOR_DEPTH"
    assert sensors["LRF"].params["scanAngle"] == pytest.approx(math.pi)
    # a camera looks along -Z of its optical frame: the device's X in a robotics frame, and the
    # frame turned -90 degrees about Y looks along the device's X too
    assert sensors["CAM"].rotation @ np.array([0, 0, -1]) == pytest.approx([0, 0, -1])
    assert sensors["ROBO"].rotation @ np.array([0, 0, -1]) == pytest.approx([1, 0, 0])
    assert sensors["ROBO"].rotation @ np.array([0, 1, 0]) == pytest.approx([0, 0, 1])
    assert sensors["TURNED"].rotation @ np.array([0, 0, -1]) == pytest.approx([1, 0, 0])
    notes = "\n".join(body.metadata["notes"])
    assert "NOFORMAT" in notes and "LIGHT" in notes


def test_sub_body_takes_prefix_joint_id_offset_and_the_nodes_overrides(tmp_path: Path) -> None:
    write_body(tmp_path, TWO_LINKS).rename(tmp_path / "arm.body")
    path = write_body(
        tmp_path,
        """
        links:
          - { name: ROOT, jointType: free }
          - { type: SubBody, uri: arm.body, parent: ROOT, prefix: L_, jointIdOffset: 3, jointType: fixed,
              translation: [ 0, 1, 0 ] }
        extraJoints:
          - { link1Name: ROOT, link2Name: L_ARM, jointType: ball, link1LocalPos: [ 0, 0, 1 ] }
        """,
    )
    body = load_body(path)
    assert [lk.name for lk in body.links] == ["ROOT", "L_BASE", "L_ARM"]
    sub_root = body.links[1]
    assert sub_root.joint_type == "fixed" and sub_root.translation.tolist() == [0.0, 1.0, 0.0]
    assert sub_root.mass == 2.0  # the sub-body's own mass stays
    assert body.links[2].joint_id == 3
    assert [(e.link1, e.link2, e.type) for e in body.extra_joints] == [("ROOT", "L_ARM", "ball")]
    assert body.extra_joints[0].point1.tolist() == [0.0, 0.0, 1.0]
    assert str(tmp_path / "arm.body") in body.metadata["files"]


def test_crawler_links_of_the_tank_are_crawler_joints() -> None:
    body = load_body(MODELS / "choreonoid-body" / "Tank" / "Tank.body")
    tracks = [lk for lk in body.links if lk.joint_type == "crawler"]
    assert [lk.name for lk in tracks] == ["TRACK_L", "TRACK_R"]
    assert all(lk.joint_axis.tolist() == [0.0, 1.0, 0.0] for lk in tracks)
    assert all(lk.shapes and lk.visuals for lk in tracks)  # collision boxes; the tank.wrl nodes drawn
