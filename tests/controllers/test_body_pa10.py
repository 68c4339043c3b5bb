"""The PA10 arm read from Choreonoid's PA10.body follows OpenHRP3's PA10Controller trajectory in
torque mode with PDgain.dat, as the VRML PA10 does (tests/controllers/test_controller_pa10.py): RMS error of
joints J1..J7 against angle.dat below 0.01 rad, sampled every 0.25 s over the first 3 s."""

from __future__ import annotations

import numpy as np
from controller_helpers import EXAMPLES, MODELS, Stack

from hrpsim.motion_data import read_motion

ANGLES = MODELS / "openhrp3" / "controller" / "PA10Controller" / "etc" / "angle.dat"
RMS_LIMIT = 0.01  # rad


def test_pa10_body_tracks_its_reference(nameserver, tmp_path):
    reference = read_motion(ANGLES, joints=9)
    errors, angles = [], []
    with Stack(tmp_path, nameserver, EXAMPLES / "pa10_body.yaml") as stack:
        stack.controller(EXAMPLES / "controllers" / "pa10_follow.py", name="pa10_follow", robot="pa10")
        for step in range(1, 13):
            summary = stack.run(until=0.25 * step)
            assert summary["error"] is None, summary["error"]
            state = stack.sim.call("state", robot="pa10")
            errors.append(state["q"][:7] - reference.at(state["time"])[:7])
            angles.append(state["q"][:7])
    errors = np.array(errors)
    assert np.ptp(np.array(angles), axis=0).max() > 0.1  # the arm moved along the trajectory
    rms = float(np.sqrt(np.mean(errors**2)))
    assert rms < RMS_LIMIT, f"RMS tracking error {rms:.4f} rad"
    assert summary["controllers"]["pa10_follow"]["ticks"] == 3000
