"""The stack split over two hosts: a network namespace is the second machine.

Host A is this machine's own namespace (nameserver, modelloader, controller, the test itself);
host B is a network namespace joined to A by a veth pair and runs the simulator. Nothing is
reachable by loopback across them, so every endpoint the processes register must be one the
other host can reach.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from process_helpers import REPO, ManagedProcess, model_roots_for, wait_for_file

from hrpsim.client import Client
from hrpsim.errors import NotFound
from hrpsim.naming import NameClient


@dataclass
class TwoHosts:
    namespace: str
    address_a: str
    address_b: str


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, timeout=10)


@pytest.fixture
def two_hosts() -> Iterator[TwoHosts]:
    if os.geteuid() != 0 or shutil.which("ip") is None:
        pytest.skip("needs root and iproute2 to make a network namespace as the second host")
    tag = os.getpid() % 200 + 20
    ns, veth_a, veth_b = f"hrpsim-b{tag}", f"hrpa{tag}", f"hrpb{tag}"
    a, b = f"10.213.{tag}.1", f"10.213.{tag}.2"
    subprocess.run(["ip", "netns", "del", ns], capture_output=True, timeout=10)
    try:
        _ip("netns", "add", ns)
    except subprocess.CalledProcessError as exc:
        pytest.skip(f"cannot create a network namespace here: {exc.stderr.decode().strip()}")
    try:
        _ip("link", "add", veth_a, "type", "veth", "peer", "name", veth_b)
        _ip("link", "set", veth_b, "netns", ns)
        _ip("addr", "add", f"{a}/24", "dev", veth_a)
        _ip("link", "set", veth_a, "up")
        _ip("netns", "exec", ns, "ip", "addr", "add", f"{b}/24", "dev", veth_b)
        _ip("netns", "exec", ns, "ip", "link", "set", veth_b, "up")
        _ip("netns", "exec", ns, "ip", "link", "set", "lo", "up")
        yield TwoHosts(ns, a, b)
    finally:
        subprocess.run(["ip", "netns", "del", ns], capture_output=True, timeout=10)
        subprocess.run(["ip", "link", "del", veth_a], capture_output=True, timeout=10)


def start(args: list[str], log: Path, *, advertise: str, namespace: str | None = None) -> ManagedProcess:
    prefix = ["ip", "netns", "exec", namespace] if namespace else []
    env = {**os.environ, "HRPSIM_ADVERTISE_HOST": advertise, "PYTHONPATH": str(REPO),
           "HRPSIM_MODEL_ROOTS": model_roots_for(log.parent)}
    with open(log, "wb") as out:
        popen = subprocess.Popen([*prefix, sys.executable, "-m", "hrpsim", *args], stdout=out,
                                 stderr=subprocess.STDOUT, cwd=REPO, env=env, start_new_session=True)
    return ManagedProcess(popen, log)


def wait_registered(names: NameClient, name: str, proc: ManagedProcess, timeout: float = 60.0) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.popen.poll() is None, f"{name} exited:\n{proc.log_text()}"
        try:
            return names.resolve(name)
        except NotFound:
            time.sleep(0.1)
    pytest.fail(f"{name} did not register:\n{proc.log_text()}")


def test_simulator_on_another_host_drives_a_controller_here(two_hosts: TwoHosts, tmp_path: Path) -> None:
    a, b = two_hosts.address_a, two_hosts.address_b
    procs: list[ManagedProcess] = []
    try:
        ns_file = tmp_path / "ns.endpoint"
        nameserver = start(["run", "nameserver", "--bind", f"tcp://{a}:*", "--endpoint-file", str(ns_file)],
                           tmp_path / "nameserver.log", advertise=a)
        procs.append(nameserver)
        address = wait_for_file(ns_file, nameserver)
        common = ["--nameserver", address, "--bind", "tcp://0.0.0.0:*"]
        procs.append(start(["run", "modelloader", *common], tmp_path / "modelloader.log", advertise=a))
        with NameClient(address, timeout=2.0) as names:
            wait_registered(names, "modelloader", procs[-1])
            sim = start(["run", "simserver", "--project", str(REPO / "examples/sample_stand.yaml"), "--until", "0.5",
                         *common], tmp_path / "simserver.log", advertise=b, namespace=two_hosts.namespace)
            procs.append(sim)
            entry = wait_registered(names, "simserver", sim)
            assert entry["endpoint"].startswith(f"tcp://{b}:"), entry
            controller = start(["controller", "examples/controllers/hold_pose.py", "--robot", "robot",
                                "--name", "holder", "--nameserver", address], tmp_path / "controller.log",
                               advertise=a)
            procs.append(controller)
            wait_registered(names, "holder", controller)
        with Client(entry["endpoint"], peer="simserver on host B", timeout=10.0) as client:
            client.call("start")
            deadline = time.monotonic() + 120
            while not client.call("status")["finished"]:
                assert time.monotonic() < deadline, sim.log_text()
                time.sleep(0.1)
            summary = client.call("summary")
        assert summary["error"] is None, summary
        assert summary["sim_time"] == pytest.approx(0.5)
        assert summary["controllers"]["holder"]["ticks"] > 0, "the controller on host A answered every tick"
        assert summary["controllers"]["holder"]["missed"] == 0
    finally:
        for proc in reversed(procs):
            proc.stop()
