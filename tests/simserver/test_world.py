"""The simulator core (simserver/world.py) under its front ends: the simulator process
(``hrpsim launch``, ``hrpsim run simserver``), the Python API (hrpsim.Simulation) and the replay
of a recording give the same run, reset, recording and summary. Real processes, real files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml
from process_helpers import HRPSIM, REPO, launch_summary, start_nameserver
from sim_helpers import start_simserver

import hrpsim
from hrpsim.errors import SimulationError
from hrpsim.project import load_project
from hrpsim.recording.reader import open_recording
from hrpsim.simserver.tick_record import TickRecord
from hrpsim.simserver.world import World
from hrpsim.simulation import ExternalControllers

EXAMPLES = REPO / "examples"
WALK = EXAMPLES / "sample_walk.yaml"
WALKER = EXAMPLES / "controllers" / "sample_walk.py"
UNTIL = 1.0  # the walk's first second: the controller moves the robot to its initial pose
SAME = ("sim_time", "ticks", "robots", "error", "engine")  # what does not depend on the wall clock


def _run(*args: str, timeout: float = 600.0) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([*HRPSIM, *args], capture_output=True, text=True, timeout=timeout, cwd=REPO, env=env)


def _same(summary: dict) -> dict:
    return {key: summary[key] for key in SAME}


def test_launch_python_api_and_replay_give_the_walk_the_same_summary_bit_for_bit(tmp_path: Path) -> None:
    recording = tmp_path / "walk.mcap"
    launched = launch_summary(WALK, tmp_path, "--until", repr(UNTIL), "--record", str(recording), timeout=600).summary

    project = load_project(WALK)
    walker = project.controllers[0]
    walker.in_process, walker.file = True, str(WALKER)
    with hrpsim.Simulation(project) as sim:
        # through JSON, as launch writes it: a float survives the trip exactly
        in_process = json.loads(json.dumps(sim.run(until=UNTIL)))

    replayed_file = tmp_path / "replayed.json"
    replay = _run("replay", str(recording), "--summary", str(replayed_file))
    assert replay.returncode == 0, replay.stdout + replay.stderr
    replayed = json.loads(replayed_file.read_text())

    assert launched["ticks"] == round(UNTIL / project.world.timestep) and launched["error"] is None
    assert launched["robots"]["robot"]["root_end"] != launched["robots"]["robot"]["root_start"]  # it moved
    assert _same(in_process) == _same(launched)
    assert _same(replayed) == _same(launched)
    assert in_process["controllers"]["walker"]["ticks"] == launched["controllers"]["walker"]["ticks"] > 0


def test_the_python_api_refuses_a_project_with_a_controller_process_naming_it() -> None:
    with pytest.raises(ExternalControllers) as refused:
        hrpsim.Simulation(WALK)
    message = str(refused.value)
    assert "'walker'" in message and "examples/controllers/sample_walk.py" in message
    assert f"hrpsim launch {WALK}" in message and "in_process: true" in message


def test_a_script_with_a_controller_process_in_its_project_exits_with_the_refusal(tmp_path: Path) -> None:
    """As a user runs it: the script stops at once with the reason, no robot stands still silently."""
    script = tmp_path / "walk.py"
    script.write_text(f"import hrpsim\nprint(hrpsim.Simulation({str(WALK)!r}).run())\n")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 1 and "ExternalControllers" in done.stderr and "'walker'" in done.stderr
    assert "ticks" not in done.stdout


def _walk_in_process(folder: Path) -> Path:
    """The sample walk with its controller in process, loaded locally, recorded to folder/run.mcap."""
    data = yaml.safe_load(WALK.read_text())
    for m in data["models"]:
        m["file"] = str((EXAMPLES / m["file"]).resolve())
    data["controllers"] = [
        {"name": "walker", "robot": "robot", "in_process": True, "file": str(WALKER), "period": 0.002}
    ]
    data["services"] = {"loader": "local"}
    data["record"] = str(folder / "run.mcap")
    path = folder / "walk.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def _states(path: Path) -> list[int]:
    return [int(t) for t in np.rint(open_recording(path).series("robot").time / 0.002)]


def test_reset_and_record_are_the_same_through_the_simulator_process_and_the_python_api(tmp_path: Path) -> None:
    """Steps, a reset, steps again: the second run is a fresh one (the in-process controller starts
    over, its statistics too), the project's record: gets one file per run, either way."""
    served, local = tmp_path / "served", tmp_path / "local"
    served.mkdir(), local.mkdir()
    nameserver = start_nameserver(served)
    try:
        proc, client, _ = start_simserver(served, nameserver.address, _walk_in_process(served), timeout=120)
        try:
            client.call("step", n=40)
            client.call("reset")
            client.call("step", n=60)
            through_server = client.call("summary")
            client.call("quit")
            assert proc.popen.wait(60) == 0, proc.log_text()
        finally:
            proc.stop()
    finally:
        nameserver.stop()
    with hrpsim.Simulation(_walk_in_process(local)) as sim:
        sim.step(40)
        sim.reset()
        sim.step(60)
        through_api = sim.summary()
    with hrpsim.Simulation(_walk_in_process(tmp_path), record=False) as sim:
        sim.step(60)
        fresh = sim.summary()
    assert not (tmp_path / "run.mcap").exists()  # record=False: nothing written
    assert _same(through_api) == _same(through_server) == _same(fresh)
    assert through_api["controllers"]["walker"]["ticks"] == through_server["controllers"]["walker"]["ticks"] == 60
    for folder in (served, local):
        assert _states(folder / "run.mcap") == list(range(40))  # the reset came before a final state
        assert _states(folder / "run.1.mcap") == list(range(61))  # and the run's final state


