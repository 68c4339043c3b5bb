"""The state an in-process controller reads from MuJoCo field by field: the values of a whole read,
to the bit, in read-only arrays of this tick only."""

from __future__ import annotations

import numpy as np
import pytest
from process_helpers import REPO

from hrpsim.controllers.state import JointIndex, LiveState, State
from hrpsim.engines.base import JointCommand, make_engine
from hrpsim.errors import RequestError
from hrpsim.modelloader import load_body
from hrpsim.project import load_project

pytest.importorskip("mujoco")

FIELDS = ("q", "dq", "tau", "root_position", "root_rotation", "root_velocity")


@pytest.fixture(scope="module")
def engine():
    project = load_project(REPO / "examples" / "sample_walk.yaml")
    project.world.engine = "mujoco"
    project.controllers = []
    return make_engine(project, {m.name: load_body(m.file) for m in project.models})


def _live(engine) -> LiveState:
    return LiveState(engine.state_source("robot"), engine.tick, engine.time, JointIndex([]))


def test_every_field_is_the_whole_reads_to_the_bit(engine) -> None:
    torque = np.linspace(-5.0, 5.0, len(engine.read("robot").q))
    for _ in range(20):  # the robot falls and moves: every field changes from tick to tick
        live, whole = _live(engine), State.of(engine.read("robot"), JointIndex([]))
        for name in FIELDS:
            assert np.array_equal(getattr(live, name), getattr(whole, name)), name
        assert live.sensors.keys() == whole.sensors.keys() and live.sensors
        for name, value in whole.sensors.items():
            assert np.array_equal(live.sensors[name], value), name
        engine.apply("robot", JointCommand(torque=torque))
        engine.step()


def test_the_arrays_cannot_be_written_through(engine) -> None:
    live = _live(engine)
    for name in FIELDS:
        with pytest.raises(ValueError, match="read-only"):
            getattr(live, name)[0] = 1.0
    with pytest.raises(ValueError, match="read-only"):
        next(iter(live.sensors.values()))[0] = 1.0


def test_a_field_not_read_in_its_tick_is_refused_saying_to_keep_copies(engine) -> None:
    live = _live(engine)
    assert live.q.size  # read in its tick
    engine.step()
    with pytest.raises(RequestError, match=r"robot 'robot': a state of tick \d+ read at tick \d+.*keep copies"):
        _ = live.root_velocity
