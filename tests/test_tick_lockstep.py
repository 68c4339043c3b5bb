"""The tick protocol in lockstep between the real controller hub and real controller processes."""

from __future__ import annotations

import numpy as np
from controller_helpers import EXAMPLES, HubUnderTest, attach, kinematic_project, sr1_body, start_controller


def test_a_pd_controller_answers_every_tick(nameserver, tmp_path):
    body = sr1_body()
    project = kinematic_project(tmp_path, [{"name": "hold", "period": 0.002}])
    with HubUnderTest(nameserver, project, body) as sim:
        proc = start_controller(tmp_path, EXAMPLES / "controllers" / "hold_pose.py", nameserver=nameserver,
                                name="hold")
        try:
            attach(sim, ["hold"], [proc])
            sim.world.command("robot", modes=dict.fromkeys(body.joint_names, "torque"))
            sim.run(400)
            summary = sim.hub.summary()["hold"]
        finally:
            proc.stop()
    assert summary["ticks"] == 200  # every second tick at a 2 ms period on a 1 ms step
    assert summary["missed"] == 0 and summary["errors"] == 0
    assert summary["rtt_p50_us"] > 0
    assert np.all(np.isfinite(sim.world.state("robot")["q"]))
