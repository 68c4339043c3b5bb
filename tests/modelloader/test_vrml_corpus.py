"""Every OpenHRP VRML model of the corpus (models/) against its facts (tests/data/model_facts.json):
first through ``hrpsim model info --json`` (a real process), then link by link in process."""

from __future__ import annotations

import json
import subprocess
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from modelloader_helpers import HRPSIM, MODELS, REPO, SENSOR_TYPE_OF_FACT, vrml_facts

from hrpsim.modelloader import load_body
from hrpsim.transforms import axis_angle_matrix

FACTS = vrml_facts()

# Primitives under a sheared Transform (non-uniform scale under a rotation) become meshes.
SHEARED_PRIMITIVES = {"openhrp3/model/house/house.main.wrl": {"Cylinder": 5}}


@pytest.mark.parametrize("rel", sorted(FACTS))
def test_model_info_json_matches_facts(rel: str) -> None:
    facts = FACTS[rel]
    done = subprocess.run(
        [*HRPSIM, "model", "info", "--json", str(MODELS / rel)], cwd=REPO, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    info = json.loads(done.stdout)
    assert info["name"] == facts["model_name"]
    assert info["root"] == facts["root_link"]
    assert info["links"] == facts["link_names"]
    assert info["joints"] == facts["joint_names_in_order"]
    assert info["dof"] == facts["dof"]
    assert info["mass"] == pytest.approx(facts["total_mass"], abs=1e-9)
    expected_sensors = sorted(
        (s["name"], SENSOR_TYPE_OF_FACT[s["type"]], s["sensorId"], s["parent_link"]) for s in facts["sensors"]
    )
    assert sorted((s["name"], s["type"], s["id"], s["link"]) for s in info["sensors"]) == expected_sensors
    assert [(e["name"], e["link1"], e["link2"], e["type"]) for e in info["extra_joints"]] == [
        (e["name"], e["link1Name"], e["link2Name"], e["jointType"]) for e in facts["extra_joints"]
    ]
    assert info["warnings"] == []
    main = str(MODELS / rel)
    assert info["files"][0] == main
    assert sorted(info["files"][1:]) == sorted(str(MODELS / f) for f in facts["inline_files"])


@pytest.mark.parametrize("rel", sorted(FACTS))
def test_links_match_facts_joint_by_joint(rel: str) -> None:
    facts = FACTS[rel]
    body = load_body(MODELS / rel)
    by_name = {lk.name: lk for lk in body.links}
    for joint in facts["joints"]:
        link = by_name[joint["name"]]
        assert link.joint_type == joint["jointType"], joint["name"]
        assert link.joint_id == joint["jointId"], joint["name"]
        assert link.joint_axis == pytest.approx(joint["jointAxis"]), joint["name"]
        parent = body.links[link.parent].name if link.parent >= 0 else None
        assert parent == joint["parent"], joint["name"]
        assert link.mass == pytest.approx(joint["mass"], abs=1e-9), joint["name"]
        assert link.translation == pytest.approx(joint["translation"]), joint["name"]
        axis_angle = joint["rotation"]
        expected_rotation = axis_angle_matrix(np.array(axis_angle[:3]), axis_angle[3])
        assert np.allclose(link.rotation, expected_rotation, atol=1e-9), joint["name"]
        assert link.gear_ratio == pytest.approx(joint["gearRatio"])
        assert link.rotor_inertia == pytest.approx(joint["rotorInertia"])
        assert link.q_upper == (pytest.approx(joint["ulimit"][0]) if joint["ulimit"] else np.inf)
        assert link.q_lower == (pytest.approx(joint["llimit"][0]) if joint["llimit"] else -np.inf)
        assert link.dq_upper == (pytest.approx(joint["uvlimit"][0]) if joint["uvlimit"] else np.inf)
        assert np.allclose(link.inertia, link.inertia.T)
        assert np.linalg.eigvalsh(link.inertia).min() >= -1e-12


@pytest.mark.parametrize("rel", sorted(FACTS))
def test_shapes_match_the_geometry_written(rel: str) -> None:
    facts = FACTS[rel]
    body = load_body(MODELS / rel)
    counts = Counter(shape.kind for link in body.links for shape in link.shapes)
    written = facts["geometry_instances_under_segments"]
    primitives = {"Box": "box", "Cylinder": "cylinder", "Sphere": "sphere", "Cone": "cone"}
    sheared = SHEARED_PRIMITIVES.get(rel, {})
    for vrml_kind, kind in primitives.items():
        assert counts[kind] == written.get(vrml_kind, 0) - sheared.get(vrml_kind, 0), vrml_kind
    meshes = sum(n for k, n in written.items() if k not in primitives)
    assert counts["mesh"] == meshes + sum(sheared.values())
    for link in body.links:
        for shape in link.shapes:
            if shape.kind == "mesh":
                assert shape.triangles.shape[1] == 3 and len(shape.triangles) > 0
                assert shape.triangles.max() < len(shape.vertices)
                assert np.all(np.isfinite(shape.vertices))


def test_sensor_poses_and_parameters_of_sample1() -> None:
    body = load_body(MODELS / "openhrp3/model/sample1.wrl")
    facts = {s["name"]: s for s in FACTS["openhrp3/model/sample1.wrl"]["sensors"]}
    for sensor in body.sensors:
        fact = facts[sensor.name]
        assert sensor.translation == pytest.approx(fact["translation"])
        rotation = axis_angle_matrix(np.array(fact["rotation"][:3]), fact["rotation"][3])
        assert np.allclose(sensor.rotation, rotation, atol=1e-9)
        if sensor.type == "vision":
            for key in ("width", "height", "frameRate", "fieldOfView", "frontClipDistance", "backClipDistance"):
                assert sensor.params[key] == pytest.approx(fact[f"vision.{key}"])
            assert sensor.params["name"] == fact["vision.name"]
            assert sensor.params["type"] == fact["vision.type"] == sensor.params["imageType"]
        if sensor.type == "force":
            assert sensor.params["maxForce"] == fact["maxForce"]


def test_floor_vision_proto_without_frame_rate_takes_openhrp_default() -> None:
    # floor.wrl's VisionSensor PROTO lacks frameRate; the model has no camera, but the PROTO
    # variant must not matter to the load.
    body = load_body(MODELS / "openhrp3/model/floor.wrl")
    assert body.static and body.root.shapes[0].kind == "box"
    assert body.root.shapes[0].size == pytest.approx([4.0, 4.0, 0.2])


def test_extra_joint_points_and_axis_of_closed_link_sample() -> None:
    body = load_body(MODELS / "openhrp3/model/closed-link-sample.wrl")
    (extra,) = body.extra_joints
    fact = FACTS["openhrp3/model/closed-link-sample.wrl"]["extra_joints"][0]
    assert extra.point1 == pytest.approx(fact["link1LocalPos"])
    assert extra.point2 == pytest.approx(fact["link2LocalPos"])
    assert extra.axis == pytest.approx(fact["jointAxis"])


def test_textures_resolve_relative_to_the_inlined_file() -> None:
    body = load_body(MODELS / "openhrp3/model/house/floor.main.wrl")
    (shape,) = body.root.shapes
    assert shape.appearance.texture == str(MODELS / "openhrp3/model/house/textures/oak.png")
    assert Path(shape.appearance.texture).is_file()


def test_sample1_waist_mass_properties_are_the_segments() -> None:
    body = load_body(MODELS / "openhrp3/model/sample1.wrl")
    waist = body.root
    assert waist.mass == pytest.approx(27.0)
    assert waist.com == pytest.approx([0.0, 0.0, 0.0375])
    assert np.diag(waist.inertia) == pytest.approx([0.096482, 0.096482, 0.0288])
    assert body.links[body.link_index("RLEG_HIP_Y")].dq_upper == np.inf
    knee = body.links[body.link_index("RLEG_KNEE")]
    assert (knee.dq_lower, knee.dq_upper) == (-40.0, 40.0)
    assert knee.reflected_inertia == pytest.approx(12.0)
