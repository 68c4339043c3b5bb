"""``hrpsim launch --foxglove``: a Foxglove WebSocket client (tests/foxglove_helpers.py, written
from the protocol) subscribes to a live run and receives every link's transform at the rate of
the simulator's world-state stream, and the robot's shapes. Real processes, real sockets."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time
from collections import Counter
from itertools import pairwise
from pathlib import Path

import pytest
from foxglove_helpers import FoxgloveClient, stand_project
from foxglove_helpers import launch as launch_and_record
from process_helpers import HRPSIM, REPO
from websockets.exceptions import ConnectionClosed

from hrpsim.modelloader import load_body
from hrpsim.recording import schemas

TIMESTEP_NS = 2_000_000  # the stand project's world.timestep
PUBLISH_EVERY = 10  # world.publish_every's default: the stream's frames are 10 ticks apart
WANTED_FRAMES = 40


def _stop(proc: subprocess.Popen) -> None:
    """Ctrl-C to the process group, as a user stops it; killed if it has not ended in 120 s."""
    os.killpg(proc.pid, signal.SIGINT)
    try:
        proc.wait(120)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(30)
        raise


def _served_at(log: Path, proc: subprocess.Popen, timeout: float = 120.0) -> str:
    """The ws:// address a server started on port 0 says it got (hrpsim view's "open ws://..." line)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = log.is_file() and re.search(r"open (ws://[0-9.]+:[0-9]+)/", log.read_text(errors="replace"))
        if found:
            return found.group(1)
        assert proc.poll() is None, f"the server's process exited (exit status {proc.returncode})"
        time.sleep(0.1)
    raise AssertionError(f"no Foxglove address in {log} within {timeout:.0f} s")


def test_a_foxglove_client_receives_every_link_at_the_runs_rate(tmp_path: Path, models_dir: Path) -> None:
    project = stand_project(tmp_path, models_dir, end_time=60.0, sync="realtime", record=False)
    argv = [*HRPSIM, "launch", str(project), "--foxglove", "127.0.0.1:0", "--quiet"]
    argv += ["--nameserver", "tcp://127.0.0.1:*", "--run-dir", str(tmp_path / "run")]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    with open(tmp_path / "launch.log", "wb") as log:
        launch = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, cwd=REPO, env=env, start_new_session=True)
    try:
        client = FoxgloveClient(_served_at(tmp_path / "run" / "foxglove.log", launch), timeout=120.0)
        try:
            client.wait_for_channels({schemas.TF_TOPIC, schemas.SCENE_TOPIC}, timeout=120.0)
            client.subscribe([schemas.TF_TOPIC, schemas.SCENE_TOPIC])
            tfs, scenes = [], []
            for topic, log_time, message in client.messages(timeout=120.0):
                (tfs if topic == schemas.TF_TOPIC else scenes).append((log_time, message))
                if len(tfs) >= WANTED_FRAMES and len(scenes) >= 2:
                    break
        finally:
            client.close()
    finally:
        _stop(launch)
    links = {f"robot/{link.name}" for link in load_body(models_dir / "openhrp3/model/sample1.wrl").links}
    assert len(links) == 30
    for _, message in tfs:
        assert links <= {tf["child_frame_id"] for tf in message["transforms"]}
    assert links <= {entity["frame_id"] for entity in scenes[0][1]["entities"]}
    # the scene again without asking: a client whose backlog dropped it still gets the robot's shapes
    assert scenes[1][1] == scenes[0][1]
    steps = [b - a for (a, _), (b, _) in pairwise(tfs)]
    period = PUBLISH_EVERY * TIMESTEP_NS
    assert all(step > 0 and step % period == 0 for step in steps), steps  # a slow client may lose frames
    assert min(steps) == period, steps  # frames one stream period apart: the run's rate, not a subsample


@pytest.fixture(scope="module")
def stand_recording(tmp_path_factory: pytest.TempPathFactory, models_dir: Path) -> Path:
    """The standing humanoid recorded once: the tests that serve it with hrpsim view only read it."""
    folder = tmp_path_factory.mktemp("stand")
    launch_and_record(stand_project(folder, models_dir), folder)
    return folder / "stand.mcap"


def test_view_serves_a_recording_to_foxglove(tmp_path: Path, models_dir: Path, stand_recording: Path) -> None:
    argv = [*HRPSIM, "view", str(stand_recording), "--foxglove", "127.0.0.1:0", "--duration", "120"]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    with open(tmp_path / "view.log", "wb") as log:
        view = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, cwd=REPO, env=env, start_new_session=True)
    try:
        client = FoxgloveClient(_served_at(tmp_path / "view.log", view), timeout=120.0)
        try:
            topics = {schemas.TF_TOPIC, schemas.SCENE_TOPIC, schemas.joint_states_topic("robot")}
            client.wait_for_channels(topics, timeout=120.0)
            client.subscribe(sorted(topics))
            received: dict[str, dict] = {}
            counts: Counter[str] = Counter()
            try:
                for topic, _, message in client.messages(timeout=120.0):
                    received[topic], counts[topic] = message, counts[topic] + 1
                    if set(received) == topics:
                        break
            except ConnectionClosed:  # the view's --duration ran out: say what came before it did
                raise AssertionError(f"only {dict(counts)} in 120 s; the view's log: {_tail(tmp_path)}") from None
        finally:
            client.close()
    finally:
        _stop(view)
    body = load_body(models_dir / "openhrp3/model/sample1.wrl")
    assert {f"robot/{lk.name}" for lk in body.links} <= {e["id"] for e in received[schemas.SCENE_TOPIC]["entities"]}
    assert [j["name"] for j in received[schemas.joint_states_topic("robot")]["joints"]] == body.joint_names


