"""Policies and statistics (simserver/policies.py): what each policy does when a controller fails."""

from __future__ import annotations

import pytest
from controller_helpers import kinematic_project

from hrpsim.simserver.attached_controllers import AttachedController
from hrpsim.simserver.policies import Policies


def _ctl(policy: str) -> AttachedController:
    return AttachedController(
        name="ctl", robot="robot", peer=None, every=1, period=0.001, policy=policy, deadline=1.0, start_tick=0
    )


@pytest.mark.parametrize("policy", ["stop", "hold", "zero"])
def test_each_policy_does_what_it_says(tmp_path, policy):
    zeroed, halted = [], []
    project = kinematic_project(tmp_path, [{"name": "ctl"}])
    policies = Policies(project, tick=lambda: 7, zero=zeroed.append, halt=halted.append)
    policies.apply(_ctl(policy), "it left")
    events = policies.take_events()
    assert [e.kind for e in events] == ["policy"] and "tick 7: it left; policy " + policy in events[0].detail
    assert policies.summary()["ctl"]["policy_applied"] == policy
    assert zeroed == (["robot"] if policy == "zero" else [])
    assert halted == (["controller 'ctl' (robot 'robot'): it left; its policy is stop"] if policy == "stop" else [])
    assert policies.take_events() == []
