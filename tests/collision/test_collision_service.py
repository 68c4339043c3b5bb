"""The collision service across a real process: answers checked against geometry worked out by hand,
and bad input answered with errors that name it while the service keeps serving."""

from __future__ import annotations

import math

import numpy as np
import pytest
from collision_helpers import (
    box,
    box_mesh,
    chain_body,
    collision_service,
    installed_geometries,
    one_link_body,
    pose,
    rot_z,
)
from process_helpers import spawn, start_nameserver

from hrpsim.bodyinfo import Shape
from hrpsim.errors import ModelError, NotFound, RequestError


@pytest.fixture(scope="module", params=installed_geometries())
def running_service(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory):
    """One collision service process (and its nameserver) for the module's tests, per installed
    geometry library (ODE's and MuJoCo's answer the same questions)."""
    folder = tmp_path_factory.mktemp("collision-service")
    nameserver = start_nameserver(folder)
    try:
        with collision_service(nameserver.address, folder, geometry=request.param) as client:
            yield client
    finally:
        nameserver.stop()


@pytest.fixture
def service(running_service):
    """The module's collision service, emptied: each test starts with no bodies and no pairs."""
    assert running_service.call("clear") is True
    assert running_service.call("bodies") == [] and running_service.call("pairs") == []
    return running_service


@pytest.fixture
def two_boxes(service):
    service.call("add_body", name="a", body=one_link_body("a", box([1, 1, 1])).to_wire())
    service.call("add_body", name="b", body=one_link_body("b", box([1, 1, 1])).to_wire())
    service.call("add_pair", body1="a", body2="b")
    return service


def at(a: np.ndarray, b: np.ndarray) -> dict:
    return {"a": a[None], "b": b[None]}


def test_the_service_registers_under_its_kind(service):
    assert service.call("ping")["kind"] == "collision"


def test_overlapping_boxes_give_depth_normal_and_points_on_the_overlap(two_boxes):
    # b (unit cube) 0.9 m along x and 0.2 along y from a: they overlap 0.1 m in x.
    found = two_boxes.call("contacts", poses=at(pose(), pose([0.9, 0.2, 0.0])))
    assert len(found) == 1
    hit = found[0]
    assert (hit["body1"], hit["link1"], hit["body2"], hit["link2"]) == ("a", "BASE", "b", "BASE")
    np.testing.assert_allclose(hit["depth"], 0.1, atol=1e-9)
    # ODE's convention: the normal points into body1 (moving a along it by depth separates them)
    np.testing.assert_allclose(hit["normal"], np.tile([-1.0, 0.0, 0.0], (len(hit["depth"]), 1)), atol=1e-9)
    positions = hit["position"]
    assert np.all((positions[:, 0] >= 0.4 - 1e-9) & (positions[:, 0] <= 0.5 + 1e-9))
    assert np.all((positions[:, 1] >= -0.3 - 1e-9) & (positions[:, 1] <= 0.5 + 1e-9))
    assert np.all(np.abs(positions[:, 2]) <= 0.5 + 1e-9)


def test_a_box_turned_45_degrees_touches_by_its_edge(two_boxes):
    # b's vertical edge reaches x = 1.2 - sqrt(2)/2 = 0.49289: 0.00711 into a's face at x = 0.5
    found = two_boxes.call("contacts", poses=at(pose(), pose([1.2, 0.0, 0.0], rot_z(math.pi / 4))))
    assert len(found) == 1
    depth = 0.5 - (1.2 - math.sqrt(0.5))
    np.testing.assert_allclose(found[0]["depth"].max(), depth, atol=1e-9)
    np.testing.assert_allclose(found[0]["normal"][0], [-1.0, 0.0, 0.0], atol=1e-9)
    moved = two_boxes.call("contacts", poses={"b": pose([1.3, 0.0, 0.0], rot_z(math.pi / 4))[None]})
    assert moved == []


