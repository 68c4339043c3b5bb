"""The simulator service across real processes: run control, data, errors, the state stream."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import zmq
from sim_helpers import start_simserver, wait_finished, write_box_drop_project

from hrpsim.codec import CODEC
from hrpsim.errors import ConfigError, NotFound, RequestError, SimulationError


@pytest.fixture
def sim(tmp_path: Path, nameserver: str) -> Iterator[tuple]:
    project = write_box_drop_project(tmp_path, publish_every=5)
    proc, client, entry = start_simserver(tmp_path, nameserver, project)
    try:
        yield proc, client, entry
    finally:
        client.close()
        proc.stop()


def test_box_drop_run_gives_a_summary_that_shows_the_fall(sim: tuple) -> None:
    proc, client, entry = sim
    assert entry["kind"] == "simserver"
    assert entry["metadata"]["state"].startswith("tcp://")
    assert entry["metadata"]["controllers"].startswith("tcp://")
    assert client.call("start")["running"] is True
    status = wait_finished(client)
    assert status["error"] is None and status["time"] == pytest.approx(1.5)
    summary = client.call("summary")
    box = summary["robots"]["box"]
    assert box["root_start"] == pytest.approx([0.0, 0.0, 1.0])
    assert box["root_end"][2] == pytest.approx(0.1, abs=2e-3)  # resting on its 0.2 m side
    assert 0.09 < box["min_root_z"] <= box["root_end"][2] + 1e-3
    assert summary["ticks"] == 1500 and summary["error"] is None and summary["controllers"] == {}
    assert client.call("ping")["kind"] == "simserver"  # still serving after the run
    assert proc.popen.poll() is None
    client.call("quit")
    assert proc.popen.wait(15) == 0, proc.log_text()


def test_step_state_link_data_and_kinematics_ops(sim: tuple) -> None:
    _, client, _ = sim
    status = client.call("step", n=100)
    assert status["tick"] == 100
    state = client.call("state", robot="box")
    assert state["root_velocity"][2] == pytest.approx(-9.8 * 0.1, abs=1e-9)
    client.call("set_link_data", robot="box", root_position=[1.0, 2.0, 3.0], root_velocity=[0, 0, 0, 0, 0, 1.0])
    link = client.call("get_link_data", robot="box", link="body")
    assert link["position"] == pytest.approx([1.0, 2.0, 3.0])
    assert link["angular_velocity"] == pytest.approx([0.0, 0.0, 1.0])
    fk = client.call("forward_kinematics", robot="box", root_position=[0.0, 0.0, 5.0])
    assert fk["links"] == ["body"] and fk["positions"][0] == pytest.approx([0.0, 0.0, 5.0])
    frame = client.call("world_state")
    assert frame["bodies"]["box"]["poses"][0][:3] == pytest.approx([1.0, 2.0, 3.0])
    client.call("reset")
    assert client.call("state", robot="box")["root_position"] == pytest.approx([0.0, 0.0, 1.0])


def test_bad_requests_get_errors_naming_the_field_and_the_service_lives_on(sim: tuple) -> None:
    _, client, _ = sim
    with pytest.raises(NotFound, match="no model named 'robot'"):
        client.call("state", robot="robot")
    with pytest.raises(RequestError, match="position: expected 3 numbers, got 2"):
        client.call("set_link_data", robot="box", root_position=[0.0, 1.0])
    with pytest.raises(RequestError, match="non-finite"):
        client.call("set_external_force", robot="box", link="body", force=[float("nan"), 0.0, 0.0])
    with pytest.raises(RequestError, match="static"):
        client.call("command", robot="floor", torque=[])
    with pytest.raises(RequestError, match="unknown operation"):
        client.call("explode")
    with pytest.raises(RequestError, match="unknown argument") as unknown:
        client.call("state", robot="box", robto="box")
    assert unknown.value.field == "robto"  # the field crosses the wire beside the message
    assert client.call("step", n=1)["tick"] == 1


def test_exploding_state_stops_the_run_with_an_error_and_the_process_lives_on(sim: tuple) -> None:
    proc, client, _ = sim
    client.call("set_external_force", robot="box", link="body", force=[0.0, 0.0, 1e9])  # the most allowed
    client.call("start")
    status = wait_finished(client)
    assert "model 'box' link 'body'" in status["error"]
    assert "model 'box' link 'body'" in client.call("summary")["error"]
    with pytest.raises(SimulationError, match="reset first"):
        client.call("start")
    assert np.all(np.isfinite(client.call("state", robot="box")["root_position"]))
    assert proc.popen.poll() is None
    client.call("reset")
    client.call("set_external_force", robot="box", link="body", force=[0.0, 0.0, 0.0])
    assert client.call("step", n=10)["error"] is None


def test_world_state_stream_is_decimated_and_never_waits_for_subscribers(sim: tuple) -> None:
    _, client, entry = sim
    ctx = zmq.Context.instance()
    reader, idle = ctx.socket(zmq.SUB), ctx.socket(zmq.SUB)
    try:
        for sock in (reader, idle):
            sock.setsockopt(zmq.LINGER, 0)
            sock.setsockopt(zmq.SUBSCRIBE, b"world")
            sock.setsockopt(zmq.RCVHWM, 1)
            sock.connect(entry["metadata"]["state"])
        # The idle subscriber never reads: the run must finish all the same.
        client.call("start")
        assert reader.poll(10_000), "no world-state frame within 10 s"
        topic, payload = reader.recv_multipart()
        frame = CODEC.decode(payload)
        assert topic == b"world" and frame["tick"] % 5 == 0
        assert set(frame["bodies"]) == {"floor", "box"}
        assert frame["bodies"]["box"]["poses"].shape == (1, 7)
        assert wait_finished(client)["error"] is None
        assert client.call("summary")["published"] == 1500 // 5
    finally:
        reader.close()
        idle.close()


def test_a_controller_process_drives_the_robot_in_lockstep(tmp_path: Path, nameserver: str) -> None:
    from process_helpers import REPO, spawn
    from sim_helpers import pendulum_urdf_project

    project = pendulum_urdf_project(tmp_path, controller="hold", end_time=1.0, start_angle=0.3)
    proc, client, _ = start_simserver(tmp_path, nameserver, project)
    controller = spawn(
        [
            "controller",
            str(REPO / "examples" / "controllers" / "hold_pose.py"),
            "--robot",
            "pend",
            "--name",
            "hold",
            "--nameserver",
            nameserver,
            "-o",
            "p_gain=400",
            "-o",
            "d_gain=20",
        ],
        tmp_path / "controller.log",
    )
    try:
        client.call("start")  # waits for the project's controller to attach, then runs
        status = wait_finished(client)
        assert status["error"] is None, controller.log_text()
        summary = client.call("summary")
        assert summary["controllers"]["hold"]["ticks"] == 1000
        assert summary["controllers"]["hold"]["missed"] == 0
        # Held by a PD of 400 N m/rad against m g d sin(0.3) = 0.72 N m: off by under 0.01 rad.
        assert client.call("state", robot="pend")["q"][0] == pytest.approx(0.3, abs=0.01)
    finally:
        client.close()
        proc.stop()
        controller.stop()


def test_init_loads_another_project_into_the_running_service(sim: tuple, tmp_path: Path) -> None:
    from sim_helpers import pendulum_urdf_project

    _, client, _ = sim
    other = pendulum_urdf_project(tmp_path, controller="unused", end_time=0.5, start_angle=0.2)
    status = client.call("init", project=str(other))
    assert status["tick"] == 0 and status["end_time"] == pytest.approx(0.5)
    models = client.call("models")
    assert set(models) == {"pend"} and models["pend"]["joints"] == ["swing"]
    assert client.call("state", robot="pend")["q"] == pytest.approx([0.2])
    with pytest.raises(ConfigError, match=r"missing\.yaml: no such file"):
        client.call("init", project=str(tmp_path / "missing.yaml"))
    assert set(client.call("models")) == {"pend"}  # a failed init leaves the world as it was


def test_after_init_the_new_projects_controllers_attach_and_run(sim: tuple, tmp_path: Path, nameserver: str) -> None:
    from process_helpers import REPO, spawn
    from sim_helpers import pendulum_urdf_project

    _, client, _ = sim
    client.call(
        "init", project=str(pendulum_urdf_project(tmp_path, controller="swinger", end_time=0.3, start_angle=0.1))
    )
    assert set(client.call("summary")["controllers"]) == {"swinger"}, "the old project's controllers are gone"
    controller = spawn(
        [
            "controller",
            str(REPO / "examples" / "controllers" / "hold_pose.py"),
            "--robot",
            "pend",
            "--name",
            "swinger",
            "--nameserver",
            nameserver,
        ],
        tmp_path / "swinger.log",
    )
    try:
        client.call("start")
        status = wait_finished(client)
        assert status["error"] is None, controller.log_text()
        assert client.call("summary")["controllers"]["swinger"]["ticks"] == 300
    finally:
        controller.stop()
