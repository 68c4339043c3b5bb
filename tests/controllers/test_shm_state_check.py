"""A state a controller reads from shared memory is checked as one that came as a message: unknown
joint torques (NaN) pass, a non-finite joint angle, rate or root pose is refused with the field
named, a bye to the simulator and no traceback. Real hub, real controller process, real segment:
the test writes the states into the segment as the hub does."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest
from controller_helpers import HubUnderTest, attach, kinematic_project, sr1_body, start_controller, write_controller

from hrpsim.simserver.shm_peers import SharedMemoryPeer

DEADLINE_S = 30.0
NOTES = """
    from pathlib import Path
    import numpy as np
    from hrpsim.controllers import Controller

    class Notes(Controller):
        # Notes each state's tick and whether its torques are known, and changes nothing.

        def control(self, state):
            with open(Path(__file__).with_suffix(".ticks"), "a") as out:
                out.write(f"{state.tick} {bool(np.isfinite(state.tau).all())}\\n")
            return None
"""


def _hand_over(peer: SharedMemoryPeer, fields: dict) -> None:
    """What the hub does with a state for a controller on shared memory."""
    assert peer.segment.write_state(fields)
    peer.to_controller.ring()


def _answered(peer: SharedMemoryPeer) -> dict:
    deadline = time.monotonic() + DEADLINE_S
    while not peer.has_command():
        assert time.monotonic() < deadline, f"no command within {DEADLINE_S} s"
        time.sleep(0.01)
    return peer.take_command()


@pytest.mark.parametrize("field", ["q", "dq", "root_rotation"])
def test_a_non_finite_state_in_shared_memory_is_refused_naming_the_field(nameserver, tmp_path: Path, field) -> None:
    project = kinematic_project(tmp_path, [{"name": "notes", "policy": "hold"}])
    spec = write_controller(tmp_path, "notes", NOTES)
    with HubUnderTest(nameserver, project, sr1_body(), transport="unix") as sim:
        proc = start_controller(tmp_path, spec, nameserver=nameserver, name="notes")
        try:
            attach(sim, ["notes"], [proc])
            sim.run(3)
            peer = sim.hub.attachments.by_name["notes"].peer
            assert isinstance(peer, SharedMemoryPeer), proc.log_text()
            state = sim.engine.read("robot").to_wire()
            _hand_over(peer, {**state, "tick": 100, "tau": np.full_like(state["tau"], np.nan)})
            assert _answered(peer)["tick"] == 100  # torques not known yet: not a fault
            bad = {**state, "tick": 101, field: np.full_like(state[field], np.nan)}
            _hand_over(peer, bad)
            status = proc.popen.wait(DEADLINE_S)
            log = proc.log_text()
        finally:
            proc.stop()
    assert spec.with_suffix(".ticks").read_text().split("\n")[-2:] == ["100 False", ""]
    assert "101" not in spec.with_suffix(".ticks").read_text()  # refused before control() saw it
    assert status != 0, log
    assert "Traceback" not in log, log
    assert f"field {field!r}" in log and "non-finite" in log, log