class _Lift:
    """A tick action: holds the box up with its own weight until tick ``until``, then lets go; notes
    each tick it acted in."""

    def __init__(self, weight: float, until: int) -> None:
        self.weight, self.until = weight, until
        self.ticks: list[int] = []

    def apply(self, record: TickRecord) -> None:
        self.ticks.append(record.tick)
        root = record.engine.body("box").links[0].name
        lift = self.weight if record.tick < self.until else 0.0
        record.engine.set_external_force("box", root, [0.0, 0.0, lift])


def test_a_tick_action_acts_in_every_tick_before_the_world_integrates(tmp_path: Path) -> None:
    """A box in gravity floats while an action lifts it by its own weight (from the very first
    tick: the action comes before the step), and falls once it lets go."""
    from sim_helpers import box_body, model, project

    proj, bodies = project(tmp_path, [(model("box", position=(0.0, 0.0, 1.0)), box_body(mass=10.0))])
    world = World(proj, bodies=bodies, record=False)
    try:
        lift = _Lift(world.engine.body("box").total_mass * -proj.world.gravity[2], until=25)
        world.add_action(lift)
        world.step(25)
        assert world.engine.read("box").root_position[2] == pytest.approx(1.0, abs=1e-9)
        world.step(25)
        assert lift.ticks == list(range(50))
        assert world.engine.read("box").root_position[2] < 1.0 - 1e-4
        assert world.summary()["robots"]["box"]["min_root_z"] < 1.0 - 1e-4
    finally:
        world.close()


def _box(tmp_path: Path, **world: object) -> tuple:
    from sim_helpers import box_body, model, project

    return project(tmp_path, [(model("box", position=(0.0, 0.0, 1.0)), box_body(mass=10.0))], **world)


def test_the_python_api_summary_has_the_realtime_timing_and_the_error_that_stopped_the_run(tmp_path: Path) -> None:
    """What the simulator process's summary has, the Python API's has too: one core makes both."""
    proj, bodies = _box(tmp_path, sync="realtime")
    with hrpsim.Simulation(proj, bodies=bodies) as sim:
        sim.step(20)
        timing = sim.summary()["timing"]
        assert {"jitter_p50_us", "jitter_p99_us", "jitter_max_us", "overruns", "fell_behind"} <= set(timing)
        sim.set_link_data("box", root_velocity=[2e3, 0, 0, 0, 0, 0])
        with pytest.raises(SimulationError, match="model 'box' link"):
            sim.run()
        assert "model 'box' link" in sim.summary()["error"]
