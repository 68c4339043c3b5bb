"""Snapshots (simserver/snapshot.py): a world put back where it was goes on as it went on then, on
every engine, through the Python API and through the simulator process."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from controller_helpers import EXAMPLES, SR1_URDF, Stack
from process_helpers import run_hrpsim
from sim_helpers import write_box_drop_project

import hrpsim
from hrpsim.controllers import Controller
from hrpsim.engines.ode import body_table
from hrpsim.errors import NotFound, RequestError, SimulationError
from hrpsim.project import load_project, parse_project

WALKS = {"mujoco": "sample_walk_mujoco.yaml", "ode": "sample_walk.yaml"}


class TickRows:
    """An observer that keeps, per tick, every number observers and controllers are given."""

    def __init__(self) -> None:
        self.rows: list[np.ndarray] = []

    def begin(self, engine) -> None:
        pass

    def end(self, summary) -> None:
        pass

    def observe(self, record) -> None:
        parts: list[np.ndarray] = [np.array([record.tick, record.time])]
        for robot in record.robots:
            s = record.state(robot)
            parts += [s.q, s.dq, s.tau, s.root_position, s.root_rotation.ravel(), s.root_velocity]
            parts += [np.ravel(value) for _, value in sorted(s.sensors.items())]
        for command in record.commands:
            parts += [a for a in (command.torque, command.q_ref, command.dq_ref) if a is not None]
        self.rows.append(np.concatenate(parts))

    def since(self, start: int) -> np.ndarray:
        return np.array(self.rows[start:])


def _walk(engine: str, **world) -> hrpsim.project.Project:
    """The sample walk with its walker in process: during the pattern it plays, its answer depends on
    the state and the time alone, so a world put back gets the same answers again."""
    project = load_project(EXAMPLES / WALKS[engine])
    walker = project.controllers[0]
    walker.in_process, walker.file = True, str(EXAMPLES / "controllers" / "sample_walk.py")
    for key, value in world.items():
        setattr(project.world, key, value)
    return project


def _branch_twice(sim: hrpsim.Simulation, rows: TickRows, ticks: int) -> tuple[np.ndarray, np.ndarray, dict, dict]:
    """Snapshot, ``ticks`` ticks, restore, the same ticks again: both branches' rows and summaries."""
    snapshot = sim.snapshot()
    start = len(rows.rows)
    sim.step(ticks)
    first, first_summary = rows.since(start), sim.summary()
    sim.restore(snapshot)
    assert (sim.tick, sim.time) == (snapshot.tick, snapshot.time)
    start = len(rows.rows)
    sim.step(ticks)
    return first, rows.since(start), first_summary, sim.summary()


def _same_run(a: dict, b: dict) -> None:
    """Two run summaries of the same ticks: the same figures but for wall-clock ones."""
    assert (a["ticks"], a["sim_time"], a["robots"], a["error"]) == (b["ticks"], b["sim_time"], b["robots"], b["error"])
    for name, ctl in a["controllers"].items():
        keep = ("ticks", "missed", "errors", "policy_applied", "attached", "joined_tick")
        assert {k: ctl[k] for k in keep} == {k: b["controllers"][name][k] for k in keep}


@pytest.mark.parametrize(
    ("engine", "world"),
    [("mujoco", {}), ("mujoco", {"command_delay": 1}), ("ode", {})],
    ids=["mujoco", "mujoco-pipelined", "ode"],
)
def test_a_restored_walk_gives_the_same_tick_records_again(engine, world):
    """Run 1 s, snapshot, run 1 s, restore, run 1 s again: the same tick records, bit for bit (ODE
    too, where hrpsim reaches ODE's memory: docs/python-api.md), and the same run summary."""
    rows = TickRows()
    with hrpsim.Simulation(_walk(engine, **world), observers=[rows], record=False) as sim:
        ticks = round(1.0 / sim.project.world.timestep)
        sim.step(2 * ticks)  # into the walking pattern, feet landing and lifting
        first, second, first_summary, second_summary = _branch_twice(sim, rows, ticks)
    assert first.shape == second.shape == (ticks, first.shape[1])
    assert np.array_equal(first, second)
    _same_run(first_summary, second_summary)
    late = world.get("command_delay", 0)  # pipelined: the first answer acts one tick later
    assert first_summary["controllers"]["walker"]["ticks"] == 3 * ticks - late


def test_ode_without_its_memory_restores_within_the_stated_tolerance(monkeypatch):
    """Where libode cannot be reached through ctypes, bodies are placed through pyode's setters, which
    normalise each quaternion again: the branches then agree within 1e-6 over a second of walking."""
    monkeypatch.setattr(body_table, "LIBODE", None)
    rows = TickRows()
    with hrpsim.Simulation(_walk("ode"), observers=[rows], record=False) as sim:
        assert not sim.engine.model("robot").bodies.direct
        ticks = round(1.0 / sim.project.world.timestep)
        sim.step(2 * ticks)
        first, second, _, _ = _branch_twice(sim, rows, ticks)
    assert first.shape == second.shape
    np.testing.assert_allclose(second, first, rtol=0, atol=1e-6)


