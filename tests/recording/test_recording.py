"""Recording a run to MCAP, and reading, replaying and plotting it: real processes, real files.

The sample walk is recorded once (``hrpsim launch --record``) and shared by the tests here.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import psutil
import pytest
from mcap.reader import make_reader
from mcap.records import Attachment, Channel, Message, Metadata, Schema
from mcap.stream_reader import StreamReader
from mcap.writer import Writer
from process_helpers import REPO, start_nameserver
from sim_helpers import start_simserver

from hrpsim.recording import schemas
from hrpsim.recording.handoff import HOLD_FRAMES
from hrpsim.recording.reader import open_recording
from hrpsim.recording.writer import FLUSH_EVERY_S

HRPSIM = [sys.executable, "-m", "hrpsim"]
WALK = REPO / "examples" / "sample_walk.yaml"


def hrpsim(*args: str, timeout: float = 300.0) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([*HRPSIM, *args], capture_output=True, text=True, timeout=timeout, cwd=REPO, env=env)


@pytest.fixture(scope="module")
def walk(tmp_path_factory: pytest.TempPathFactory, models_dir: Path) -> tuple[Path, dict]:
    """The sample walk recorded to an MCAP file, and its run summary."""
    folder = tmp_path_factory.mktemp("walk")
    out, summary = folder / "walk.mcap", folder / "summary.json"
    run = hrpsim(
        "launch",
        str(WALK),
        "--record",
        str(out),
        "--summary",
        str(summary),
        "--quiet",
        "--nameserver",
        "tcp://127.0.0.1:*",
        "--run-dir",
        str(folder / "run"),
    )
    assert run.returncode == 0, run.stdout + run.stderr
    return out, json.loads(summary.read_text())


def test_the_mcap_library_alone_finds_one_state_per_tick_with_the_summary_figures(walk: tuple[Path, dict]) -> None:
    path, summary = walk
    with open(path, "rb") as handle:
        reader = make_reader(handle)
        states = [json.loads(m.data) for _, _, m in reader.iter_messages(topics=[schemas.state_topic("robot")])]
        metadata = {m.name: m.metadata for m in reader.iter_metadata()}
        attachments = {a.name: a.data for a in reader.iter_attachments()}
        channels = {c.topic: c for c in reader.get_summary().channels.values()}
    ticks = summary["ticks"]
    assert [s["tick"] for s in states] == list(range(ticks + 1))  # one per tick, and the state it ended in
    assert states[0]["root_position"] == summary["robots"]["robot"]["root_start"]
    assert states[-1]["root_position"] == summary["robots"]["robot"]["root_end"]
    lowest = min(s["root_position"][2] for s in states)
    assert lowest == pytest.approx(summary["robots"]["robot"]["min_root_z"], abs=0.01)  # origin vs centre of mass
    recorded = json.loads(metadata[schemas.META_SUMMARY]["json"])
    assert recorded["ticks"] == ticks and recorded["robots"] == summary["robots"]
    assert json.loads(channels[schemas.state_topic("robot")].metadata["joints"])[3] == "RLEG_KNEE"
    assert schemas.TF_TOPIC in channels and schemas.command_topic("walker") in channels
    files = metadata[schemas.META_FILES]
    assert str(WALK.resolve()) in files and any(p.endswith("sample1.wrl") for p in files)
    import hashlib

    for name, digest in files.items():
        assert hashlib.sha256(attachments[name]).hexdigest() == digest


def test_link_poses_go_out_as_foxglove_frame_transforms(walk: tuple[Path, dict]) -> None:
    path, _ = walk
    with open(path, "rb") as handle:
        reader = make_reader(handle)
        schema, _, message = next(reader.iter_messages(topics=[schemas.TF_TOPIC]))
    assert schema.name == "foxglove.FrameTransforms" and schema.encoding == "jsonschema"
    frames = json.loads(message.data)["transforms"]
    children = {f["child_frame_id"] for f in frames}
    assert "robot/WAIST" in children and any(c.startswith("floor/") for c in children)  # static models too
    assert all(f["parent_frame_id"] == "world" and set(f["rotation"]) == set("xyzw") for f in frames)


def test_replay_reproduces_the_walk_bit_for_bit(walk: tuple[Path, dict]) -> None:
    path, summary = walk
    run = hrpsim("replay", str(path))
    assert run.returncode == 0, run.stdout + run.stderr
    assert f"over {summary['ticks']} ticks reproduced bit-identically" in run.stdout


def test_replay_names_the_first_tick_and_field_that_differs(walk: tuple[Path, dict], tmp_path: Path) -> None:
    path, _ = walk
    altered = tmp_path / "altered.mcap"
    _copy_changing_one_state(path, altered, tick=300, joint_index=3)
    run = hrpsim("replay", str(altered))
    assert run.returncode == 1, run.stdout + run.stderr
    assert "tick 300" in run.stdout and "q[RLEG_KNEE]" in run.stdout


def _copy_changing_one_state(source: Path, target: Path, *, tick: int, joint_index: int) -> None:
    """A copy of a recording whose q[joint_index] at ``tick`` is one ulp off, written with mcap."""
    with open(source, "rb") as handle, open(target, "wb") as out:
        writer = Writer(out)
        writer.start(profile=schemas.PROFILE)
        schema_ids, channel_ids, topics = {}, {}, {}
        for record in StreamReader(handle).records:
            if isinstance(record, Schema) and record.id not in schema_ids:  # the summary repeats them
                schema_ids[record.id] = writer.register_schema(record.name, record.encoding, record.data)
            elif isinstance(record, Channel) and record.id not in channel_ids:
                topics[record.id] = record.topic
                channel_ids[record.id] = writer.register_channel(
                    record.topic, record.message_encoding, schema_ids[record.schema_id], record.metadata
                )
            elif isinstance(record, Message):
                data = record.data
                if topics[record.channel_id] == schemas.state_topic("robot"):
                    state = json.loads(data)
                    if state["tick"] == tick:
                        state["q"][joint_index] = float(np.nextafter(state["q"][joint_index], np.inf))
                        data = json.dumps(state).encode()
                writer.add_message(channel_ids[record.channel_id], record.log_time, data, record.publish_time)
            elif isinstance(record, Metadata):
                writer.add_metadata(record.name, record.metadata)
            elif isinstance(record, Attachment):
                writer.add_attachment(record.create_time, record.log_time, record.name, record.media_type, record.data)
        writer.finish()


def test_plots_of_two_joints_differ_and_the_csv_holds_the_recorded_values(
    walk: tuple[Path, dict], tmp_path: Path
) -> None:
    import matplotlib.image

    path, _ = walk
    knee, elbow, csv = tmp_path / "knee.png", tmp_path / "elbow.png", tmp_path / "knee.csv"
    for joint, png in (("RLEG_KNEE", knee), ("LARM_ELBOW", elbow)):
        run = hrpsim(
            "plot",
            str(path),
            "--joint",
            joint,
            "--field",
            "q,tau",
            "-o",
            str(png),
            *(["--csv", str(csv)] if joint == "RLEG_KNEE" else []),
        )
        assert run.returncode == 0, run.stderr
    a, b = matplotlib.image.imread(knee), matplotlib.image.imread(elbow)
    assert a.shape == b.shape and np.any(a != b)
    rows = np.loadtxt(csv, delimiter=",", skiprows=1)
    series = open_recording(path).series("robot")
    assert np.array_equal(rows[:, 1], series.fields["q"][:, 3]) and np.array_equal(rows[:, 0], series.time)


def test_plot_of_a_sensor_and_of_the_root(walk: tuple[Path, dict], tmp_path: Path) -> None:
    path, _ = walk
    csv = tmp_path / "hand.csv"
    run = hrpsim("plot", str(path), "--sensor", "rhsensor", "--field", "fz", "--csv", str(csv))
    assert run.returncode == 0, run.stderr
    fz = np.loadtxt(csv, delimiter=",", skiprows=1)[:, 1]
    assert fz.max() - fz.min() > 0  # the hand touches the box: the wrist sensor feels it
    run = hrpsim("plot", str(path), "--root", "-o", str(tmp_path / "root.png"))
    assert run.returncode == 0 and (tmp_path / "root.png").stat().st_size > 0


@pytest.mark.parametrize(
    "args, words",
    [
        (["--joint", "NO_SUCH_JOINT"], "no joint 'NO_SUCH_JOINT'"),
        (["--sensor", "nosensor"], "no sensor 'nosensor'"),
        (["--controller", "walker", "--field", "nofield"], "no numeric field 'nofield'"),
    ],
)
def test_a_name_not_in_the_recording_is_a_one_line_error(
    walk: tuple[Path, dict], tmp_path: Path, args: list[str], words: str
) -> None:
    path, _ = walk
    run = hrpsim("plot", str(path), *args, "-o", str(tmp_path / "x.png"))
    assert run.returncode == 2
    assert words in run.stderr and len(run.stderr.strip().splitlines()) == 1


def test_a_file_that_is_not_mcap_or_is_cut_before_its_first_ticks_is_a_one_line_error(
    walk: tuple[Path, dict], tmp_path: Path
) -> None:
    path, _ = walk
    text = tmp_path / "notes.mcap"
    text.write_text("this is not a recording\n")
    cut = tmp_path / "cut.mcap"
    cut.write_bytes(path.read_bytes()[:4096])
    for bad, words in ((text, "not an MCAP file"), (cut, "truncated")):
        for command in (
            ["plot", str(bad), "--root", "-o", str(tmp_path / "x.png")],
            ["replay", str(bad)],
            ["view", str(bad), "--port", "0", "--duration", "1"],
        ):
            run = hrpsim(*command)
            assert run.returncode == 2, (command, run.stderr)
            assert words in run.stderr and len(run.stderr.strip().splitlines()) == 1, run.stderr


def test_a_port_in_use_is_a_one_line_error(walk: tuple[Path, dict]) -> None:
    path, _ = walk
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        run = hrpsim("view", str(path), "--port", str(port), "--duration", "1")
    assert run.returncode == 2
    assert f"port {port}" in run.stderr and "in use" in run.stderr and len(run.stderr.strip().splitlines()) == 1


STAND = """world: {{timestep: 0.002, end_time: 60.0}}
services: {{loader: local}}
models:
  - {{name: floor, file: {models}/openhrp3/model/floor.wrl, static: true, position: [0, 0, -0.1]}}
  - {{name: robot, file: {models}/openhrp3/model/sample1.wrl, position: [0, 0, 0.7235], drive: high_gain}}
