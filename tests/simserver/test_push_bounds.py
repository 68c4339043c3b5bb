"""Pushes cannot take a run down: a force or torque past what the engines integrate is refused naming
the field (from the command line, the API, a project and set_external_force), the largest pushes
allowed end an ODE run through the state guard instead of aborting the simulator, the pushes pending
at once and a project's list are bounded, and a project's ``1e30`` is a number."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from process_helpers import HRPSIM, MODELS
from sim_helpers import start_simserver, wait_finished
from test_disturbances import floating_box

import hrpsim
from hrpsim.errors import ConfigError, RequestError
from hrpsim.project import MAX_PUSH_FORCE_N, MAX_PUSH_POINT_M, MAX_PUSH_TORQUE_NM, MAX_PUSHES, load_project

SAMPLE1 = MODELS / "openhrp3" / "model" / "sample1.wrl"
FLOOR = MODELS / "openhrp3" / "model" / "floor.wrl"


def standing_sample1(folder: Path, disturbances: str = "") -> Path:
    """sample1 held standing on ODE (its joints are hinges: where a non-finite state aborts ODE)."""
    path = folder / "stand.yaml"
    path.write_text(
        "world: {timestep: 0.002, end_time: 0.2, engine: ode}\n"
        "services: {loader: local}\n"
        "models:\n"
        f"  - {{name: floor, file: {FLOOR}, static: true, position: [0, 0, -0.1]}}\n"
        f"  - {{name: robot, file: {SAMPLE1}, position: [0, 0, 0.7235], drive: high_gain}}\n"
        "collisions:\n  - {a: floor, b: robot, friction: 0.5}\n" + disturbances
    )
    return path


def test_a_push_past_the_bound_from_the_command_line_is_refused_and_the_simulator_lives(
    tmp_path: Path, nameserver: str
) -> None:
    proc, client, _ = start_simserver(tmp_path, nameserver, standing_sample1(tmp_path))
    try:
        push = [*HRPSIM, "sim", "--nameserver", nameserver, "push", "robot", "WAIST"]
        huge = subprocess.run(
            [*push, "1e308", "0", "0", "--duration", "0.1"], capture_output=True, text=True, timeout=60
        )
        assert huge.returncode == 1, huge.stdout + huge.stderr
        assert "push.force: at most 1e+09 N in size" in huge.stderr and "Traceback" not in huge.stderr
        twisted = subprocess.run(
            [*push, "1", "0", "0", "--duration", "0.1", "--torque", "0", "0", "2e9"],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert twisted.returncode == 1 and "push.torque: at most 1e+09 N m" in twisted.stderr, twisted.stderr
        with pytest.raises(RequestError, match=r"set_external_force\.force: at most 1e\+09 N"):
            client.call("set_external_force", robot="robot", link="WAIST", force=[1e308, 0.0, 0.0])
        client.call("start", until=0.05)
        assert wait_finished(client)["time"] == pytest.approx(0.05)  # it runs on, unpushed
        assert proc.popen.poll() is None
    finally:
        client.close()
        proc.stop()


def test_the_largest_pushes_allowed_stop_an_ode_run_through_the_state_guard(tmp_path: Path) -> None:
    """Every push the bounds allow at once, at the largest force, torque and lever, on one link: the
    run is stopped with the guard's error, in a simulator process that ends on its own (not aborted)."""
    one = (
        f"  - {{time: 0.01, robot: robot, link: WAIST, force: [{MAX_PUSH_FORCE_N:.0e}, 0, 0], duration: 0.01, "
        f"torque: [0, 0, {MAX_PUSH_TORQUE_NM:.0e}], point: [0, {MAX_PUSH_POINT_M:.0e}, 0]}}\n"
    )
    project = standing_sample1(tmp_path, "disturbances:\n" + one * MAX_PUSHES)
    summary = tmp_path / "summary.json"
    options = ["--nameserver", "tcp://127.0.0.1:*", "--summary", str(summary), "--run-dir", str(tmp_path / "run")]
    done = subprocess.run(
        [*HRPSIM, "launch", str(project), *options, "--quiet"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    report = json.loads(summary.read_text())
    assert "non-finite or exploding state" in report["error"], report["error"]
    assert report["launch"]["components"]["simserver"]["exit_status"] == 0
    assert "INTERNAL ERROR" not in (tmp_path / "run" / "simserver.log").read_text()


def test_pushes_past_the_bound_in_a_project_are_refused_naming_the_field(tmp_path: Path) -> None:
    text = (
        "disturbances:\n"
        "  - {time: 0.1, robot: box, link: body, force: [1.0e+308, 0, 0], duration: 0.1}\n"
        "  - {time: 0.1, robot: box, link: body, force: [1, 0, 0], duration: 0.1, point: [0, 0, 2.0e+3]}\n"
        "  - {time: 0.1, robot: box, link: body, force: [1e30, 0, 0], duration: 0.1}\n"
    )
    with pytest.raises(ConfigError) as err:
        load_project(floating_box(tmp_path, disturbances=text))
    message = str(err.value)
    assert "disturbances[0].force: at most 1e+09 N in size (what the engines can integrate), got 1e+308 N" in message
    assert "disturbances[1].point: at most 1000 m in size" in message
    # YAML reads 1e30 as a string; the project reads the number it is, and that is too large a push
    assert "disturbances[2].force: at most 1e+09 N in size (what the engines can integrate), got 1e+30 N" in message


def test_a_number_written_with_an_exponent_is_a_number(tmp_path: Path) -> None:
    text = "disturbances:\n  - {time: 1e-1, robot: box, link: body, force: [2e1, -1E+1, 5e0], duration: 5e-2}\n"
    push = load_project(floating_box(tmp_path, disturbances=text)).disturbances[0]
    assert (push.time, push.force, push.duration) == (0.1, [20.0, -10.0, 5.0], 0.05)


def test_a_project_with_more_pushes_than_a_run_holds_is_refused(tmp_path: Path) -> None:
    one = "  - {time: 0.1, robot: box, link: body, force: [1, 0, 0], duration: 0.1}\n"
    with pytest.raises(ConfigError, match=rf"disturbances: {MAX_PUSHES + 1} pushes, more than {MAX_PUSHES}"):
        load_project(floating_box(tmp_path, disturbances="disturbances:\n" + one * (MAX_PUSHES + 1)))
    assert len(load_project(floating_box(tmp_path, disturbances="disturbances:\n" + one * MAX_PUSHES)).disturbances)


def test_pushes_pending_at_once_are_bounded(tmp_path: Path) -> None:
    with hrpsim.Simulation(floating_box(tmp_path)) as sim:
        for i in range(MAX_PUSHES):
            sim.push("box", "body", [0.0, 0.0, 0.1], duration=0.001, time=0.001 * (i + 1))
        with pytest.raises(RequestError, match=rf"{MAX_PUSHES} pushes are pending already"):
            sim.push("box", "body", [0.0, 0.0, 0.1], duration=0.001)
        sim.step(11)  # ten of them have acted
        for _ in range(10):
            sim.push("box", "body", [0.0, 0.0, 0.1], duration=0.001)
        with pytest.raises(RequestError, match="pending already"):
            sim.push("box", "body", [0.0, 0.0, 0.1], duration=0.001)
