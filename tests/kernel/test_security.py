"""Keys, roles and the refusal of unauthenticated wide binds, on this host (the two-host runs
are in test_multihost.py). Real processes and real CURVE sockets."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from process_helpers import REPO, spawn, start_nameserver
from sim_helpers import start_simserver, write_box_drop_project

from hrpsim.client import Client
from hrpsim.controllers.link import SimulatorLink
from hrpsim.errors import AccessDenied, PeerGone, RequestError, Timeout
from hrpsim.keys import read_allowed
from hrpsim.naming import NameClient

REFUSED = (AccessDenied, PeerGone, Timeout)  # a refused handshake: whichever the socket notices first


def hrpsim_keys(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "hrpsim", "keys", "new", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=30,
        cwd=REPO,
    )


@pytest.fixture(scope="module")
def made_keys(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A key folder made once by ``hrpsim keys new`` (server, admin, an observer, a controller
    limited to robot 'box'); the tests get copies, so one that revokes or adds a key changes its own."""
    folder = tmp_path_factory.mktemp("made") / "keys"
    for args in (
        [folder],
        [folder, "--name", "eye", "--role", "observer"],
        [folder, "--name", "hand", "--role", "controller", "--robots", "box"],
    ):
        done = hrpsim_keys(*args)
        assert done.returncode == 0, done.stderr
    return folder


@pytest.fixture
def keys(made_keys: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """This test's copy of the key folder (files and their modes as made); this test process uses
    the admin key."""
    folder = tmp_path / "keys"
    shutil.copytree(made_keys, folder)
    monkeypatch.setenv("HRPSIM_KEYS", str(folder))
    monkeypatch.setenv("HRPSIM_KEY", "admin")
    yield folder


def test_keys_new_makes_pairs_and_the_allow_list(keys: Path) -> None:
    grants = {g.name: g for g in read_allowed(keys).values()}
    assert {n: g.role for n, g in grants.items()} == {
        "server": "service",
        "admin": "admin",
        "eye": "observer",
        "hand": "controller",
    }
    assert grants["hand"].robots == ("box",)
    assert (keys / "eye.key_secret").stat().st_mode & 0o077 == 0, "a secret key is for its owner only"
    again = hrpsim_keys(keys, "--name", "eye")
    assert again.returncode == 1 and "exists already" in again.stderr


def test_a_wide_bind_without_keys_is_refused_with_how_to_make_them(tmp_path: Path) -> None:
    proc = spawn(
        ["run", "modelloader", "--bind", "tcp://0.0.0.0:*", "--nameserver", "tcp://127.0.0.1:9"], tmp_path / "wide.log"
    )
    assert proc.popen.wait(30) == 1
    assert "refusing to bind 'tcp://0.0.0.0:*' without keys" in proc.log_text()
    assert "hrpsim keys new DIR" in proc.log_text()


def test_roles_on_a_keyed_simulator(keys: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ns = start_nameserver(tmp_path)
    project = write_box_drop_project(tmp_path, publish_every=5)
    proc, admin, entry = start_simserver(tmp_path, ns.address, project)
    try:
        assert entry["metadata"]["controllers_unix"] is None  # with keys, controllers come through CurveZMQ only
        assert admin.call("step", n=2)["tick"] == 2
        monkeypatch.setenv("HRPSIM_KEY", "eye")
        with Client(entry["endpoint"], peer="simserver", timeout=5.0) as eye:
            assert eye.call("status")["tick"] == 2
            for op, args in (("pause", {}), ("reset", {}), ("init", {}), ("quit", {}), ("step", {"n": 1})):
                with pytest.raises(AccessDenied, match="needs the admin role"):
                    eye.call(op, **args)
            with pytest.raises(AccessDenied, match="needs the controller role"):
                eye.call("command", robot="box", torque=[])
        monkeypatch.setenv("HRPSIM_KEY", "hand")
        with NameClient(ns.address) as names, pytest.raises(AccessDenied, match="registering 'simserver'"):
            names.register("simserver", "simserver", "tcp://127.0.0.1:1", owner="guess")
        monkeypatch.delenv("HRPSIM_KEYS")
        with Client(entry["endpoint"], peer="simserver", timeout=2.0) as nobody, pytest.raises(REFUSED):
            nobody.call("status")
        assert proc.popen.poll() is None
    finally:
        admin.close()
        proc.stop()
        ns.stop()


def test_a_controller_key_drives_only_its_robots(keys: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ns = start_nameserver(tmp_path)
    project = write_box_drop_project(tmp_path, publish_every=5)
    proc, admin, entry = start_simserver(tmp_path, ns.address, project)
    try:
        monkeypatch.setenv("HRPSIM_KEY", "hand")
        link = SimulatorLink(entry["metadata"]["controllers"])
        try:
            with pytest.raises(RequestError, match="may drive only box, not 'floor'"):
                link.attach("c", "floor", period=None, timeout=5.0)
        finally:
            link.close()
    finally:
        admin.close()
        proc.stop()
        ns.stop()


def test_a_revoked_key_is_refused_without_a_restart(
    keys: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ns = start_nameserver(tmp_path)
    try:
        monkeypatch.setenv("HRPSIM_KEY", "eye")
        with NameClient(ns.address) as names:
            assert names.list() == []
        allowed = keys / "allowed"
        allowed.write_text(
            "".join(line for line in allowed.read_text().splitlines(keepends=True) if " eye " not in line)
        )
        with NameClient(ns.address) as names, pytest.raises(REFUSED):
            names.list()
        monkeypatch.setenv("HRPSIM_KEY", "admin")
        with NameClient(ns.address) as names:
            assert names.list() == []
    finally:
        ns.stop()


def test_a_project_names_its_key_folder_for_launch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HRPSIM_KEYS", raising=False)
    assert hrpsim_keys(tmp_path / "keys").returncode == 0
    project = tmp_path / "project.yaml"
    box_drop = (REPO / "examples/box_drop.yaml").read_text().replace("../models/", f"{REPO / 'models'}/")
    project.write_text(box_drop + "security: {keys: keys}\n")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "hrpsim",
            "launch",
            str(project),
            "--until",
            "0.2",
            "--quiet",
            "--nameserver",
            "tcp://127.0.0.1:*",
            "--run-dir",
            str(tmp_path / "run"),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    for component in ("nameserver", "modelloader", "simserver"):
        log = (tmp_path / "run" / f"{component}.log").read_text()
        assert "CurveZMQ with the 'server' key" in log, component


def test_a_controller_on_the_simulators_host_runs_with_its_key(
    keys: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sim_helpers import pendulum_urdf_project, wait_finished

    assert hrpsim_keys(keys, "--name", "pendulum-hand", "--role", "controller", "--robots", "pend").returncode == 0
    ns = start_nameserver(tmp_path)
    project = pendulum_urdf_project(tmp_path, controller="hold", end_time=0.2, start_angle=0.3)
    proc, admin, _ = start_simserver(tmp_path, ns.address, project)
    controller = spawn(
        [
            "controller",
            str(REPO / "examples/controllers/hold_pose.py"),
            "--robot",
            "pend",
            "--name",
            "hold",
            "--nameserver",
            ns.address,
            "--key",
            "pendulum-hand",
        ],
        tmp_path / "controller.log",
    )
    try:
        admin.call("start")  # the controller attaches over ipc:// (same host), CURVE all the same
        status = wait_finished(admin)
        assert status["error"] is None, controller.log_text()
        assert admin.call("summary")["controllers"]["hold"]["ticks"] == 200
    finally:
        admin.close()
        proc.stop()
        controller.stop()
        ns.stop()