collisions:
  - {{a: floor, b: robot}}
"""


def _record_and_kill(
    tmp_path: Path, models_dir: Path, *, group: bool, before: str = "pause"
) -> tuple[Path, float, list[psutil.Process]]:
    """A standing robot recorded for 2 s, then SIGKILLed: the simulator alone, or its whole
    process group (the simulator and its writer, as a power loss would). ``before`` the kill it is
    paused, paused and stepped 3 ticks, or left running. (file, the time the simulator last
    reported, the simulator's children before the kill)."""
    project = tmp_path / "stand.yaml"
    project.write_text(STAND.format(models=models_dir))
    out = tmp_path / "killed.mcap"
    ns = start_nameserver(tmp_path)
    try:
        sim, client, _ = start_simserver(tmp_path, ns.address, project, "--record", str(out), "--start")
        try:
            while client.call("status")["time"] < 2.0:
                time.sleep(0.05)
            # paused, the simulation stands still from here; running, it goes on until the kill
            killed_at = client.call("status" if before == "running" else "pause")["time"]
            if before == "step":
                killed_at = client.call("step", n=3)["time"]
            children = psutil.Process(sim.pid).children()
            if group:
                os.killpg(sim.pid, signal.SIGKILL)
            else:
                os.kill(sim.pid, signal.SIGKILL)
            sim.popen.wait(10)
        finally:
            client.close()
            sim.stop()
    finally:
        ns.stop()
    return out, killed_at, children


def test_a_killed_simulators_writer_finishes_the_file_with_every_tick_and_exits(
    tmp_path: Path, models_dir: Path
) -> None:
    out, killed_at, children = _record_and_kill(tmp_path, models_dir, group=False)
    assert len(children) == 1, children  # the writer process
    _, alive = psutil.wait_procs(children, timeout=60)
    assert not alive, f"the writer process outlived its simulator: {alive}"
    with open(out, "rb") as handle:  # finished: the seeking reader takes it, index and all
        reader = make_reader(handle)
        states = [json.loads(m.data) for _, _, m in reader.iter_messages(topics=[schemas.state_topic("robot")])]
        metadata = {m.name for m in reader.iter_metadata()}
    assert [s["tick"] for s in states] == list(range(len(states)))
    assert states[-1]["time"] == pytest.approx(killed_at - 0.002, abs=1e-9)  # every tick before the pause
    assert schemas.META_PROJECT in metadata and schemas.META_SUMMARY not in metadata  # the run never ended
    rec = open_recording(out)
    assert rec.complete and rec.series("robot").time[-1] == states[-1]["time"]


@pytest.mark.parametrize("before", ["step", "running"])
def test_a_simulator_killed_after_steps_or_while_running_loses_no_tick_it_handed_over(
    tmp_path: Path, models_dir: Path, before: str
) -> None:
    """The recorder holds up to HOLD_FRAMES ticks before a pipe write; steps served are handed
    over at once, and a running simulator loses at most the ticks it was holding."""
    out, killed_at, _ = _record_and_kill(tmp_path, models_dir, group=False, before=before)
    rec = open_recording(out)
    times = rec.series("robot").time
    assert rec.complete and np.all(np.diff(times) > 0)
    if before == "step":
        assert times[-1] == pytest.approx(killed_at - 0.002, abs=1e-9)
    else:
        assert times[-1] >= killed_at - HOLD_FRAMES * 0.002 - 1e-9


def test_a_recording_killed_with_its_writer_reads_back_up_to_the_stated_bound(tmp_path: Path, models_dir: Path) -> None:
    out, killed_at, _ = _record_and_kill(tmp_path, models_dir, group=True)
    with open(out, "rb") as handle, pytest.raises(Exception):  # noqa: B017 - the seeking reader refuses it
        list(make_reader(handle).iter_messages())
    rec = open_recording(out)
    assert not rec.complete and rec.cut_note
    times = rec.series("robot").time
    assert times[0] == 0.0 and np.all(np.diff(times) > 0)
    assert times[-1] >= killed_at - 2 * FLUSH_EVERY_S - 0.002


def _serve_view(path: Path, at: float, log: Path) -> tuple[subprocess.Popen, str]:
    """``hrpsim view`` on a free port, paused at ``at``; (process, its URL)."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    with open(log, "wb") as errors:
        proc = subprocess.Popen(
            [*HRPSIM, "view", str(path), "--port", "0", "--at", repr(at), "--duration", "600"],
            stdout=subprocess.PIPE,
            stderr=errors,
            text=True,
            cwd=REPO,
            env=env,
            start_new_session=True,
        )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if "open http" in line:
            return proc, line.split("open ", 1)[1].split()[0]
        if not line and proc.poll() is not None:
            break
    proc.kill()
    raise AssertionError(f"hrpsim view did not start: {log.read_text()}")


SCENE = (slice(160, None), slice(0, 640))  # below the renderer's notice, left of the control panel


def _chromium_screenshot(url: str, out: Path, budget_ms: int) -> np.ndarray:
    import matplotlib.image

    chromium = shutil.which("chromium")
    assert chromium, "Debian's chromium is missing: make install (scripts/bootstrap.sh) installs it"
    subprocess.run(
        [
            chromium,
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--use-gl=swiftshader",
            "--enable-unsafe-swiftshader",
            # no connections of its own: this machine has no network beyond loopback
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-quic",
            "--no-first-run",
            "--window-size=1000,700",
            f"--virtual-time-budget={budget_ms}",
            f"--user-data-dir={out.parent / f'chromium-{out.stem}'}",
            f"--screenshot={out}",
            url,
        ],
        capture_output=True,
        timeout=150,
        check=True,
    )
    return matplotlib.image.imread(out)[..., :3]


def _drawn(shot: np.ndarray) -> bool:
    """Whether the scene has been drawn: a blank page is one colour."""
    scene = shot[SCENE]
    return bool(np.any(np.abs(scene - scene[0, 0]) > 0.1))


def _screenshot(url: str, out: Path, timeout: float = 400.0) -> np.ndarray:
    """A screenshot of the page once it has drawn its scene and the scene no longer changes: two shots
    in a row agree. A busy machine only makes this take longer, never pass or fail differently."""
    deadline = time.monotonic() + timeout
    previous, budget, attempt = None, 10_000, 0
    while True:
        attempt += 1
        try:
            shot = _chromium_screenshot(url, out.with_name(f"{out.stem}-{attempt}.png"), budget)
        except subprocess.TimeoutExpired:
            shot = None  # a headless browser that hung on a loaded machine: try again
        if shot is not None and _drawn(shot):
            if previous is not None and np.mean(np.any(np.abs(shot[SCENE] - previous[SCENE]) > 0.1, axis=-1)) < 0.002:
                return shot
            previous = shot
        assert time.monotonic() < deadline, f"the page at {url} drew no steady scene in {timeout:.0f} s"
        budget = min(budget * 2, 60_000)


def test_the_viewer_in_headless_chromium_shows_the_robot_where_it_was(walk: tuple[Path, dict], tmp_path: Path) -> None:
    path, summary = walk
    shots = []
    for at in (0.5, summary["sim_time"] - 0.5):
        proc, url = _serve_view(path, at, tmp_path / f"view-{at}.log")
        try:
            shots.append(_screenshot(url, tmp_path / f"view-{at:.1f}.png"))
        finally:
            os.killpg(proc.pid, signal.SIGINT)
            proc.wait(60)  # the view ends within its STOP_GRACE_S of Ctrl-C
    changed = np.any(np.abs(shots[0][SCENE] - shots[1][SCENE]) > 0.1, axis=-1)
    # the robot moved: part of the picture changed, not all of it (the floor and the grid stay)
    assert 0 < changed.mean() < 0.25


def _wait_for_line(proc: subprocess.Popen, words: str, timeout: float = 120.0) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if words in line:
            return line
        if not line and proc.poll() is not None:
            break
    raise AssertionError(f"no line with {words!r} from the viewer (exit status {proc.poll()})")


def test_the_live_view_follows_a_running_simulator(tmp_path: Path, models_dir: Path) -> None:
    project = tmp_path / "stand.yaml"
    project.write_text(STAND.format(models=models_dir).replace("end_time: 60.0", "end_time: 2.0"))
    ns = start_nameserver(tmp_path)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    try:
        sim, client, _ = start_simserver(tmp_path, ns.address, project)
        with open(tmp_path / "view.log", "wb") as errors:
            view = subprocess.Popen(
                [*HRPSIM, "view", "--live", "--nameserver", ns.address, "--port", "0", "--duration", "120"],
                stdout=subprocess.PIPE,
                stderr=errors,
                text=True,
                cwd=REPO,
                env=env,
                start_new_session=True,
            )
        try:
            _wait_for_line(view, "open http")
            client.call("start")
            line = _wait_for_line(view, "following simserver from t=")
            assert float(line.split("t=")[1].split()[0]) >= 0.0
        finally:
            try:
                os.killpg(view.pid, signal.SIGINT)
                view.wait(60)  # the view ends within its STOP_GRACE_S of Ctrl-C
            finally:
                client.close()
                sim.stop()  # whatever the view did: a simulator left behind would outlive the suite
    finally:
        ns.stop()


def test_replay_with_a_controller_starts_from_the_recorded_start(walk: tuple[Path, dict], tmp_path: Path) -> None:
    path, _ = walk
    again = tmp_path / "again.mcap"
    run = hrpsim(
        "replay",
        str(path),
        "--controller",
        "python examples/controllers/sample_walk.py",
        "--until",
        "0.5",
        "--record",
        str(again),
    )
    assert run.returncode == 0, run.stdout + run.stderr
    first, second = open_recording(path).series("robot"), open_recording(again).series("robot")
    n = len(second.time)
    assert n == 251 and np.array_equal(first.time[:n], second.time)
    # the same controller from the same start in lockstep: the same run
    assert np.array_equal(first.fields["q"][:n], second.fields["q"])


def test_force_sensors_read_zeros_before_the_first_step(models_dir: Path) -> None:
    """ODE fills joint feedback during a step: read before one, it was uninitialised memory, so
    the state of tick 0 differed from run to run and a replay could not reproduce it."""
    from hrpsim.engines.base import make_engine
    from hrpsim.project import load_project
    from hrpsim.simserver.bodies import load_bodies

    project = load_project(WALK)  # torque-driven: the joints carry the links' weight
    project.services["loader"] = "local"
    engine = make_engine(project, load_bodies(project, None))
    try:
        readings = engine.read("robot").sensors
        forces = [name for name, s in zip(readings, readings.values(), strict=True) if len(s) == 6]
        assert forces and all(np.array_equal(readings[name], np.zeros(6)) for name in forces)
        engine.step()
        assert any(np.any(engine.read("robot").sensors[name] != 0.0) for name in forces)
    finally:
        engine.release()


@pytest.mark.parametrize("project_file", ["sample_walk.yaml", "sample_walk_mujoco.yaml"])
def test_contacts_recorded_when_asked_are_the_feet_on_the_floor(
    project_file: str, tmp_path: Path, models_dir: Path
) -> None:
    """record: {contacts: true}: one /contacts message per tick; once the robot stands, its soles
    touch the floor, each point's normal pushing the robot up."""
    import hrpsim
    from hrpsim.project import load_project
    from hrpsim.recording.writer import Recorder

    out = tmp_path / "contacts.mcap"
    project = load_project(REPO / "examples" / project_file)
    project.controllers = []  # the walker runs as a process; here the test holds the pose itself
    with hrpsim.Simulation(project, observers=[Recorder(out, contacts=True)]) as sim:
        names = sim.engine.body("robot").joint_names
        sim.command("robot", q_ref=sim.state("robot").q, dq_ref=np.zeros(len(names)))
        sim.step(300)
    with out.open("rb") as stream:
        messages = [
            json.loads(message.data)
            for _, channel, message in make_reader(stream).iter_messages()
            if channel.topic == schemas.CONTACTS_TOPIC
        ]
    assert [m["tick"] for m in messages] == list(range(300))
    standing = messages[-1]["contacts"]
    assert standing, "a standing robot touches the floor"
    for point in standing:
        robot_side = point["a"] if point["a"].startswith("robot/") else point["b"]
        assert {point["a"].split("/")[0], point["b"].split("/")[0]} == {"robot", "floor"}
        assert "LEG_ANKLE" in robot_side  # the soles are on the ankle links
        up = point["normal"][2] if point["a"].startswith("robot/") else -point["normal"][2]
        assert up > 0.99 and abs(point["position"][2]) < 0.01 and point["depth"] > -1e-3
