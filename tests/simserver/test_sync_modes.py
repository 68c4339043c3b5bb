"""The sync modes as strategies (simserver/sync_modes.py): chosen from the project's world, and what
each decides: when answers are waited for, and from which tick an answer acts."""

from __future__ import annotations

import pytest

from hrpsim import tick_protocol as proto
from hrpsim.project import parse_project
from hrpsim.simserver.sync_modes import Lockstep, Pipelined, Realtime, sync_mode


def _world(tmp_path, **world):
    data = {"world": {"timestep": 0.001, **world}, "models": []}
    return parse_project(data, str(tmp_path / "project.yaml")).world


@pytest.mark.parametrize(
    ("world", "mode"),
    [({}, Lockstep), ({"command_delay": 1}, Pipelined), ({"sync": "realtime"}, Realtime)],
)
def test_the_world_picks_its_sync_mode(tmp_path, world, mode):
    chosen = sync_mode(_world(tmp_path, **world))
    assert type(chosen) is mode
    assert chosen.waits == (mode is not Realtime)


def _answer(tick: int) -> proto.Command:
    return proto.parse_command({"tick": tick}, joint_names=[], index_of={}, expected_tick=tick)


def test_pipelined_answers_act_from_the_next_tick_and_others_at_once():
    assert Pipelined().acts_now(_answer(4), 5) and not Pipelined().acts_now(_answer(5), 5)
    assert Lockstep().acts_now(_answer(5), 5) and Realtime().acts_now(_answer(5), 5)
    # pipelined in-process controllers answer after the tick's commands acted, so that an answer
    # never replaces one that has not acted yet
    assert Pipelined.in_process_after_apply and not Lockstep.in_process_after_apply
