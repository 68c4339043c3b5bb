"""Faults of a stack started by hand (docs/faults.md): the simulator answers while a tick waits, a
controller ends on a signal whatever it is doing, a robot that fell through the world stops the
run, a dead modelloader fails a load quickly, bad run arguments are refused, statistics stay small."""

from __future__ import annotations

import math
import signal
import sys
import time

import numpy as np
import psutil
import pytest
from controller_helpers import Stack, write_controller, write_project
from process_helpers import ManagedProcess, spawn, wait_registered

from hrpsim.client import Client
from hrpsim.errors import HrpsimError, ModelError, PeerGone, RequestError
from hrpsim.simserver.controller_stats import ControllerStats
from hrpsim.summary_report import format_summary

SAMPLE_STAND = """
world: {{timestep: 0.002, end_time: {end_time}, sync: lockstep}}
{services}
models:
  - {{name: floor, file: {{models}}/floor.wrl, static: true, position: [0, 0, -0.1]}}
  - {{name: robot, file: {{models}}/sample1.wrl, position: [{x}, 0, 0.7235], drive: high_gain}}
collisions:
  - {{a: floor, b: robot}}
controllers:
{controllers}
"""

IDLE_CONTROLLER = """
from hrpsim.controllers import Controller


class Idle(Controller):
    def control(self, state):
        return None
"""


def sample_project(folder, *, end_time: float = 2.0, controllers: str = "  []", x: float = 0.0, services: str = ""):
    """sample1 standing on the floor (at ``x`` = 100 m it stands beside it, over nothing)."""
    return write_project(
        folder, SAMPLE_STAND.format(end_time=end_time, controllers=controllers, x=x, services=services)
    )


def test_the_simulator_answers_while_a_tick_waits_for_a_stopped_controller(nameserver, tmp_path):
    project = sample_project(
        tmp_path,
        controllers="  - {name: idle, robot: robot, command: external, period: 0.004, policy: stop, deadline: 30.0}",
    )
    idle = write_controller(tmp_path, "idle", IDLE_CONTROLLER)
    with Stack(tmp_path, nameserver, project) as stack:
        ctl = stack.controller(idle, name="idle")
        stack.sim.call("start", until=1.0)
        while stack.sim.call("status")["tick"] < 10:
            time.sleep(0.01)
        ctl.popen.send_signal(signal.SIGSTOP)
        try:
            waiting = []
            while not waiting:  # the tick under way when the signal came may still have been answered
                status = stack.sim.call("status", timeout=5.0)
                waiting = status["waiting_for"]
            tick = status["tick"]
            assert waiting == ["idle"] and status["running"] and not status["finished"]
            assert stack.sim.call("summary", timeout=5.0)["ticks"] == tick
            with pytest.raises(RequestError, match="waiting for controller"):
                stack.sim.call("set_link_data", robot="robot", root_position=[0, 0, 2.0], timeout=5.0)
            assert stack.sim.call("status", timeout=5.0)["tick"] == tick, "the tick waits for its controller"
        finally:
            ctl.popen.send_signal(signal.SIGCONT)
        summary = stack.wait_finished()
    assert summary["error"] is None and summary["sim_time"] == pytest.approx(1.0)


def wait_asking_the_nameserver(ctl: ManagedProcess, nameserver: str) -> None:
    """Until the controller holds a connection to the nameserver: past its start-up (its signal
    handlers are set before it connects), it is asking for a simulator."""
    port = int(nameserver.rsplit(":", 1)[1])
    deadline = time.monotonic() + 60.0
    while not any(c.raddr and c.raddr.port == port for c in psutil.Process(ctl.pid).net_connections("tcp")):
        assert ctl.popen.poll() is None, ctl.log_text()
        assert time.monotonic() < deadline, "the controller never asked the nameserver: " + ctl.log_text()
        time.sleep(0.02)


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_controller_waiting_for_its_simulator_ends_on_a_signal(nameserver, tmp_path, signum):
    idle = write_controller(tmp_path, "idle", IDLE_CONTROLLER)
    ctl = spawn(
        [
            "controller",
            str(idle),
            "--robot",
            "robot",
            "--name",
            "idle",
            "--nameserver",
            nameserver,
            "--connect-timeout",
            "120",
        ],
        tmp_path / "controller.log",
    )
    try:
        wait_asking_the_nameserver(ctl, nameserver)  # looking for a simulator (none will come)
        ctl.popen.send_signal(signum)
        code = ctl.popen.wait(30.0)  # far less than its connect timeout: the signal ended the wait
    finally:
        ctl.stop()
    assert code == 0, ctl.log_text()


