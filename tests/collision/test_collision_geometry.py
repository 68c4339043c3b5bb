"""The collision service's geometry in-process: shape axes (VRML's Y) in fcl and ODE, the scene's
broad phase, ray casting on meshes, and link poses agreeing with the simulator's kinematics."""

from __future__ import annotations

import math

import numpy as np
import pytest
from collision_helpers import MODELS, box, box_mesh, one_link_body, pose

from hrpsim.bodyinfo import Shape
from hrpsim.collision import queries
from hrpsim.collision.kinematics import link_poses
from hrpsim.collision.scene import Scene
from hrpsim.engines.ode.rays import ray_triangles
from hrpsim.geometry_queries import scan_directions
from hrpsim.kinematics import forward_kinematics, link_values
from hrpsim.modelloader import load_body


def scene_with(probe_at, *shapes: Shape) -> Scene:
    """A scene with a body of ``shapes`` at the origin and a 0.1 m ball at ``probe_at``."""
    scene = Scene()
    scene.add_body("thing", one_link_body("thing", *shapes))
    scene.add_body("ball", one_link_body("ball", Shape("sphere", radius=0.1)))
    scene.set_poses({"ball": pose(probe_at)[None]})
    scene.add_pair("thing", "", "ball", "")
    return scene


def distance_to(probe_at, *shapes: Shape) -> float:
    scene = scene_with(probe_at, *shapes)
    (result,) = queries.distances(scene, scene.pairs)
    return result["distance"]


@pytest.mark.parametrize(
    ("shape", "along_axis", "sideways"),
    [
        (Shape("cylinder", radius=0.2, height=1.0), 2.0 - 0.5 - 0.1, 2.0 - 0.2 - 0.1),
        (Shape("capsule", radius=0.2, height=1.0), 2.0 - 0.7 - 0.1, 2.0 - 0.2 - 0.1),
        (Shape("cone", radius=0.2, height=1.0), 2.0 - 0.5 - 0.1, 2.0 - 0.1),  # sideways: passes the apex line
    ],
)
def test_round_shapes_lie_along_their_local_y(shape, along_axis, sideways):
    assert distance_to([0.0, 2.0, 0.0], shape) == pytest.approx(along_axis, abs=1e-6)
    assert distance_to([0.0, -2.0, 0.0], shape) == pytest.approx(along_axis, abs=1e-6)
    if shape.kind != "cone":
        assert distance_to([2.0, 0.0, 0.0], shape) == pytest.approx(sideways, abs=1e-6)


def test_a_cone_points_along_plus_y():
    cone = Shape("cone", radius=0.5, height=1.0)
    # just above the apex (0, 0.5, 0) vs just beside the base rim at y = -0.5
    assert distance_to([0.0, 0.8, 0.0], cone) == pytest.approx(0.2, abs=1e-6)
    assert distance_to([0.8, -0.5, 0.0], cone) == pytest.approx(0.2, abs=1e-6)


def test_a_plane_is_its_local_xy_facing_plus_z():
    plane = Shape("plane", translation=np.array([0.0, 0.0, 0.25]))
    assert distance_to([3.0, -7.0, 1.0], plane) == pytest.approx(1.0 - 0.25 - 0.1, abs=1e-6)
    scene = scene_with([1.0, 1.0, 0.3], plane)
    (hit,) = queries.contacts(scene, scene.pairs)
    np.testing.assert_allclose(hit["depth"], [0.05], atol=1e-9)


def test_ode_sees_a_cylinder_along_y_too():
    scene = scene_with([0.0, 0.55, 0.0], Shape("cylinder", radius=0.2, height=1.0))
    (hit,) = queries.contacts(scene, scene.pairs)
    np.testing.assert_allclose(hit["depth"].max(), 0.05, atol=1e-9)
    assert hit["normal"][0] @ [0.0, -1.0, 0.0] == pytest.approx(1.0, abs=1e-9)  # into the cylinder (link1)


def test_the_broad_phase_keeps_touching_pairs_and_drops_distant_ones():
    scene = scene_with([5.0, 0.0, 0.0], box([1, 1, 1]))
    assert scene.near_pairs(scene.pairs) == []
    assert len(scene.near_pairs(scene.pairs, margin={p: 10.0 for p in scene.pairs})) == 1
    scene.set_poses({"ball": pose([0.55, 0.0, 0.0])[None]})
    assert len(scene.near_pairs(scene.pairs)) == 1


