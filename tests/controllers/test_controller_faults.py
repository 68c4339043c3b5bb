"""Controllers that die, stall, start late or send bad commands, and a simulator that dies under a
controller: real modelloader, simserver and controller processes over real sockets."""

from __future__ import annotations

import signal
import time

import pytest
from controller_helpers import EXAMPLES, Stack, wait_exit, write_controller, write_project
from process_helpers import wait_unregistered

HOLD_POSE = EXAMPLES / "controllers" / "hold_pose.py"
PA10_FOLLOW = EXAMPLES / "controllers" / "pa10_follow.py"

# The model loads in the simulator: no modelloader process, which none of these faults involves.
PA10_PROJECT = """
world: {{timestep: 0.001, end_time: 30.0, sync: {sync}}}
services: {{loader: local}}
models:
  - name: pa10
    file: {{models}}/PA10/pa10.main.wrl
    joints: {{J2: 0.8, J4: 0.8, J6: 0.8, J7: 1.57, HAND_L: -0.02, HAND_R: 0.02}}
    drive: {drive}
controllers:
{controllers}
"""


def pa10_project(folder, controllers: str = "  []", *, sync: str = "lockstep", drive: str = "torque"):
    return write_project(folder, PA10_PROJECT.format(controllers=controllers, sync=sync, drive=drive))