def _kinematic(tmp_path, devices: dict) -> hrpsim.project.Project:
    data = {
        "world": {"engine": "kinematic", "timestep": 0.001, "end_time": 1.0},
        "models": [{"name": "robot", "file": str(SR1_URDF), "devices": devices}],
    }
    return parse_project(data, str(tmp_path / "project.yaml"))


class _Follower(Controller):
    """Keeps the states it is sent; commands targets that depend on the state alone."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[np.ndarray] = []

    def control(self, state):
        self.seen.append(np.concatenate([[state.tick], state.q]))
        return self.targets(0.5 * np.sin(state.q + 0.01 * state.tick))


def test_device_models_give_the_same_noise_and_delays_after_a_restore(tmp_path):
    devices = {"noise": {"seed": 3, "q": {"std": 0.01}}, "latency": {"sensor": 2, "command": 3}}
    with hrpsim.Simulation(_kinematic(tmp_path, devices), record=False) as sim:
        follower = _Follower()
        sim.attach(follower, robot="robot", name="follower")
        sim.step(50)
        snapshot = sim.snapshot()
        sim.step(40)
        first = np.array(follower.seen[-40:])
        sim.restore(snapshot)
        sim.step(40)
        second = np.array(follower.seen[-40:])
    assert np.array_equal(first, second)  # the same noise draws, the same delayed readings and commands
    assert first[0, 0] == 50 and not np.array_equal(first[:, 1:], np.zeros_like(first[:, 1:]))


def test_a_snapshot_pickles_and_restores_into_another_simulation_of_the_project(tmp_path):
    project = _walk("mujoco")
    rows, again = TickRows(), TickRows()
    with hrpsim.Simulation(project, observers=[rows], record=False) as sim:
        sim.step(1000)  # in the pattern: a walker started afresh from here answers as this one does
        kept = pickle.dumps(sim.snapshot())
        start = len(rows.rows)
        sim.step(200)
        first = rows.since(start)
    with hrpsim.Simulation(_walk("mujoco"), observers=[again], record=False) as other:
        other.restore(pickle.loads(kept))
        assert other.tick == 1000
        other.step(200)
    assert np.array_equal(first, np.array(again.rows))


def test_a_snapshot_of_another_world_is_refused_naming_both():
    with hrpsim.Simulation(_walk("mujoco"), record=False) as walk:
        walk.step(5)
        snapshot = walk.snapshot()
    with hrpsim.Simulation(EXAMPLES / "sr1_stand_mujoco.yaml", record=False) as other:
        with pytest.raises(
            RequestError, match=r"another world \(mujoco, models floor, robot, box, robots robot \(29 joints\)"
        ):
            other.restore(snapshot)
        assert other.tick == 0
        with pytest.raises(RequestError, match="expected a Snapshot"):
            other.restore({"tick": 3})


def test_restore_is_refused_while_the_world_records(tmp_path):
    with hrpsim.Simulation(_walk("mujoco"), record=tmp_path / "run.mcap") as sim:
        sim.step(10)
        snapshot = sim.snapshot()
        sim.step(10)
        with pytest.raises(RequestError, match=r"records its run .*run\.mcap.*record=False"):
            sim.restore(snapshot)
        assert sim.tick == 20


def test_a_failed_world_has_no_snapshot_but_a_restore_heals_it(tmp_path):
    with hrpsim.Simulation(EXAMPLES / "box_drop.yaml", record=False) as sim:
        sim.step(10)
        healthy = sim.snapshot()
        sim.set_link_data("box", root_velocity=[1e9, 0, 0, 0, 0, 0])
        with pytest.raises(SimulationError, match="box"):
            sim.step(2)
        with pytest.raises(SimulationError, match="reset it first"):
            sim.snapshot()
        sim.restore(healthy)
        sim.step(10)
        assert sim.tick == 20 and sim.summary()["error"] is None


def test_the_simulator_keeps_named_snapshots_and_the_cli_goes_back_to_them(tmp_path, shared_nameserver):
    project = write_box_drop_project(tmp_path, end_time=10.0)
    ns = ["--nameserver", shared_nameserver]
    with Stack(tmp_path, shared_nameserver, project, loader=False) as stack:
        stack.sim.call("step", n=200)
        taken = run_hrpsim(["sim", "snapshot", "landing", *ns])
        assert taken.returncode == 0, taken.stderr
        assert "snapshot 'landing' at t=0.2000 s, tick 200" in taken.stdout
        stack.sim.call("step", n=150)
        after = stack.sim.call("state", robot="box")
        back = run_hrpsim(["sim", "restore", "landing", *ns])
        assert back.returncode == 0, back.stderr
        assert "tick 200" in back.stdout
        stack.sim.call("step", n=150)
        again = stack.sim.call("state", robot="box")
        for key in ("root_position", "root_rotation", "root_velocity"):
            assert np.array_equal(np.asarray(after[key]), np.asarray(again[key]))
        unknown = run_hrpsim(["sim", "restore", "nowhere", *ns])
        assert unknown.returncode == 1 and "no snapshot named 'nowhere' (snapshots: landing)" in unknown.stderr
        with pytest.raises(NotFound, match="nowhere"):
            stack.sim.call("restore", name="nowhere")