def test_intersection_and_its_tolerance(two_boxes):
    assert two_boxes.call("intersect", poses=at(pose(), pose([0.9, 0, 0]))) == [
        {"body1": "a", "link1": "BASE", "body2": "b", "link2": "BASE"}
    ]
    assert two_boxes.call("intersect", poses=at(pose(), pose([1.05, 0, 0]))) == []
    # 5 cm apart: within a 6 cm tolerance, not within 4 cm
    assert len(two_boxes.call("intersect", pairs=[{"body1": "a", "body2": "b", "tolerance": 0.06}])) == 1
    assert two_boxes.call("intersect", pairs=[{"body1": "a", "body2": "b", "tolerance": 0.04}]) == []


def test_distance_and_closest_points_between_separated_boxes(two_boxes):
    # corner (0.5, 0.5, 0.5) of a faces corner (1.5, 1.0, 1.0) of b: gaps 1, 0.5, 0.5
    (result,) = two_boxes.call("distance", poses=at(pose(), pose([2.0, 1.5, 1.5])))
    np.testing.assert_allclose(result["distance"], math.sqrt(1.5), atol=1e-6)
    np.testing.assert_allclose(result["point1"], [0.5, 0.5, 0.5], atol=1e-6)
    np.testing.assert_allclose(result["point2"], [1.5, 1.0, 1.0], atol=1e-6)


def test_distance_is_the_penetration_depth_when_boxes_overlap(two_boxes):
    (result,) = two_boxes.call("distance", poses=at(pose(), pose([0.9, 0.0, 0.0])))
    np.testing.assert_allclose(result["distance"], -0.1, atol=1e-6)


def test_distance_to_a_mesh_reports_points_in_the_world_in_pair_order(service):
    service.call("add_body", name="solid", body=one_link_body("solid", box([1, 1, 1])).to_wire())
    service.call("add_body", name="mesh", body=one_link_body("mesh", box_mesh([1, 1, 1])).to_wire())
    pairs = [{"body1": "solid", "body2": "mesh"}]
    (result,) = service.call(
        "distance", pairs=pairs, poses={"solid": pose()[None], "mesh": pose([2.0, 1.5, 1.5])[None]}
    )
    np.testing.assert_allclose(result["distance"], math.sqrt(1.5), atol=1e-6)
    np.testing.assert_allclose(result["point1"], [0.5, 0.5, 0.5], atol=1e-6)
    np.testing.assert_allclose(result["point2"], [1.5, 1.0, 1.0], atol=1e-6)


def test_a_ray_against_a_sphere(service):
    ball = one_link_body("ball", Shape("sphere", radius=0.5))
    service.call("add_body", name="ball", body=ball.to_wire())
    service.call("set_poses", poses={"ball": pose([1.0, 2.0, 3.0])[None]})
    straight = service.call("ray", origin=[1.0, 2.0, -2.0], direction=[0.0, 0.0, 2.0])
    assert straight["hit"] and (straight["body"], straight["link"]) == ("ball", "BASE")
    np.testing.assert_allclose(straight["distance"], 4.5, atol=1e-9)
    np.testing.assert_allclose(straight["point"], [1.0, 2.0, 2.5], atol=1e-9)
    np.testing.assert_allclose(straight["normal"], [0.0, 0.0, -1.0], atol=1e-9)
    # 0.3 m off the centre line: enters sqrt(0.25 - 0.09) = 0.4 below the centre
    off = service.call("ray", origin=[1.3, 2.0, -2.0], direction=[0.0, 0.0, 1.0])
    np.testing.assert_allclose(off["distance"], 4.6, atol=1e-9)
    np.testing.assert_allclose(off["normal"], [0.6, 0.0, -0.8], atol=1e-9)
    short = service.call("ray", origin=[1.0, 2.0, -2.0], direction=[0.0, 0.0, 1.0], max_distance=4.0)
    assert not short["hit"] and math.isinf(short["distance"])
    miss = service.call("ray", origin=[1.6, 2.0, -2.0], direction=[0.0, 0.0, 1.0])
    assert not miss["hit"]