def wait_sim_time(stack: Stack, t: float, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if stack.sim.call("status")["time"] >= t:
            return
        time.sleep(0.02)
    raise AssertionError(f"sim time did not reach {t} s:\n{stack.logs()}")


@pytest.mark.parametrize("policy", ["stop", "hold", "zero"])
def test_a_controller_killed_mid_run_gets_its_policy(nameserver, tmp_path, policy):
    project = pa10_project(
        tmp_path, f"  - {{name: arm, robot: pa10, command: external, policy: {policy}, deadline: 5.0}}"
    )
    with Stack(tmp_path, nameserver, project, loader=False) as stack:
        ctl = stack.controller(PA10_FOLLOW, name="arm", robot="pa10")
        stack.sim.call("start", until=0.6)
        wait_sim_time(stack, 0.15)
        ctl.kill()  # SIGKILL
        summary = stack.wait_finished()
        tau = stack.sim.call("state", robot="pa10")["tau"]
    report = summary["controllers"]["arm"]
    assert report["policy_applied"] == policy
    assert any("connection dropped" in e for e in report["events"])
    if policy == "stop":
        assert "'arm'" in summary["error"] and "stop" in summary["error"]
        assert summary["sim_time"] < 0.6
    else:
        assert summary["error"] is None and summary["sim_time"] == pytest.approx(0.6)
        assert 0 < report["ticks"] < 600
    if policy == "zero":
        assert not tau.any()  # every joint in torque mode at zero
    if policy == "hold":
        assert abs(tau).max() > 1.0  # the last PD torques still hold the arm up


def test_a_stalled_controller_misses_its_deadline_and_the_run_goes_on(nameserver, tmp_path):
    project = pa10_project(tmp_path, "  - {name: arm, robot: pa10, command: external, policy: hold, deadline: 0.5}")
    with Stack(tmp_path, nameserver, project, loader=False) as stack:
        ctl = stack.controller(PA10_FOLLOW, name="arm", robot="pa10", extra=["--reconnect-wait", "0"])
        stack.sim.call("start", until=0.6)
        wait_sim_time(stack, 0.1)
        ctl.popen.send_signal(signal.SIGSTOP)
        try:
            summary = stack.run(until=0.6)
        finally:
            ctl.popen.send_signal(signal.SIGCONT)
    report = summary["controllers"]["arm"]
    assert summary["error"] is None and summary["sim_time"] == pytest.approx(0.6)
    assert report["missed"] >= 1 and report["policy_applied"] == "hold"
    assert any("deadline" in e for e in report["events"])


def test_a_controller_started_late_joins_at_the_next_tick(nameserver, tmp_path):
    # no controller in the project: the run starts at once; realtime, so it lasts long enough to join
    project = pa10_project(tmp_path, sync="realtime", drive="high_gain")  # holds its pose until then
    with Stack(tmp_path, nameserver, project, loader=False) as stack:
        stack.sim.call("start", until=5.0)
        wait_sim_time(stack, 0.2)
        # targets, not PD torques: a realtime run on a loaded machine holds a late torque for a tick,
        # which can shake the arm apart; joining late is what this test is about
        stack.controller(PA10_FOLLOW, name="late", robot="pa10", extra=["-o", "mode=high_gain"])
        joined_by = stack.sim.call("status")["tick"]
        summary = stack.wait_finished()
    report = summary["controllers"]["late"]
    assert summary["error"] is None and summary["ticks"] == 5000
    assert 200 <= report["joined_tick"] <= joined_by  # it joined after t = 0.2 s, while the run went on
    assert 0 < report["ticks"] <= summary["ticks"] - report["joined_tick"], (report, stack.logs()[-3000:])


def test_wrong_length_commands_from_a_controller_process(nameserver, tmp_path):
    bad = write_controller(
        tmp_path,
        "short_torque",
        """
        import numpy as np
        from hrpsim.controllers import Controller

        class ShortTorque(Controller):
            def control(self, state):
                return np.zeros(3)  # the arm has nine joints
    """,
    )
    project = pa10_project(tmp_path, "  - {name: short, robot: pa10, command: external, policy: hold}")
    with Stack(tmp_path, nameserver, project, loader=False) as stack:
        ctl = stack.controller(bad, name="short", robot="pa10")
        summary = stack.run(until=0.05)
        ctl.stop()
        log = ctl.log_text()
    report = summary["controllers"]["short"]
    assert summary["error"] is None and report["errors"] == 50 and report["policy_applied"] == "hold"
    assert "'torque' has 3 values, expected 9" in log


def test_the_simulator_killed_under_a_controller(nameserver, tmp_path):
    """Documented: the runner reports the simulator gone, waits --reconnect-wait seconds, exits 3."""
    project = pa10_project(tmp_path, "  - {name: arm, robot: pa10, command: external}")
    with Stack(tmp_path, nameserver, project, loader=False) as stack:
        ctl = stack.controller(PA10_FOLLOW, name="arm", robot="pa10", extra=["--reconnect-wait", "1"])
        stack.sim.call("start", until=30.0)
        wait_sim_time(stack, 0.1)
        stack.sim_proc.kill()
        status = wait_exit(ctl, timeout=20.0)
        log = ctl.log_text()
    assert status == 3
    assert "went away" in log and "did not come back" in log


def test_a_controller_reattaches_to_a_restarted_simulator(nameserver, tmp_path):
    project = pa10_project(tmp_path, "  - {name: arm, robot: pa10, command: external}")
    with Stack(tmp_path, nameserver, project, loader=False) as first:
        ctl = first.controller(PA10_FOLLOW, name="arm", robot="pa10", extra=["--reconnect-wait", "30"])
        first.sim.call("start", until=30.0)
        wait_sim_time(first, 0.1)
        first.sim_proc.kill()
        first.procs.remove(ctl)  # the controller outlives this stack
    wait_unregistered(nameserver, "simserver")  # a killed process's entry lives until its ttl ends
    try:
        with Stack(tmp_path, nameserver, project, loader=False) as second:
            summary = second.run(until=0.2)
    finally:
        ctl.stop()
    assert summary["error"] is None and summary["controllers"]["arm"]["ticks"] == 200
    assert ctl.log_text().count("attached arm to robot pa10") == 2


def test_a_controller_stopped_with_sigterm_says_bye(nameserver, tmp_path):
    project = pa10_project(tmp_path, "  - {name: arm, robot: pa10, command: external, policy: hold}")
    with Stack(tmp_path, nameserver, project, loader=False) as stack:
        ctl = stack.controller(PA10_FOLLOW, name="arm", robot="pa10")
        stack.sim.call("start", until=0.6)
        wait_sim_time(stack, 0.15)
        ctl.popen.send_signal(signal.SIGTERM)
        status = wait_exit(ctl)
        summary = stack.wait_finished()
    assert status == 0
    assert summary["error"] is None and summary["sim_time"] == pytest.approx(0.6)
    assert any("left (interrupted)" in e for e in summary["controllers"]["arm"]["events"])
