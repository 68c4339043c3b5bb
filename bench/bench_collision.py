"""Collision service on the sample world: contact queries per second; per-tick cost of `collision: service` / `builtin`.

OdeEngine: sample1.wrl (30 links, 50 primitives) standing on floor.wrl; pairs floor-robot plus the
robot's self-collision (non-adjacent links): 30 + 406 = 436 link pairs.
`queries_per_s`: `contacts` requests to a real `hrpsim run collision` process over tcp loopback,
each carrying new poses of all 30 links (postures from SampleController's Sample.pos, as the
simulator sends them). `distance_queries_per_s`: the same for `distance` on the 30 floor-robot
pairs. Baseline `inprocess_queries_per_s`: the same contact query answered in this process,
without the wire.
`service_tick_ratio` = ms per simulator tick with contacts from the service (RemoteContacts) /
ms per tick with ODE's built-in collision; both worlds (floor-robot pair, high-gain hold, dropped
1 cm onto the floor) are stepped in this process in alternating blocks of the same run.
`builtin_tick_ms`, `service_tick_ms`: the two per-tick costs; `root_end_difference_mm`: how far
apart the two runs' robots end.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from procs import REPO, nameserver_process

from hrpsim.client import Client
from hrpsim.collision.collision_service import CollisionService
from hrpsim.collision.kinematics import link_poses
from hrpsim.engines.base import JointCommand
from hrpsim.engines.ode.engine import OdeEngine
from hrpsim.engines.ode.remote_contacts import RemoteContacts
from hrpsim.errors import NotFound
from hrpsim.modelloader import load_body
from hrpsim.naming import NameClient
from hrpsim.project import CollisionPair, ModelConfig, Project, WorldConfig
from hrpsim.transforms import pose

MODELS = REPO / "models"
SAMPLE1 = MODELS / "openhrp3" / "model" / "sample1.wrl"
FLOOR = MODELS / "openhrp3" / "model" / "floor.wrl"
SAMPLE_POS = MODELS / "openhrp3" / "controller" / "SampleController" / "etc" / "Sample.pos"
WAIST_HEIGHT = 0.6682
QUERIES = 400
TICKS_PER_BLOCK = 200
BLOCKS = 3


def start_collision(nameserver: str) -> tuple[subprocess.Popen, str]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "HRPSIM_LOG_LEVEL": "WARNING"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "hrpsim", "run", "collision", "--nameserver", nameserver],
        env=env,
        stdout=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = time.monotonic() + 20
    with NameClient(nameserver) as ns:
        while True:
            try:
                return proc, ns.endpoint_of("collision")
            except NotFound:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("the collision service did not start") from None
                time.sleep(0.05)


def postures(robot) -> list[np.ndarray]:
    rows = SAMPLE_POS.read_text().splitlines()[:: max(1, 4451 // QUERIES)][:QUERIES]
    root = pose([0.0, 0.0, WAIST_HEIGHT])
    out = []
    for row in rows:
        values = [float(v) for v in row.split()[1:]]
        out.append(link_poses(robot, root, dict(zip(robot.joint_names, values, strict=True))))
    return out


def rate(call, items) -> float:
    start = time.perf_counter()
    for item in items:
        call(item)
    return len(items) / (time.perf_counter() - start)


def query_rates(client: Client, bodies) -> dict[str, float]:
    for name, body in bodies.items():
        client.call("add_body", name=name, body=body.to_wire())
    client.call("set_poses", poses={"floor": link_poses(bodies["floor"])})
    client.call("add_pair", body1="floor", body2="robot")
    client.call("add_pair", body1="robot", body2="robot")
    local = CollisionService(register=False)
    for name, body in bodies.items():
        local.add_body(name, body.to_wire())
    local.set_poses({"floor": link_poses(bodies["floor"])})
    local.add_pair("floor", "robot")
    local.add_pair("robot", "robot")
    frames = postures(bodies["robot"])
    remote = rate(lambda p: client.call("contacts", poses={"robot": p}), frames)
    inprocess = rate(lambda p: local.contacts(poses={"robot": p}), frames)
    floor_pairs = [{"body1": "floor", "body2": "robot"}]
    distance = rate(lambda p: client.call("distance", poses={"robot": p}, pairs=floor_pairs), frames)
    local.close()
    return {
        "queries_per_s": remote,
        "inprocess_queries_per_s": inprocess,
        "distance_queries_per_s": distance,
        "pairs": float(len(client.call("pairs"))),
    }


def sample_world(bodies, tmp: str, collision: str = "builtin", nameserver: str | None = None) -> OdeEngine:
    robot = bodies["robot"]
    first = [float(v) for v in SAMPLE_POS.read_text().split("\n", 1)[0].split()[1:]]
    joints = dict(zip(robot.joint_names, first, strict=True))
    models = [
        ModelConfig("floor", str(FLOOR), static=True, position=[0.0, 0.0, -0.1]),
        ModelConfig("robot", str(SAMPLE1), position=[0.0, 0.0, WAIST_HEIGHT + 0.01], joints=joints, drive="high_gain"),
    ]
    project = Project(
        path=str(Path(tmp) / "sample.yaml"),
        world=WorldConfig(timestep=0.001, collision=collision),
        models=models,
        collisions=[CollisionPair("floor", "robot", friction=0.5)],
    )
    world = OdeEngine(project, bodies, nameserver=nameserver)
    world.apply("robot", JointCommand(q_ref=np.array([joints[n] for n in world.model("robot").joint_names])))
    return world


def tick_costs(nameserver: str, bodies) -> dict[str, float]:
    builtin = sample_world(bodies, "/tmp")
    service = sample_world(bodies, "/tmp", collision="service", nameserver=nameserver)
    assert isinstance(service.contacts, RemoteContacts)
    spent = {"builtin": 0.0, "service": 0.0}
    try:
        for _ in range(BLOCKS):
            for name, world in (("builtin", builtin), ("service", service)):
                start = time.perf_counter()
                for _ in range(TICKS_PER_BLOCK):
                    world.step()
                spent[name] += time.perf_counter() - start
    finally:
        service.close()
    ticks = BLOCKS * TICKS_PER_BLOCK
    drift = float(np.linalg.norm(builtin.read("robot").root_position - service.read("robot").root_position))
    return {
        "service_tick_ratio": spent["service"] / spent["builtin"],
        "builtin_tick_ms": spent["builtin"] / ticks * 1e3,
        "service_tick_ms": spent["service"] / ticks * 1e3,
        "root_end_difference_mm": drift * 1e3,
    }


def run() -> dict[str, float]:
    bodies = {"floor": load_body(FLOOR), "robot": load_body(SAMPLE1)}
    with nameserver_process() as nameserver:
        proc, endpoint = start_collision(nameserver)
        try:
            with Client(endpoint, peer="collision", timeout=30.0) as client:
                figures = query_rates(client, bodies)
                client.call("clear")
            figures.update(tick_costs(nameserver, bodies))
        finally:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(10)
    return figures
