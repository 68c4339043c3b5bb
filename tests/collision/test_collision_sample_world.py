"""The collision service on OpenHRP3's sample world (sample1.wrl standing on floor.wrl), checked
against the simulator's built-in contacts, and the simulator run with ``collision: service``
against the same run with ``builtin``."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import ode
import pytest
from collision_helpers import MODELS, collision_service, wait_registered
from collision_helpers import pose as pose_at
from launched_walks import launch_walk
from process_helpers import spawn

from hrpsim.engines.base import JointCommand
from hrpsim.engines.ode.engine import OdeEngine
from hrpsim.engines.ode.remote_contacts import RemoteContacts, model_link_poses
from hrpsim.errors import ModelError, SimulationError
from hrpsim.modelloader import load_body
from hrpsim.project import CollisionPair, ModelConfig, Project, WorldConfig

SAMPLE1 = MODELS / "openhrp3" / "model" / "sample1.wrl"
FLOOR = MODELS / "openhrp3" / "model" / "floor.wrl"
SAMPLE_POS = MODELS / "openhrp3" / "controller" / "SampleController" / "etc" / "Sample.pos"
WAIST_HEIGHT = 0.6682  # with the first posture of Sample.pos the soles reach 0.1 mm into the floor (top at z = 0)


@pytest.fixture(scope="module")
def bodies():
    return {"floor": load_body(FLOOR), "robot": load_body(SAMPLE1)}


def initial_joints(robot) -> dict[str, float]:
    first = [float(v) for v in SAMPLE_POS.read_text().split("\n", 1)[0].split()[1:]]
    return dict(zip(robot.joint_names, first, strict=True))


def sample_world(
    tmp: Path,
    bodies,
    *,
    self_collision: bool = False,
    waist: float = WAIST_HEIGHT,
    collision: str = "builtin",
    nameserver: str | None = None,
) -> OdeEngine:
    joints = initial_joints(bodies["robot"])
    models = [
        ModelConfig("floor", str(FLOOR), static=True, position=[0.0, 0.0, -0.1]),
        ModelConfig("robot", str(SAMPLE1), position=[0.0, 0.0, waist], joints=joints, drive="high_gain"),
    ]
    pairs = [CollisionPair("floor", "robot", friction=0.5)]
    if self_collision:
        pairs.append(CollisionPair("robot", "robot", self_collision=True))
    project = Project(
        path=str(tmp / "sample.yaml"),
        world=WorldConfig(timestep=0.001, collision=collision),
        models=models,
        collisions=pairs,
    )
    world = OdeEngine(project, bodies, nameserver=nameserver)
    robot = world.model("robot")
    world.apply("robot", JointCommand(q_ref=np.array([joints[n] for n in robot.joint_names])))
    return world


def builtin_geom_contacts(world: OdeEngine) -> list[tuple[str, np.ndarray, np.ndarray, float]]:
    """ODE's contacts between the floor's geoms and each robot link's geoms, from the simulator's
    own geom objects (the calls its built-in generator makes), as (link, position, normal, depth)."""
    floor, robot = world.model("floor"), world.model("robot")
    out = []
    for sim in robot.links:
        for g_robot in sim.geoms:
            for g_floor in floor.links[0].geoms:
                for c in ode.collide(g_floor, g_robot):
                    pos, normal, depth = c.getContactGeomParams()[:3]
                    out.append((sim.link.name, np.array(pos), np.array(normal), depth))
    return out


def service_contacts(client, world: OdeEngine, pairs) -> list[tuple[str, np.ndarray, np.ndarray, float]]:
    poses = {name: model_link_poses(world.model(name)) for name in ("floor", "robot")}
    out = []
    for record in client.call("contacts", poses=poses, pairs=pairs):
        for pos, normal, depth in zip(record["position"], record["normal"], record["depth"], strict=True):
            out.append((record["link2"], pos, normal, float(depth)))
    return out


def _sorted(contacts):
    return sorted(contacts, key=lambda c: (c[0], *np.round(c[1], 9)))


def test_sample_world_contacts_match_the_simulators_geoms(nameserver, tmp_path, bodies):
    world = sample_world(tmp_path, bodies)
    with collision_service(nameserver, tmp_path) as client:
        for name, body in bodies.items():
            client.call("add_body", name=name, body=body.to_wire())
        pairs = [{"body1": "floor", "body2": "robot"}]
        for tick in range(120):
            if tick % 40 == 0:
                expected = _sorted(builtin_geom_contacts(world))
                got = _sorted(service_contacts(client, world, pairs))
                assert [c[0] for c in got] == [c[0] for c in expected]
                assert {c[0] for c in got} == {"RLEG_ANKLE_R", "LLEG_ANKLE_R"}, "both soles, nothing else"
                for (_, p1, n1, d1), (_, p2, n2, d2) in zip(got, expected, strict=True):
                    np.testing.assert_allclose(p1, p2, atol=1e-9)
                    np.testing.assert_allclose(n1, n2, atol=1e-9)
                    assert math.isclose(d1, d2, abs_tol=1e-9)
                world.collide()
                assert world.contacts.count == len(got)  # the built-in generator made as many joints
                world.integrate()
            else:
                world.step()


def test_sample_world_self_collision_counts_match_the_builtin_generator(nameserver, tmp_path, bodies):
    world = sample_world(tmp_path, bodies, self_collision=True, waist=WAIST_HEIGHT - 0.005)
    world.collide()
    builtin = world.contacts.count
    assert builtin > 0
    with collision_service(nameserver, tmp_path) as client:
        service = sample_world(
            tmp_path,
            bodies,
            self_collision=True,
            waist=WAIST_HEIGHT - 0.005,
            collision="service",
            nameserver=nameserver,
        )
        try:
            assert isinstance(service.contacts, RemoteContacts)
            assert {b["name"] for b in client.call("bodies")} == {"floor", "robot"}
            service.collide()
            assert service.contacts.count == builtin
        finally:
            service.close()
        assert client.call("bodies") == [] and client.call("pairs") == []  # a closed world takes its bodies away


def test_sample_world_queries(nameserver, tmp_path, bodies):
    world = sample_world(tmp_path, bodies)
    poses = {name: model_link_poses(world.model(name)) for name in ("floor", "robot")}
    with collision_service(nameserver, tmp_path) as client:
        for name, body in bodies.items():
            client.call("add_body", name=name, body=body.to_wire())
        client.call("set_poses", poses=poses)
        # straight down from just below the waist: the floor's top face at z = 0
        down = client.call("ray", origin=[0.0, 0.5, 0.3], direction=[0.0, 0.0, -1.0])
        assert (down["body"], down["link"]) == ("floor", "WAIST")  # floor.wrl names its one link WAIST
        np.testing.assert_allclose(down["distance"], 0.3, atol=1e-9)
        # the hands are well above the floor; the soles touch it
        found = client.call(
            "distance",
            pairs=[
                {"body1": "robot", "link1": "RARM_WRIST_R", "body2": "floor"},
                {"body1": "robot", "link1": "RLEG_ANKLE_R", "body2": "floor"},
            ],
        )
        by_link = {r["link1"]: r for r in found}
        assert by_link["RARM_WRIST_R"]["distance"] > 0.2
        assert by_link["RLEG_ANKLE_R"]["distance"] <= 1e-3
        # a horizontal scan at waist height from in front of the robot sees the robot's body
        sensor = np.eye(4)
        sensor[:3, :3] = [[0.0, 0.0, 1.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]  # looks along -X (its -Z)
        sensor[:3, 3] = [1.0, 0.0, WAIST_HEIGHT]
        scan = client.call("scan", pose=sensor, angle_range=0.4, step=0.05, bodies=["robot"])
        middle = len(scan["angles"]) // 2
        assert scan["distances"][middle] < 1.0
        assert math.isinf(scan["distances"][0]) and math.isinf(scan["distances"][-1])


def test_runs_in_both_modes_agree(nameserver, tmp_path, bodies):
    """Same contacts tick by tick, robot ends within 1 mm, with ``collision: builtin`` and ``service``."""
    builtin = sample_world(tmp_path, bodies, waist=WAIST_HEIGHT + 0.01)  # drops 1 cm onto its feet
    with collision_service(nameserver, tmp_path):
        service = sample_world(tmp_path, bodies, waist=WAIST_HEIGHT + 0.01, collision="service", nameserver=nameserver)
        try:
            counts = []
            for _ in range(400):
                builtin.step()
                service.step()
                counts.append((builtin.contacts.count, service.contacts.count))
        finally:
            service.close()
    assert any(b > 0 for b, _ in counts), "the robot lands on the floor"
    assert [b for b, _ in counts] == [s for _, s in counts]
    end_b = builtin.read("robot").root_position
    end_s = service.read("robot").root_position
    assert np.linalg.norm(end_b - end_s) < 1e-3
    assert end_b[2] < WAIST_HEIGHT + 0.005  # it did come down


def test_the_walking_pattern_runs_the_same_in_both_modes(nameserver, tmp_path, bodies):
    """SampleController's joint pattern (high-gain) for 1 s: feet lift and land, contacts come and go
    (none at ticks 381 and 899, seven at 791), and the robot moves 4.6 cm, twice the 2 cm asked below."""
    rows = [np.array([float(v) for v in line.split()[1:]]) for line in SAMPLE_POS.read_text().splitlines()[:500]]
    builtin = sample_world(tmp_path, bodies)
    with collision_service(nameserver, tmp_path):
        service = sample_world(tmp_path, bodies, collision="service", nameserver=nameserver)
        try:
            counts = []
            for tick in range(1000):
                for world in (builtin, service):
                    world.apply("robot", JointCommand(q_ref=rows[tick // 2]))  # the pattern's rows are 2 ms apart
                    world.step()
                counts.append((builtin.contacts.count, service.contacts.count))
        finally:
            service.close()
    seen = {b for b, _ in counts}
    assert 0 in seen and max(seen) >= 2, "contacts came and went"
    assert [b for b, _ in counts] == [s for _, s in counts]
    start, end_b = np.array([0.0, 0.0, WAIST_HEIGHT]), builtin.read("robot").root_position
    assert np.linalg.norm(end_b[:2] - start[:2]) > 0.02  # the robot moved
    assert np.linalg.norm(end_b - service.read("robot").root_position) < 1e-3


def test_a_world_asking_for_the_service_without_one_says_so(nameserver, tmp_path, bodies):
    with pytest.raises(SimulationError, match=r"no collision service named 'collision'.*hrpsim run collision"):
        sample_world(tmp_path, bodies, collision="service", nameserver=nameserver)


def test_launched_walks_in_both_modes_agree(tmp_path, service_walk):
    """The whole stack on the walking example (sample1 on floor.wrl, SampleController's pattern through
    a controller process); hrpsim launch starts the collision process for ``collision: service``."""
    builtin = launch_walk(tmp_path, "builtin")
    service, service_run = service_walk
    assert builtin["error"] is None and service["error"] is None
    assert builtin["ticks"] == service["ticks"] == 1500
    end_b = np.array(builtin["robots"]["robot"]["root_end"])
    end_s = np.array(service["robots"]["robot"]["root_end"])
    start = np.array(builtin["robots"]["robot"]["root_start"])
    assert np.linalg.norm(end_b[:2] - start[:2]) > 0.02  # it walked (and stayed up: no error)
    assert np.linalg.norm(end_b - end_s) < 1e-3
    assert (service_run / "collision.log").exists()
    assert not (tmp_path / "run_builtin" / "collision.log").exists()


def test_bodies_added_by_model_file_through_the_modelloader(nameserver, tmp_path):
    loader = spawn(["run", "modelloader", "--nameserver", nameserver], tmp_path / "modelloader.log")
    try:
        wait_registered(nameserver, "modelloader", loader)
        with collision_service(nameserver, tmp_path) as client:
            added = client.call("add_body", name="robot", file=str(SAMPLE1))
            assert added["model"] == "SampleRobot" and len(added["links"]) == 30
            client.call("add_body", name="floor", file=str(FLOOR))
            client.call("set_poses", poses={"floor": np.array([pose_at([0.0, 0.0, -0.1])])})
            down = client.call("ray", origin=[0.0, 0.0, 1.0], direction=[0.0, 0.0, -1.0], bodies=["floor"])
            np.testing.assert_allclose(down["distance"], 1.0, atol=1e-9)
            broken = tmp_path / "broken.wrl"
            broken.write_text("#VRML V2.0 utf8\nDEF X Transform { children [ \n")
            with pytest.raises(ModelError, match=r"broken\.wrl"):
                client.call("add_body", name="broken", file=str(broken))
            assert [b["name"] for b in client.call("bodies")] == ["robot", "floor"]
    finally:
        loader.stop()


def crawler_world(tmp: Path, mode: str, nameserver: str | None = None) -> OdeEngine:
    """OpenHRP3's SampleCrawler world: crawler.wrl on env.wrl, both tracks driven at 0.5 m/s."""
    env, crawler = MODELS / "openhrp3" / "model" / "env.wrl", MODELS / "openhrp3" / "model" / "crawler.wrl"
    models = [
        ModelConfig("plane", str(env), static=True, position=[0.0, 0.0, -0.1]),
        ModelConfig("crawler", str(crawler), position=[-1.0, 0.0, 0.1]),
    ]
    project = Project(
        path=str(tmp / "crawler.yaml"),
        world=WorldConfig(timestep=0.001, collision=mode),
        models=models,
        collisions=[CollisionPair("plane", "crawler", friction=0.5)],
    )
    world = OdeEngine(project, {"plane": load_body(env), "crawler": load_body(crawler)}, nameserver=nameserver)
    world.apply("crawler", JointCommand(torque=[0.5, 0.5]))  # a crawler's command is its track speed
    return world


def test_the_crawler_world_runs_the_same_in_both_modes(nameserver, tmp_path):
    """Crawler tracks move their contacts' surface: the service's contacts must carry that too."""
    builtin = crawler_world(tmp_path, "builtin")
    with collision_service(nameserver, tmp_path):
        service = crawler_world(tmp_path, "service", nameserver)
        try:
            counts = []
            for _ in range(800):
                builtin.step()
                service.step()
                counts.append((builtin.contacts.count, service.contacts.count))
        finally:
            service.close()
    assert [b for b, _ in counts] == [s for _, s in counts]
    end_b = builtin.read("crawler").root_position
    assert end_b[0] > -1.0 + 0.3  # driven forward by its tracks
    assert np.linalg.norm(end_b - service.read("crawler").root_position) < 1e-3
