"""`hrpsim launch` starts its components together and each waits for what it needs: a service started
before its nameserver serves finds it through the address file the launcher writes; a controller
starts while its simulator still waits for models, and the run starts once all have come up. Real
processes."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path

import psutil
from process_helpers import HRPSIM, REPO, spawn, start_nameserver, wait_registered

from hrpsim.errors import NotFound
from hrpsim.naming import ADDRESS_FILE, NameClient, write_address_file

DEADLINE_S = 120.0
WALK = REPO / "examples" / "sample_walk.yaml"


def test_a_service_started_before_its_nameserver_finds_it_through_the_address_file(tmp_path: Path) -> None:
    address_file = tmp_path / "nameserver.address"
    argv = ["run", "modelloader", "--nameserver", f"{ADDRESS_FILE}{address_file}"]
    loader = spawn(argv, tmp_path / "ml.log", env={"HRPSIM_LOG_LEVEL": "INFO"})
    nameserver = None
    try:
        deadline = time.monotonic() + DEADLINE_S
        while "waiting for the nameserver's address" not in loader.log_text():
            assert loader.popen.poll() is None and time.monotonic() < deadline, loader.log_text()
            time.sleep(0.05)
        nameserver = start_nameserver(tmp_path)
        write_address_file(address_file, nameserver.address)
        entry = wait_registered(nameserver.address, "modelloader", loader, timeout=DEADLINE_S)
        assert entry["metadata"]["pid"] == loader.pid
    finally:
        loader.stop()
        if nameserver is not None:
            nameserver.stop()


def _controller(launch: subprocess.Popen) -> psutil.Process | None:
    for process in psutil.Process(launch.pid).children(recursive=True):
        try:
            if any(arg.endswith("sample_walk.py") for arg in process.cmdline()):
                return process
        except psutil.Error:
            continue
    return None


def test_a_controller_starts_while_its_simulator_waits_for_its_modelloader(tmp_path: Path) -> None:
    """The stack joins a nameserver where a modelloader runs, stopped (SIGSTOP): the simulator cannot
    load its models, and so cannot register, until it is continued. The controller starts meanwhile;
    once the modelloader goes on, the simulator comes up, the controller attaches and the run finishes."""
    nameserver = start_nameserver(tmp_path, ttl=600.0)  # the stopped modelloader stays registered
    loader = spawn(["run", "modelloader", "--nameserver", nameserver.address], tmp_path / "ml.log")
    launch = None
    try:
        wait_registered(nameserver.address, "modelloader", loader, timeout=DEADLINE_S)
        psutil.Process(loader.pid).suspend()
        summary = tmp_path / "summary.json"
        argv = [*HRPSIM, "launch", str(WALK), "--join", nameserver.address, "--until", "0.05", "--quiet"]
        launch = subprocess.Popen(
            [*argv, "--run-dir", str(tmp_path / "run"), "--summary", str(summary)],
            cwd=REPO,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + DEADLINE_S
        while _controller(launch) is None:
            assert launch.poll() is None and time.monotonic() < deadline, "the controller never started"
            time.sleep(0.05)
        with NameClient(nameserver.address, timeout=5.0) as ns:
            try:
                ns.resolve("simserver")
                raise AssertionError("the simulator registered without its models")
            except NotFound:
                pass
        psutil.Process(loader.pid).resume()
        assert launch.wait(DEADLINE_S) == 0
        done = json.loads(summary.read_text())
        assert done["error"] is None and done["controllers"]["walker"]["ticks"] > 0
    finally:
        if launch is not None and launch.poll() is None:
            launch.send_signal(signal.SIGKILL)
            launch.wait(30)
        psutil.Process(loader.pid).resume()
        loader.stop()
        nameserver.stop()