def _tail(folder: Path) -> str:
    return (folder / "view.log").read_text(errors="replace")[-2000:]


def test_foxglove_beyond_loopback_without_keys_or_insecure_is_refused(tmp_path: Path, models_dir: Path) -> None:
    project = stand_project(tmp_path, models_dir, record=False)
    env = {k: v for k, v in os.environ.items() if not k.startswith("HRPSIM_")} | {"PYTHONPATH": str(REPO)}
    run = subprocess.run(
        [*HRPSIM, "launch", str(project), "--foxglove", "0.0.0.0:0", "--run-dir", str(tmp_path / "run")],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
        env=env,
    )
    assert run.returncode == 2
    assert "refusing to bind" in run.stderr and "--insecure" in run.stderr and "Traceback" not in run.stderr


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_view_started_with_ctrl_c_ignored_still_stops_on_it(
    tmp_path: Path, stand_recording: Path, signum: int
) -> None:
    """A server started in the background of a script inherits SIGINT ignored; hrpsim view stops on
    Ctrl-C (and SIGTERM) all the same, as at the end of --duration."""
    argv = [*HRPSIM, "view", str(stand_recording), "--foxglove", "127.0.0.1:0", "--duration", "600"]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    with open(tmp_path / "view.log", "wb") as log:
        view = subprocess.Popen(
            argv,
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=REPO,
            env=env,
            start_new_session=True,
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
        )
    try:
        _served_at(tmp_path / "view.log", view)
        view.send_signal(signum)
        assert view.wait(120) == 0, (tmp_path / "view.log").read_text()
    finally:
        if view.poll() is None:
            view.kill()
            view.wait(30)


def _without_keys() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("HRPSIM_")} | {"PYTHONPATH": str(REPO)}


@pytest.mark.parametrize("what", ["recording", "live"])
def test_the_3d_view_beyond_loopback_without_keys_or_insecure_is_refused(stand_recording: Path, what: str) -> None:
    """As every other server: refused before anything is read or looked up (no simulator runs here)."""
    source = [str(stand_recording)] if what == "recording" else ["--live", "--nameserver", "tcp://127.0.0.1:9"]
    run = subprocess.run(
        [*HRPSIM, "view", *source, "--host", "0.0.0.0", "--port", "0"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
        env=_without_keys(),
    )
    assert run.returncode == 2, run.stdout + run.stderr
    assert "the 3D view (--host): refusing to bind 'tcp://0.0.0.0:0' without keys" in run.stderr
    assert "--insecure" in run.stderr and "Traceback" not in run.stderr


def test_the_3d_view_beyond_loopback_with_insecure_serves_and_warns(tmp_path: Path, stand_recording: Path) -> None:
    argv = [
        *HRPSIM,
        "view",
        str(stand_recording),
        "--host",
        "0.0.0.0",
        "--port",
        "0",
        "--duration",
        "600",
        "--insecure",
    ]
    with open(tmp_path / "view.log", "wb") as log:
        view = subprocess.Popen(
            argv, stdout=log, stderr=subprocess.STDOUT, cwd=REPO, env=_without_keys(), start_new_session=True
        )
    try:
        deadline = time.monotonic() + 120
        while "open http://0.0.0.0:" not in (tmp_path / "view.log").read_text(errors="replace"):
            assert view.poll() is None and time.monotonic() < deadline, (tmp_path / "view.log").read_text()
            time.sleep(0.1)
    finally:
        _stop(view)
    text = (tmp_path / "view.log").read_text(errors="replace")
    assert "WITHOUT authentication (--insecure)" in text and "is not authenticated: anyone who reaches it" in text
    assert view.returncode == 0, text


def test_ctrl_c_of_a_launch_with_both_viewers_ends_them_cleanly(tmp_path: Path, models_dir: Path) -> None:
    """Ctrl-C of ``hrpsim launch --foxglove --view`` while both follow the run, after a Foxglove client
    came and went: both viewers end with status 0, neither aborted by libzmq nor logging an error."""
    project = stand_project(tmp_path, models_dir, end_time=600.0, record=False)
    run, summary = tmp_path / "run", tmp_path / "summary.json"
    argv = [*HRPSIM, "launch", str(project), "--foxglove", "127.0.0.1:0", "--view", "0", "--quiet"]
    argv += ["--nameserver", "tcp://127.0.0.1:*", "--run-dir", str(run), "--summary", str(summary)]
    with open(tmp_path / "launch.log", "wb") as log:
        launch = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, cwd=REPO, start_new_session=True)
    try:
        client = FoxgloveClient(_served_at(run / "foxglove.log", launch), timeout=120.0)
        try:
            client.wait_for_channels({schemas.SCENE_TOPIC}, timeout=120.0)
            client.subscribe([schemas.SCENE_TOPIC])
            next(client.messages(timeout=120.0))
        finally:
            client.close()  # the server's listener hears the unsubscribe
        deadline = time.monotonic() + 120
        while "following" not in (run / "viewer.log").read_text(errors="replace"):
            assert launch.poll() is None and time.monotonic() < deadline, (run / "viewer.log").read_text()
            time.sleep(0.1)
    finally:
        _stop(launch)
    assert launch.returncode == 130, (tmp_path / "launch.log").read_text()
    components = json.loads(summary.read_text())["launch"]["components"]
    for viewer in ("viewer", "foxglove"):
        text = (run / f"{viewer}.log").read_text(errors="replace")
        assert components[viewer]["exit_status"] == 0, text[-2000:]
        assert "Assertion failed" not in text and "Error" not in text, text[-2000:]