def test_ray_triangle_hits_on_a_mesh_box():
    shape = box_mesh([1.0, 2.0, 3.0])
    triangles = shape.vertices[shape.triangles]
    origins = np.array([[-5.0, 0.2, 0.3], [0.0, 0.0, 10.0], [3.0, 3.0, 3.0]])
    directions = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, -1.0], [1.0, 0.0, 0.0]])
    distance, which = ray_triangles(origins, directions, triangles)
    np.testing.assert_allclose(distance[:2], [4.5, 8.5])
    assert which[0] >= 0 and which[1] >= 0 and which[2] == -1 and math.isinf(distance[2])


def test_scan_angles_are_multiples_of_the_step_within_the_range():
    angles, directions = scan_directions(2.0, 0.3)  # +-1 rad
    np.testing.assert_allclose(angles, [-0.9, -0.6, -0.3, 0.0, 0.3, 0.6, 0.9])
    np.testing.assert_allclose(directions[3], [0.0, 0.0, -1.0])
    np.testing.assert_allclose(np.linalg.norm(directions, axis=1), 1.0)


def test_link_poses_agree_with_the_simulators_kinematics():
    robot = load_body(MODELS / "openhrp3" / "model" / "sample1.wrl")
    rng = np.random.default_rng(7)
    joints = {
        name: float(v) for name, v in zip(robot.joint_names, rng.uniform(-1, 1, len(robot.joint_names)), strict=True)
    }
    root = pose([0.1, -0.2, 0.7], np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]))
    ours = link_poses(robot, root, joints)
    theirs = forward_kinematics(robot, root[:3, 3], root[:3, :3], link_values(robot, joints))
    for mine, (p, r) in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(mine[:3, 3], p, atol=1e-12)
        np.testing.assert_allclose(mine[:3, :3], r, atol=1e-12)


@pytest.mark.parametrize(
    ("shape", "expected"),
    [
        (Shape("box", size=np.array([0.4, 1.0, 0.4])), 2.0 - 0.5 - 0.5),
        (Shape("sphere", radius=0.5), 2.0 - 0.5 - 0.5),
        (Shape("cylinder", radius=0.2, height=1.0), 2.0 - 0.5 - 0.5),
        (Shape("capsule", radius=0.2, height=1.0), 2.0 - 0.7 - 0.5),
        (Shape("cone", radius=0.2, height=1.0), 2.0 - 0.5 - 0.5),
    ],
)
def test_primitives_against_a_mesh_are_tessellated_true_to_size(shape, expected):
    scene = Scene()
    scene.add_body("thing", one_link_body("thing", shape))
    scene.add_body("wall", one_link_body("wall", box_mesh([1.0, 1.0, 1.0])))
    scene.set_poses({"wall": pose([0.0, 2.0, 0.0])[None]})
    (result,) = queries.distances(scene, scene.add_pair("thing", "", "wall", "") and scene.pairs)
    assert result["distance"] == pytest.approx(expected, abs=2e-3)  # tessellation, tight to a few mm
    assert result["point2"][1] == pytest.approx(1.5, abs=1e-9)  # on the wall's near face


def test_concentric_spheres_overlap_by_both_radii():
    # fcl's penetration query never returns for this pair; the depth comes from ODE's contact
    scene = scene_with([0.0, 0.0, 0.0], Shape("sphere", radius=0.5))
    (result,) = queries.distances(scene, scene.pairs)
    assert result["distance"] == pytest.approx(-0.6, abs=1e-9)
    np.testing.assert_allclose(result["point1"], result["point2"])


def test_overlapping_boxes_report_the_contacts_depth_as_negative_distance():
    scene = scene_with([0.55, 0.0, 0.0], box([1, 1, 1]))
    (result,) = queries.distances(scene, scene.pairs)
    assert result["distance"] == pytest.approx(-0.05, abs=1e-9)
    assert 0.45 - 1e-9 <= result["point1"][0] <= 0.5 + 1e-9