def test_a_robot_that_falls_through_the_floor_stops_the_run_naming_it(nameserver, tmp_path):
    # beside the floor: the robot falls past it, as one does through a floor whose contacts gave way
    project = sample_project(tmp_path, end_time=5.0, x=100.0, services="services: {loader: local}")
    sim = spawn(["run", "simserver", "--project", str(project), "--nameserver", nameserver], tmp_path / "simserver.log")
    try:
        entry = wait_registered(nameserver, "simserver", sim)
        with Client(entry["endpoint"], peer="simserver", timeout=10.0) as client:
            client.call("start")
            while not client.call("status")["finished"]:
                time.sleep(0.05)
            summary = client.call("summary")
    finally:
        sim.stop()
    error = summary["error"] or ""
    assert "'robot'" in error and "link" in error and "below the lowest point" in error, summary
    assert summary["sim_time"] < 5.0 and summary["robots"]["robot"]["min_root_z"] < -5.0
    printed = format_summary(summary)
    assert "finished without error" not in printed and "fell through the world" in printed


def test_init_without_a_modelloader_fails_quickly_and_the_simulator_keeps_serving(nameserver, tmp_path):
    project = sample_project(tmp_path)
    with Stack(tmp_path, nameserver, project) as stack:
        stack.procs[0].kill()  # the modelloader; its registration lives on until it expires
        with pytest.raises(ModelError, match="modelloader"):
            stack.sim.call("init", timeout=30.0)  # within the call's timeout: the load gave up by itself
        assert stack.sim.call("status", timeout=5.0)["tick"] == 0


def test_start_refuses_an_end_time_that_is_not_a_finite_future_time(nameserver, tmp_path):
    project = sample_project(tmp_path, services="services: {loader: local}")
    sim = spawn(["run", "simserver", "--project", str(project), "--nameserver", nameserver], tmp_path / "simserver.log")
    try:
        entry = wait_registered(nameserver, "simserver", sim)
        with Client(entry["endpoint"], peer="simserver", timeout=10.0) as client:
            for until in (math.nan, math.inf, -1.0, "soon"):  # one simulator: a refused start leaves it as it was
                with pytest.raises(RequestError, match="until must be a finite sim time"):
                    client.call("start", until=until)
            for bad in (
                {"q": [[1.0, 2.0], [3.0]]},
                {"q": {"a": 1}},
                {"root_rotation": [1, 2, 3]},
                {"root_position": "here"},
            ):
                with pytest.raises(RequestError):
                    client.call("forward_kinematics", robot="robot", **bad)
            assert client.call("status")["error"] is None
    finally:
        sim.stop()


def test_round_trip_statistics_stay_the_same_size_however_long_the_run():
    stats = ControllerStats()
    bins = len(stats.rtt.counts)
    rng = np.random.default_rng(14)
    for value in rng.lognormal(mean=6.0, sigma=1.0, size=200_000):
        stats.rtt.add(float(value))
    assert len(stats.rtt.counts) == bins and stats.rtt.total == 200_000
    assert stats.rtt.percentile(50) == pytest.approx(math.exp(6.0), rel=0.03)


def test_a_client_gives_up_on_an_address_nobody_serves():
    with (
        Client("tcp://127.0.0.1:9", peer="nobody", timeout=30.0, connect_timeout=0.5) as client,
        pytest.raises(HrpsimError, match="does not accept connections"),
    ):
        client.call("ping")


def test_a_client_told_that_nothing_listens_gives_up_without_waiting_its_connect_timeout():
    # A stale registration of a dead service: its port refuses. The call ends on the refusal, not
    # after the connect timeout (which would give "waited 60 s" instead).
    with (
        Client("tcp://127.0.0.1:9", peer="nobody", timeout=60.0, connect_timeout=60.0) as client,
        pytest.raises(PeerGone, match=r"does not accept connections \(refused: nothing listens there\)"),
    ):
        client.call("ping")


def test_a_failing_child_is_restarted_a_bounded_number_of_times_and_a_clean_exit_is_not(tmp_path):
    from hrpsim.supervisor import Child, RestartPolicy, Supervisor

    sup = Supervisor(echo=None)
    failing = sup.start(
        Child(
            "failing",
            [sys.executable, "-c", "raise SystemExit(3)"],
            tmp_path / "failing.log",
            policy=RestartPolicy("on-failure", 2),
        )
    )
    clean = sup.start(
        Child("clean", [sys.executable, "-c", "pass"], tmp_path / "clean.log", policy=RestartPolicy("on-failure", 2))
    )
    pids = {failing.pid}
    try:
        deadline = time.monotonic() + 60
        while not (failing.lost and clean.lost) and time.monotonic() < deadline:
            for child in sup.died():
                sup.schedule_restart(child)
            pids.update(c.pid for c in sup.due_restarts())
            time.sleep(0.05)
    finally:
        sup.stop_all()
    assert failing.lost and failing.restarts == 2 and len(pids) == 3
    assert clean.lost and clean.restarts == 0 and clean.returncode == 0
    assert RestartPolicy.delay(1) < RestartPolicy.delay(2) < RestartPolicy.delay(3)
    assert RestartPolicy.delay(50) == RestartPolicy.delay(51), "the delay is capped"
