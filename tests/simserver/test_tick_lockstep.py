"""The tick protocol in lockstep between the real controller hub and real controller processes."""

from __future__ import annotations

import signal
import time

import numpy as np
from controller_helpers import (
    EXAMPLES,
    HubUnderTest,
    attach,
    kinematic_project,
    sr1_body,
    start_controller,
    wait_exit,
    write_controller,
)

from hrpsim.engines.base import JointCommand


def test_a_pd_controller_answers_every_tick(nameserver, tmp_path):
    body = sr1_body()
    project = kinematic_project(tmp_path, [{"name": "hold", "period": 0.002}])
    with HubUnderTest(nameserver, project, body) as sim:
        proc = start_controller(tmp_path, EXAMPLES / "controllers" / "hold_pose.py", nameserver=nameserver, name="hold")
        try:
            attach(sim, ["hold"], [proc])
            sim.engine.apply("robot", JointCommand(modes=dict.fromkeys(body.joint_names, "torque")))
            sim.run(400)
            summary = sim.hub.summary()["hold"]
        finally:
            proc.stop()
    assert summary["ticks"] == 200  # every second tick at a 2 ms period on a 1 ms step
    assert summary["missed"] == 0 and summary["errors"] == 0
    assert summary["rtt_p50_us"] > 0
    assert np.all(np.isfinite(sim.engine.read("robot").q))


def test_a_second_process_under_the_same_name_replaces_the_first(nameserver, tmp_path):
    body = sr1_body()
    project = kinematic_project(tmp_path, [{"name": "hold", "policy": "hold"}])
    spec = EXAMPLES / "controllers" / "hold_pose.py"
    with HubUnderTest(nameserver, project, body) as sim:
        first = start_controller(tmp_path, spec, nameserver=nameserver, name="hold", extra=["--reconnect-wait", "0"])
        second = None
        try:
            attach(sim, ["hold"], [first])
            sim.run(20)
            second = start_controller(tmp_path, spec, nameserver=nameserver, name="hold")
            deadline = time.monotonic() + 30
            while first.popen.poll() is None and time.monotonic() < deadline:
                sim.run(5)
                sim.hub.wait_for_controllers(["nobody"], 0.05)
            sim.run(20)
            assert first.popen.returncode == 2, first.log_text()
            assert "another process attached as controller 'hold'" in first.log_text()
            assert sim.hub.attached == ["hold"] and second.popen.poll() is None
        finally:
            first.stop()
            if second is not None:
                second.stop()


def _answered(sim: HubUnderTest, proc, answers: int) -> dict:
    """Tick until controller ``hold`` has had ``answers`` answers applied in all; its report then. A
    first answer slower than the deadline (a busy machine) costs it its attachment: it attaches again."""
    deadline = time.monotonic() + 120.0
    while time.monotonic() < deadline:
        report = sim.hub.summary()["hold"]
        if report["ticks"] >= answers:
            return report
        if not report["attached"]:
            attach(sim, ["hold"], [proc])
        sim.run(1)
    raise AssertionError(f"controller hold had {report['ticks']} of {answers} answers within 120 s:\n{proc.log_text()}")


def test_a_controller_detached_after_a_stall_attaches_again(nameserver, tmp_path):
    body = sr1_body()
    project = kinematic_project(tmp_path, [{"name": "hold", "policy": "hold", "deadline": 0.3}])
    with HubUnderTest(nameserver, project, body) as sim:
        proc = start_controller(tmp_path, EXAMPLES / "controllers" / "hold_pose.py", nameserver=nameserver, name="hold")
        try:
            attach(sim, ["hold"], [proc])
            before = _answered(sim, proc, 10)
            stalled = sim.engine.tick
            proc.popen.send_signal(signal.SIGSTOP)
            sim.run(3)  # the first of these waits out the deadline, then the controller is detached
            stalled_report = sim.hub.summary()["hold"]
            proc.popen.send_signal(signal.SIGCONT)
            attach(sim, ["hold"], [proc])
            report = _answered(sim, proc, before["ticks"] + 10)
        finally:
            proc.popen.send_signal(signal.SIGCONT)
            proc.stop()
    assert stalled_report["missed"] == before["missed"] + 1 and not stalled_report["attached"]
    assert f"tick {stalled}: no answer to tick {stalled} within its deadline of 0.3 s; policy hold" in report["events"]
    assert report["policy_applied"] == "hold" and report["attached"]
    assert "attaching again" in proc.log_text()


def test_a_controller_that_raises_exits_with_status_1_and_the_hub_applies_its_policy(nameserver, tmp_path):
    body = sr1_body()
    project = kinematic_project(tmp_path, [{"name": "crash", "policy": "hold"}])
    crashing = write_controller(
        tmp_path,
        "crashing",
        """
        from hrpsim.controllers import Controller

        class Crashing(Controller):
            def control(self, state):
                if state.tick == 5:
                    raise RuntimeError("boom at tick 5")
                return None
    """,
    )
    with HubUnderTest(nameserver, project, body) as sim:
        proc = start_controller(tmp_path, crashing, nameserver=nameserver, name="crash")
        try:
            attach(sim, ["crash"], [proc])
            sim.run(10)
            status = wait_exit(proc)
            sim.hub.wait_for_controllers(["nobody"], 0.2)
            report = sim.hub.summary()["crash"]
        finally:
            proc.stop()
    assert status == 1 and "boom at tick 5" in proc.log_text()
    assert report["ticks"] == 5 and report["policy_applied"] == "hold" and not report["attached"]