def _room():
    """Walls 0.2 m thick whose inner faces are at x = +-2, y = +-3, and a floor plane at z = 0."""
    walls = [
        box([0.2, 6.4, 2.0], (2.1, 0, 1)),
        box([0.2, 6.4, 2.0], (-2.1, 0, 1)),
        box([4.4, 0.2, 2.0], (0, 3.1, 1)),
        box_mesh([4.4, 0.2, 2.0], (0, -3.1, 1)),
    ]
    return one_link_body("room", *walls, Shape("plane"), static=True)


def test_a_scan_in_a_box_room(service):
    service.call("add_body", name="room", body=_room().to_wire())
    # Sensor at (0, 0, 1) looking along world +X (its -Z), scanning in the horizontal plane (its Y up):
    # the beam at angle a points along (cos a, sin a, 0).
    sensor = pose([0.0, 0.0, 1.0], np.array([[0.0, 0.0, -1.0], [-1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]))
    reply = service.call("scan", pose=sensor, angle_range=2 * math.pi, step=math.pi / 8, max_distance=10.0)
    angles = reply["angles"]
    np.testing.assert_allclose(angles, np.arange(-8, 9) * math.pi / 8, atol=1e-12)
    with np.errstate(divide="ignore"):
        to_x = np.where(np.abs(np.cos(angles)) > 1e-9, 2.0 / np.abs(np.cos(angles)), np.inf)
        to_y = np.where(np.abs(np.sin(angles)) > 1e-9, 3.0 / np.abs(np.sin(angles)), np.inf)
    np.testing.assert_allclose(reply["distances"], np.minimum(to_x, to_y), atol=1e-9)
    directions = np.stack([np.cos(angles), np.sin(angles), np.zeros_like(angles)], axis=1)
    np.testing.assert_allclose(reply["points"], [0, 0, 1] + directions * reply["distances"][:, None], atol=1e-9)


def test_a_scan_with_nothing_in_range_reports_infinity(service):
    service.call("add_body", name="room", body=_room().to_wire())
    sensor = pose([0.0, 0.0, 1.0], np.array([[0.0, 0.0, -1.0], [-1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]))
    reply = service.call("scan", pose=sensor, angle_range=0.0, step=0.1, max_distance=1.5)
    assert reply["angles"].tolist() == [0.0] and math.isinf(reply["distances"][0])


def test_self_pairs_skip_adjacent_links(service):
    service.call("add_body", name="arm", body=chain_body("arm", 4).to_wire())
    assert service.call("add_pair", body1="arm", body2="arm")["added"] == 3  # L0-L2, L0-L3, L1-L3
    described = {(p["link1"], p["link2"]) for p in service.call("pairs")}
    assert described == {("L0", "L2"), ("L0", "L3"), ("L1", "L3")}
    with pytest.raises(RequestError, match=r"L1.*L2.*adjacent"):
        service.call("add_pair", body1="arm", link1="L1", body2="arm", link2="L2")
    with pytest.raises(RequestError, match="itself"):
        service.call("add_pair", body1="arm", link1="L1", body2="arm", link2="L1")


def test_a_folded_arm_touches_itself(service):
    from hrpsim.collision.kinematics import link_poses

    arm = chain_body("arm", 4)
    service.call("add_body", name="arm", body=arm.to_wire())
    service.call("add_pair", body1="arm", body2="arm")
    straight = link_poses(arm)
    assert service.call("intersect", poses={"arm": straight}) == []
    folded = link_poses(arm, joints={"L1": math.radians(170), "L2": math.radians(170)})
    hits = service.call("intersect", poses={"arm": folded})
    assert {(h["link1"], h["link2"]) for h in hits} >= {("L0", "L2")}


def test_bad_input_is_named_and_the_service_keeps_serving(two_boxes):
    with pytest.raises(NotFound, match="'ghost'"):
        two_boxes.call("add_pair", body1="a", body2="ghost")
    with pytest.raises(NotFound, match="body 'a' has no link 'ARM'"):
        two_boxes.call("add_pair", body1="a", link1="ARM", body2="b")
    with pytest.raises(RequestError, match=r"poses\['a'\].*shape \(1, 4, 4\)"):
        two_boxes.call("contacts", poses={"a": np.eye(3)[None]})
    bad = pose()[None].copy()
    bad[0, 0, 3] = np.nan
    with pytest.raises(RequestError, match=r"poses\['b'\].*non-finite.*BASE"):
        two_boxes.call("contacts", poses={"b": bad})
    skewed = pose()[None].copy()
    skewed[0, 0, 1] = 0.5
    with pytest.raises(RequestError, match=r"poses\['a'\].*BASE is not a rotation"):
        two_boxes.call("intersect", poses={"a": skewed})
    with pytest.raises(NotFound, match="ghost"):
        two_boxes.call("distance", poses={"ghost": pose()[None]})
    with pytest.raises(RequestError, match="direction"):
        two_boxes.call("ray", origin=[0, 0, 0], direction=[0, 0, 0])
    with pytest.raises(RequestError, match="origin"):
        two_boxes.call("ray", origin=[0, 0, float("inf")], direction=[0, 0, 1])
    with pytest.raises(RequestError, match="pairs\\[0\\]"):
        two_boxes.call("contacts", pairs=[{"body1": "a"}])
    with pytest.raises(RequestError, match="tolerance"):
        two_boxes.call("add_pair", body1="a", body2="b", tolerance=-1.0)
    with pytest.raises(RequestError, match="unknown operation"):
        two_boxes.call("explode")
    with pytest.raises(RequestError, match="'poses' must be a map"):
        two_boxes.call("set_poses", poses=None)
    with pytest.raises(RequestError, match=r"poses\['a'\]: not an array of numbers"):
        two_boxes.call("set_poses", poses={"a": "upright"})
    with pytest.raises(RequestError, match="max_contacts"):
        two_boxes.call("contacts", max_contacts=-2)
    with pytest.raises(RequestError, match="step must be positive"):
        two_boxes.call("scan", pose=pose(), angle_range=1.0, step=0.0)
    with pytest.raises(RequestError, match="too many beams"):
        two_boxes.call("scan", pose=pose(), angle_range=3.0, step=1e-6)
    with pytest.raises(RequestError, match="pose: the upper-left 3x3 block is not a rotation"):
        two_boxes.call("scan", pose=np.diag([2.0, 1.0, 1.0, 1.0]), angle_range=1.0, step=0.1)
    # a rejected query leaves the stored poses alone, and the service still answers
    found = two_boxes.call("contacts", poses=at(pose(), pose([0.9, 0.0, 0.0])))
    np.testing.assert_allclose(found[0]["depth"], 0.1, atol=1e-9)


def test_broken_bodies_are_refused_with_the_link_and_shape_named(service):
    negative = one_link_body("neg", box([1, -1, 1]))
    with pytest.raises(ModelError, match="link 'BASE' shape 0 \\(box\\): negative size"):
        service.call("add_body", name="neg", body=negative.to_wire())
    broken = one_link_body("broken", box_mesh([1, 1, 1]))
    broken.links[0].shapes[0].triangles[0, 0] = 99
    with pytest.raises(ModelError, match="triangle indices"):
        service.call("add_body", name="broken", body=broken.to_wire())
    with pytest.raises(RequestError, match="BodyInfo wire map"):
        service.call("add_body", name="junk", body={"name": "junk", "links": [{"nonsense": 1}]})
    with pytest.raises(RequestError, match="exactly one"):
        service.call("add_body", name="none")
    assert service.call("bodies") == []


def test_removing_a_body_drops_its_pairs(two_boxes):
    assert len(two_boxes.call("pairs")) == 1
    assert two_boxes.call("remove_body", name="b")["pairs_removed"] == 1
    assert two_boxes.call("pairs") == []
    assert [b["name"] for b in two_boxes.call("bodies")] == ["a"]
    with pytest.raises(RequestError, match="already"):
        two_boxes.call("add_body", name="a", body=one_link_body("a", box([1, 1, 1])).to_wire())


def test_pairs_can_be_removed_and_everything_cleared(two_boxes):
    two_boxes.call("add_body", name="c", body=one_link_body("c", box([1, 1, 1])).to_wire())
    two_boxes.call("add_pair", body1="c", body2="a", tolerance=0.01)
    assert {(p["body1"], p["body2"], p["tolerance"]) for p in two_boxes.call("pairs")} == {
        ("a", "b", 0.0),
        ("c", "a", 0.01),
    }
    assert two_boxes.call("remove_pair", body1="a", body2="c")["removed"] == 1  # either order names it
    found = two_boxes.call("contacts", poses={"c": pose([0.5, 0, 0])[None]})
    assert [(r["body1"], r["body2"]) for r in found] == [("a", "b")]  # c overlaps a but is unpaired now
    assert two_boxes.call("clear") is True
    assert two_boxes.call("bodies") == [] and two_boxes.call("pairs") == []


def test_contacts_can_be_capped_per_geom_pair(two_boxes):
    (capped,) = two_boxes.call("contacts", poses=at(pose(), pose([0.9, 0.0, 0.0])), max_contacts=1)
    assert len(capped["depth"]) == 1


def test_a_malformed_message_gets_an_error_and_the_service_keeps_serving(service):
    import zmq

    sock = zmq.Context.instance().socket(zmq.DEALER)
    sock.setsockopt(zmq.LINGER, 0)
    sock.connect(service.endpoint)
    try:
        sock.send(b"\xc1 not msgpack")
        assert sock.poll(10_000), "no reply to a malformed message"
        assert b"ProtocolError" in sock.recv()
    finally:
        sock.close()
    assert service.call("ping")["kind"] == "collision"


def test_without_a_nameserver_the_service_exits_naming_it(nameserver_process, tmp_path):
    address = nameserver_process.address
    nameserver_process.stop()
    proc = spawn(["run", "collision", "--nameserver", address], tmp_path / "lonely.log")
    try:
        assert proc.popen.wait(timeout=30) == 1
    finally:
        proc.stop()
    assert f"no answer from nameserver at {address}" in proc.log_text()


def test_shapes_of_zero_size_are_answered_or_refused_without_crashing(service):
    shapes = {
        "flat": box([0, 0, 0]),
        "sheet": box([1, 1, 0]),
        "pill": Shape("capsule", radius=0.1),
        "ball": Shape("sphere", radius=0.1),
        "mesh": box_mesh([0, 0, 0]),
    }
    for name, shape in shapes.items():
        service.call("add_body", name=name, body=one_link_body(name, shape).to_wire())
    names = list(shapes)
    for i, first in enumerate(names):
        for second in names[i + 1 :]:
            service.call("add_pair", body1=first, body2=second)
    assert len(service.call("distance")) == len(names) * (len(names) - 1) // 2
    assert len(service.call("intersect")) > 0  # all at the origin
    service.call("contacts")
    service.call("ray", origin=[0, 0, -1], direction=[0, 0, 1])
    # round shapes without radius (or cylinders without height) would abort ODE: refused by name
    for name, shape, problem in (
        ("dot", Shape("sphere"), "radius"),
        ("line", Shape("cylinder", height=1.0), "radius"),
        ("disc", Shape("cylinder", radius=1.0), "height"),
        ("tip", Shape("cone", radius=1.0), "height"),
    ):
        with pytest.raises(ModelError, match=f"link 'BASE' shape 0 \\({shape.kind}\\): {problem} must be positive"):
            service.call("add_body", name=name, body=one_link_body(name, shape).to_wire())
    assert service.call("ping")["kind"] == "collision"


def test_a_link_field_that_is_not_a_name_is_refused(two_boxes):
    with pytest.raises(RequestError, match="link1 must be a string") as refused:
        two_boxes.call("add_pair", body1="a", body2="b", link1=np.zeros(3))
    assert refused.value.field == "link1"
