"""A run's life from start to bye, as a user runs the pieces by hand: the README's sequence, the
controller's default name, and a refused hello that never touches another connection."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable

import zmq
from controller_helpers import EXAMPLES, HubUnderTest, kinematic_project, sr1_body
from process_helpers import HRPSIM, REPO, spawn, wait_registered

from hrpsim import tick_protocol as proto
from hrpsim.client import Client


def _sim(args: list[str], nameserver: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*HRPSIM, "sim", "--nameserver", nameserver, *args], cwd=REPO, capture_output=True, text=True, timeout=60
    )


def _reply(sim: HubUnderTest, sock: zmq.Socket) -> dict:
    """Serve the hub until ``sock`` has an answer; that answer."""
    deadline = time.monotonic() + 5.0
    while not sock.poll(0):
        assert time.monotonic() < deadline, "no answer from the hub"
        sim.hub.wait_for_controllers(["nobody"], 0.01)
    return proto.decode(sock.recv(), expect=proto.TO_CONTROLLER)


def _serve_until(sim: HubUnderTest, condition: Callable[[], bool], what: str) -> None:
    """Serve the hub (hellos, connections' disconnect events) until ``condition`` holds."""
    deadline = time.monotonic() + 10.0
    while not condition():
        assert time.monotonic() < deadline, f"{what} was never handled"
        sim.hub.receive(0.01)


def _refused_disconnect_handled(sim: HubUnderTest) -> bool:
    """The refused connection's disconnect event has come and been handled: the hub's book of
    connections by socket number holds at most the attached controller's (none if that event wrongly
    detached it), and no late event of a reused socket number is still expected. Until then, that
    event could still detach the wrong controller."""
    wire = sim.hub.wire
    return len(wire._fd_owner) <= 1 and not any(wire._stale_disconnects.values())


def test_the_by_hand_sequence_ends_with_the_controller_leaving_on_its_own(nameserver, tmp_path):
    loader = spawn(["run", "modelloader", "--nameserver", nameserver], tmp_path / "loader.log")
    sim = spawn(
        [
            "run",
            "simserver",
            "--project",
            str(EXAMPLES / "sample_hold.yaml"),
            "--until",
            "0.4",
            "--nameserver",
            nameserver,
        ],
        tmp_path / "sim.log",
    )
    controller = None
    try:
        wait_registered(nameserver, "modelloader", loader)
        entry = wait_registered(nameserver, "simserver", sim)
        controller = spawn(
            [
                "controller",
                str(EXAMPLES / "controllers" / "hold_pose.py"),
                "--robot",
                "robot",
                "--nameserver",
                nameserver,
            ],
            tmp_path / "controller.log",
        )
        wait_registered(nameserver, "hold", controller)  # the project's name for the robot's controller
        started = _sim(["start"], nameserver)
        assert started.returncode == 0, started.stderr
        assert controller.popen.wait(timeout=120) == 0, controller.log_text()
        assert "the run reached its end at t=0.4000 s" in controller.log_text()
        # same host: the Unix channel, not tcp
        assert f"at {entry['metadata']['controllers_unix']}" in controller.log_text()
        assert "interrupted" not in controller.log_text()
        status = _sim(["status"], nameserver)
        assert "tick 200, ended: reached its end time, 0.4 s" in status.stdout
        with Client(entry["endpoint"], peer="simserver", timeout=5.0) as client:
            report = client.call("summary")["controllers"]["hold"]
        assert report["ticks"] == 200 and report["missed"] == 0
    finally:
        for proc in (controller, sim, loader):
            if proc is not None:
                proc.stop()


def test_sim_step_and_reset_from_the_command_line(nameserver, tmp_path):
    sim = spawn(
        ["run", "simserver", "--project", str(EXAMPLES / "sample_stand.yaml"), "--nameserver", nameserver],
        tmp_path / "sim.log",
    )
    loader = spawn(["run", "modelloader", "--nameserver", nameserver], tmp_path / "loader.log")
    try:
        wait_registered(nameserver, "simserver", sim, timeout=60)
        assert "tick 5, paused" in _sim(["step", "5"], nameserver).stdout
        assert "tick 0, paused" in _sim(["reset"], nameserver).stdout
        stopped = _sim(["stop"], nameserver)
        assert stopped.returncode == 0 and sim.popen.wait(timeout=30) == 0
        missing = _sim(["status"], nameserver)
        assert missing.returncode == 1 and "simserver" in missing.stderr
    finally:
        sim.stop()
        loader.stop()


def test_a_refused_hello_never_detaches_the_next_controller(nameserver, tmp_path):
    body = sr1_body()
    project = kinematic_project(tmp_path, [{"name": "good", "policy": "hold"}])
    with HubUnderTest(nameserver, project, body) as sim:
        for attempt in range(20):
            bad = sim.context.socket(zmq.DEALER)
            bad.connect(sim.hub.endpoint)
            bad.send(proto.hello("bad", "no_such_robot"))
            assert _reply(sim, bad)["type"] == "error"
            bad.close(linger=0)
            good = sim.context.socket(zmq.DEALER)
            good.connect(sim.hub.endpoint)
            good.send(proto.hello("good", "robot"))
            assert sim.hub.wait_for_controllers(["good"], 5.0) == []
            _serve_until(sim, lambda: _refused_disconnect_handled(sim), "the refused disconnect")
            assert sim.hub.attached == ["good"], f"attempt {attempt}: {sim.hub.summary()['good']['events']}"
            good.close(linger=0)
            _serve_until(sim, lambda: sim.hub.attached == [], "good's disconnect")  # before the next try
