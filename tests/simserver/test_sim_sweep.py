"""Simulator fixes found on a careful read: the robots a simulator publishes, a new project that
reconfigures the whole loop, and two controllers on one robot."""

from __future__ import annotations

import time

import zmq
from controller_helpers import HubUnderTest, kinematic_project, sr1_body, write_controller
from process_helpers import spawn, wait_registered
from sim_helpers import BOX_URDF, FLOOR_URDF

from hrpsim import tick_protocol as proto
from hrpsim.client import Client


def _box_project(folder, robot: str, *, sync: str = "lockstep", publish_every: int = 10, end_time: float = 30.0):
    folder.mkdir(exist_ok=True)
    (folder / "box.urdf").write_text(BOX_URDF.format(mass=1.0, i=0.08 / 12))
    (folder / "floor.urdf").write_text(FLOOR_URDF)
    path = folder / "p.yaml"
    path.write_text(
        f"world: {{timestep: 0.001, end_time: {end_time}, sync: {sync}, publish_every: {publish_every}}}\n"
        "services: {loader: local}\n"
        "models:\n  - {name: floor, file: floor.urdf, static: true}\n"
        f"  - {{name: {robot}, file: box.urdf, position: [0, 0, 0.1]}}\n"
    )
    return path


def test_a_controller_finds_the_simulator_that_has_its_robot_among_two(nameserver, tmp_path):
    sims = [
        spawn(
            [
                "run",
                "simserver",
                "--project",
                str(_box_project(tmp_path / name, robot)),
                "--name",
                name,
                "--nameserver",
                nameserver,
            ],
            tmp_path / f"{name}.log",
        )
        for name, robot in (("sim_a", "box1"), ("sim_b", "box2"))
    ]
    controller = write_controller(
        tmp_path,
        "idle",
        """
        from hrpsim.controllers import Controller

        class Idle(Controller):
            def control(self, state):
                return None
    """,
    )
    ctl = None
    try:
        entries = [wait_registered(nameserver, name, proc) for name, proc in zip(("sim_a", "sim_b"), sims, strict=True)]
        assert [e["metadata"]["robots"] for e in entries] == [["box1"], ["box2"]]
        ctl = spawn(
            ["controller", str(controller), "--robot", "box2", "--name", "idle", "--nameserver", nameserver],
            tmp_path / "controller.log",
        )
        with Client(entries[1]["endpoint"], peer="sim_b", timeout=5.0) as sim_b:
            deadline = time.monotonic() + 30
            while "idle" not in sim_b.call("summary")["controllers"]:
                assert time.monotonic() < deadline, ctl.log_text()
                time.sleep(0.1)
            assert sim_b.call("summary")["controllers"]["idle"]["attached"] is True
    finally:
        if ctl is not None:
            ctl.stop()
        for proc in sims:
            proc.stop()


def test_loading_a_realtime_project_makes_the_loop_realtime_and_takes_its_publish_rate(nameserver, tmp_path):
    lockstep = _box_project(tmp_path / "a", "box", publish_every=10, end_time=0.05)
    realtime = _box_project(tmp_path / "b", "box", sync="realtime", publish_every=5, end_time=0.05)
    sim = spawn(["run", "simserver", "--project", str(lockstep), "--nameserver", nameserver], tmp_path / "sim.log")
    try:
        entry = wait_registered(nameserver, "simserver", sim)
        with Client(entry["endpoint"], peer="simserver", timeout=10.0) as client:
            client.call("init", project=str(realtime))
            client.call("start")
            deadline = time.monotonic() + 30
            while not client.call("status")["finished"]:
                assert time.monotonic() < deadline, sim.log_text()
                time.sleep(0.02)
            summary = client.call("summary")
        assert summary["timing"] is not None and summary["timing"]["jitter_p50_us"] is not None  # paced
        assert summary["published"] == 10  # 50 ticks, a frame every 5
    finally:
        sim.stop()


def test_a_second_controller_for_a_driven_robot_is_refused_unless_the_project_lists_both(nameserver, tmp_path):
    body = sr1_body()
    project = kinematic_project(tmp_path, [])
    with HubUnderTest(nameserver, project, body) as sim:
        first, second = (sim.context.socket(zmq.DEALER) for _ in range(2))
        for sock, name in ((first, "one"), (second, "two")):
            sock.connect(sim.hub.endpoint)
            sock.send(proto.hello(name, "robot"))
            sim.hub.wait_for_controllers(["nobody"], 0.3)
        assert first.poll(5000) and proto.decode(first.recv(), expect=proto.TO_CONTROLLER)["type"] == "welcome"
        assert second.poll(5000)
        refusal = proto.decode(second.recv(), expect=proto.TO_CONTROLLER)
        assert refusal["type"] == "error" and refusal["fatal"] and refusal["field"] == "controller"
        assert "already driven by controller 'one'" in refusal["message"]
        assert sim.hub.attached == ["one"]
    listed = kinematic_project(tmp_path, [{"name": "one"}, {"name": "two"}])
    with HubUnderTest(nameserver, listed, body) as sim:
        socks = [sim.context.socket(zmq.DEALER) for _ in range(2)]
        for sock, name in zip(socks, ("one", "two"), strict=True):
            sock.connect(sim.hub.endpoint)
            sock.send(proto.hello(name, "robot"))
        assert sim.hub.wait_for_controllers(["one", "two"], 5.0) == []
