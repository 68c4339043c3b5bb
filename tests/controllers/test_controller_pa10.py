"""The PA10 arm follows OpenHRP3's PA10Controller trajectory in torque mode with PDgain.dat.

Stated tracking: RMS error of joints J1..J7 against angle.dat below 0.01 rad, sampled every 0.25 s
over the first 3 s (the run measured about 0.002 rad)."""

from __future__ import annotations

import numpy as np
from controller_helpers import EXAMPLES, MODELS, Stack

from hrpsim.motion_data import read_motion

ANGLES = MODELS / "openhrp3" / "controller" / "PA10Controller" / "etc" / "angle.dat"
RMS_LIMIT = 0.01  # rad


def test_pa10_tracks_its_reference(nameserver, tmp_path):
    reference = read_motion(ANGLES, joints=9)
    errors = []
    with Stack(tmp_path, nameserver, EXAMPLES / "pa10.yaml") as stack:
        stack.controller(EXAMPLES / "controllers" / "pa10_follow.py", name="pa10_follow", robot="pa10")
        for step in range(1, 13):
            summary = stack.run(until=0.25 * step)
            assert summary["error"] is None, summary["error"]
            state = stack.sim.call("state", robot="pa10")
            errors.append(state["q"][:7] - reference.at(state["time"])[:7])
    errors = np.array(errors)
    rms = float(np.sqrt(np.mean(errors**2)))
    assert rms < RMS_LIMIT, f"RMS tracking error {rms:.4f} rad"
    assert summary["controllers"]["pa10_follow"]["ticks"] == 3000
