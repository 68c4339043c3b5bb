"""Lockstep is deterministic: two runs of the same project and controller end in bit-identical states."""

from __future__ import annotations

import time

import numpy as np
from controller_helpers import EXAMPLES, Stack

from hrpsim.naming import NameClient


def final_state(folder, nameserver) -> dict:
    with Stack(folder, nameserver, EXAMPLES / "sample_walk.yaml") as stack:
        stack.controller(EXAMPLES / "controllers" / "sample_walk.py", name="walker")
        summary = stack.run(until=2.5)  # the move to the initial pose and the first second of walking
        assert summary["error"] is None, summary["error"]
        return stack.sim.call("state", robot="robot")


def wait_gone(nameserver: str, name: str) -> None:
    with NameClient(nameserver) as ns:
        for _ in range(100):
            if all(e["name"] != name for e in ns.list()):
                return
            time.sleep(0.1)


def test_two_lockstep_runs_end_in_identical_states(nameserver, tmp_path):
    first = final_state(tmp_path, nameserver)
    wait_gone(nameserver, "simserver")
    second = final_state(tmp_path, nameserver)
    assert first["tick"] == second["tick"] == 1250
    for key in ("q", "dq", "tau", "root_position", "root_rotation", "root_velocity"):
        assert np.array_equal(first[key], second[key]), key
    for name, reading in first["sensors"].items():
        assert np.array_equal(reading, second["sensors"][name]), name
