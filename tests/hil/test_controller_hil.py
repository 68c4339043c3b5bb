"""The hardware-in-the-loop stand-in: the same controller program runs against it unchanged."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest
from controller_helpers import EXAMPLES, MODELS, wait_registered, write_controller
from process_helpers import REPO, ManagedProcess, spawn

from hrpsim.client import Client

ANGLES = MODELS / "openhrp3" / "controller" / "PA10Controller" / "etc" / "angle.dat"


def run_stand_in(tmp_path, nameserver, extra: list[str], controller, until: float) -> dict:
    log = tmp_path / "hil.log"
    with open(log, "wb") as out:
        popen = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "hrpsim",
                "run",
                "hil",
                "--project",
                str(EXAMPLES / "pa10.yaml"),
                "--robot",
                "pa10",
                "--nameserver",
                nameserver,
                "--local-loader",
                "--lockstep",
                *extra,
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
            cwd=REPO,
            start_new_session=True,
        )
    stand_in = ManagedProcess(popen, log)
    ctl = None
    try:
        entry = wait_registered(nameserver, "hil", stand_in)
        assert entry["kind"] == "simserver" and entry["metadata"]["hil"] is True
        ctl = spawn(
            ["controller", str(controller), "--robot", "pa10", "--name", "pa10_follow", "--nameserver", nameserver],
            tmp_path / "controller.log",
        )
        wait_registered(nameserver, "pa10_follow", ctl)
        with Client(entry["endpoint"], peer="hil", timeout=5.0) as hil_client:
            hil_client.call("start", until=until)
            deadline = time.monotonic() + 60
            while not hil_client.call("status")["finished"]:
                assert time.monotonic() < deadline, stand_in.log_text()
                time.sleep(0.05)
            return hil_client.call("summary")
    finally:
        if ctl is not None:
            ctl.stop()
        stand_in.stop()


def test_the_pa10_controller_runs_unchanged_against_the_stand_in(nameserver, tmp_path):
    summary = run_stand_in(tmp_path, nameserver, [], EXAMPLES / "controllers" / "pa10_follow.py", 0.5)
    report = summary["controllers"]["pa10_follow"]
    assert summary["error"] is None and summary["ticks"] == 500
    assert report["ticks"] == 500 and report["errors"] == 0 and report["missed"] == 0


def test_replayed_angles_reach_the_controller(nameserver, tmp_path):
    out = tmp_path / "deviation.txt"
    recorder = write_controller(
        tmp_path,
        "recorder",
        f"""
        import numpy as np
        from hrpsim.controllers import Controller
        from hrpsim.motion_data import read_motion

        class Recorder(Controller):
            def start(self, body):
                self.angles = read_motion({str(ANGLES)!r}, joints=9)
                self.worst = 0.0

            def control(self, state):
                if state.tick > 0:
                    self.worst = max(self.worst, float(np.abs(state.q - self.angles.at(state.time)).max()))
                return None

            def stop(self):
                open({str(out)!r}, "w").write(repr(self.worst))
    """,
    )
    summary = run_stand_in(tmp_path, nameserver, ["--replay", str(ANGLES)], recorder, 0.3)
    assert summary["controllers"]["pa10_follow"]["ticks"] == 300
    deadline = time.monotonic() + 10
    while not out.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert float(out.read_text()) == pytest.approx(0.0, abs=1e-12)


def test_one_controller_against_the_simulator_and_the_stand_in_through_the_same_loop(nameserver, tmp_path):
    """The same program, unchanged, against ODE and against the stand-in: both runs come out of the one
    tick loop (same summary, same figures), only the engine differs."""
    from controller_helpers import Stack

    controller = EXAMPLES / "controllers" / "pa10_follow.py"
    stand_in = run_stand_in(tmp_path, nameserver, [], controller, 0.2)
    with Stack(tmp_path, nameserver, EXAMPLES / "pa10.yaml", until=0.2) as stack:
        stack.controller(controller, name="pa10_follow", robot="pa10")
        simulated = stack.run()
    assert (stand_in["engine"], simulated["engine"]) == ("kinematic", "ode")
    assert set(stand_in) == set(simulated)
    for summary in (stand_in, simulated):
        report = summary["controllers"]["pa10_follow"]
        assert summary["error"] is None and summary["ticks"] == 200
        assert report["ticks"] == 200 and report["missed"] == 0 and report["errors"] == 0
        assert summary["robots"]["pa10"]["has_joints"] is True


def test_a_controller_drives_the_example_robot_driver_unchanged(nameserver, tmp_path):
    """examples/driver/robot_driver.py speaks the simulator's side of the protocol as a real robot's
    driver would; the sample controller attaches to it, runs, and leaves on its bye."""
    driver_log = tmp_path / "driver.log"
    with open(driver_log, "wb") as out:
        popen = subprocess.Popen(
            [
                sys.executable,
                str(EXAMPLES / "driver" / "robot_driver.py"),
                "--model",
                str(MODELS / "openhrp3" / "model" / "PA10" / "pa10.main.wrl"),
                "--robot",
                "pa10",
                "--ticks",
                "200",
                "--period",
                "0.002",
                "--nameserver",
                nameserver,
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
            cwd=REPO,
            start_new_session=True,
        )
    driver = ManagedProcess(popen, driver_log)
    ctl = None
    try:
        entry = wait_registered(nameserver, "driver-pa10", driver)
        assert entry["kind"] == "simserver" and entry["metadata"]["robots"] == ["pa10"]
        ctl = spawn(
            [
                "controller",
                str(EXAMPLES / "controllers" / "hold_pose.py"),
                "--robot",
                "pa10",
                "--nameserver",
                nameserver,
            ],
            tmp_path / "controller.log",
        )
        assert ctl.popen.wait(timeout=60) == 0, ctl.log_text() + driver.log_text()
        assert "the driver stopped after 200 ticks" in ctl.log_text()
        assert driver.popen.wait(timeout=30) == 0, driver.log_text()
    finally:
        if ctl is not None:
            ctl.stop()
        driver.stop()
