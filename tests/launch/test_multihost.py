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
import zmq
from process_helpers import REPO, ManagedProcess, model_roots_for, wait_for_file

from hrpsim.client import Client
from hrpsim.codec import CODEC
from hrpsim.controllers.link import SimulatorLink
from hrpsim.errors import AccessDenied, NotFound, PeerGone, RequestError, Timeout
from hrpsim.naming import NameClient
from hrpsim.simserver.publisher import subscribe

REFUSED = (AccessDenied, Timeout, PeerGone)  # a refused handshake: whichever the socket notices first


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


def start(
    args: list[str], log: Path, *, advertise: str, namespace: str | None = None, env: dict[str, str] | None = None
) -> ManagedProcess:
    prefix = ["ip", "netns", "exec", namespace] if namespace else []
    inherited = {k: v for k, v in os.environ.items() if k not in ("HRPSIM_KEYS", "HRPSIM_KEY")}  # the test's own
    full_env = {
        **inherited,
        "HRPSIM_ADVERTISE_HOST": advertise,
        "PYTHONPATH": str(REPO),
        "HRPSIM_MODEL_ROOTS": model_roots_for(log.parent),
        **(env or {}),
    }
    with open(log, "wb") as out:
        popen = subprocess.Popen(
            [*prefix, sys.executable, "-m", "hrpsim", *args],
            stdout=out,
            stderr=subprocess.STDOUT,
            cwd=REPO,
            env=full_env,
            start_new_session=True,
        )
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


@dataclass
class Stack:
    """nameserver, modelloader and a controller on host A; the simulator on host B."""

    procs: list[ManagedProcess]
    nameserver: str
    sim: dict

    def stop(self) -> None:
        for proc in reversed(self.procs):
            proc.stop()


def start_stack(hosts: TwoHosts, folder: Path, *, security: list[str], controller_env: dict[str, str]) -> Stack:
    a, b = hosts.address_a, hosts.address_b
    stack = Stack([], "", {})
    try:
        ns_file = folder / "ns.endpoint"
        nameserver = start(
            ["run", "nameserver", "--bind", f"tcp://{a}:*", "--endpoint-file", str(ns_file), *security],
            folder / "nameserver.log",
            advertise=a,
        )
        stack.procs.append(nameserver)
        stack.nameserver = wait_for_file(ns_file, nameserver)
        common = ["--nameserver", stack.nameserver, "--bind", "tcp://0.0.0.0:*", *security]
        stack.procs.append(start(["run", "modelloader", *common], folder / "modelloader.log", advertise=a))
        with NameClient(stack.nameserver, timeout=2.0) as names:
            wait_registered(names, "modelloader", stack.procs[-1])
            sim = start(
                ["run", "simserver", "--project", str(REPO / "examples/sample_stand.yaml"), "--until", "0.5", *common],
                folder / "simserver.log",
                advertise=b,
                namespace=hosts.namespace,
            )
            stack.procs.append(sim)
            stack.sim = wait_registered(names, "simserver", sim)
            assert stack.sim["endpoint"].startswith(f"tcp://{b}:"), stack.sim
            controller = start(
                [
                    "controller",
                    "examples/controllers/hold_pose.py",
                    "--robot",
                    "robot",
                    "--name",
                    "holder",
                    "--nameserver",
                    stack.nameserver,
                    *security,
                ],
                folder / "controller.log",
                advertise=a,
                env=controller_env,
            )
            stack.procs.append(controller)
            wait_registered(names, "holder", controller)
    except BaseException:
        stack.stop()
        raise
    return stack


def run_to_the_end(stack: Stack) -> dict:
    with Client(stack.sim["endpoint"], peer="simserver on host B", timeout=10.0) as client:
        client.call("start")
        deadline = time.monotonic() + 120
        while not client.call("status")["finished"]:
            assert time.monotonic() < deadline, stack.procs[2].log_text()
            time.sleep(0.1)
        return client.call("summary")


def assert_held(summary: dict) -> None:
    assert summary["error"] is None, summary
    assert summary["sim_time"] == pytest.approx(0.5)
    assert summary["controllers"]["holder"]["ticks"] > 0, "the controller on host A answered every tick"
    assert summary["controllers"]["holder"]["missed"] == 0


def test_without_keys_the_stack_runs_across_hosts_only_when_insecure(two_hosts: TwoHosts, tmp_path: Path) -> None:
    refused = start(
        ["run", "nameserver", "--bind", f"tcp://{two_hosts.address_a}:*"],
        tmp_path / "refused.log",
        advertise=two_hosts.address_a,
    )
    assert refused.popen.wait(30) == 1
    assert "hrpsim keys new" in refused.log_text() and "--insecure" in refused.log_text()
    stack = start_stack(two_hosts, tmp_path, security=["--insecure"], controller_env={})
    try:
        assert_held(run_to_the_end(stack))
        assert "WITHOUT authentication" in stack.procs[2].log_text()
    finally:
        stack.stop()


def test_with_keys_the_stack_runs_and_strangers_get_nothing(
    two_hosts: TwoHosts, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    keys, stranger_keys = tmp_path / "keys", tmp_path / "stranger-keys"
    make_keys(keys, stranger_keys)
    monkeypatch.setenv("HRPSIM_KEYS", str(keys))
    monkeypatch.setenv("HRPSIM_KEY", "admin")
    stack = start_stack(two_hosts, tmp_path, security=["--keys", str(keys)], controller_env={"HRPSIM_KEY": "driver"})
    try:
        monkeypatch.setenv("HRPSIM_KEY", "watcher")
        context = zmq.Context()
        watching = subscribe(context, stack.sim["metadata"]["state"])
        monkeypatch.setenv("HRPSIM_KEYS", str(stranger_keys))
        monkeypatch.setenv("HRPSIM_KEY", "admin")
        stranger_watching = subscribe(context, stack.sim["metadata"]["state"])
        assert_gets_nothing(stack, "a key not on the list", refusal=AccessDenied)
        monkeypatch.delenv("HRPSIM_KEYS")
        keyless_watching = subscribe(context, stack.sim["metadata"]["state"])
        assert_gets_nothing(stack, "no key")

        monkeypatch.setenv("HRPSIM_KEYS", str(keys))
        monkeypatch.setenv("HRPSIM_KEY", "watcher")
        assert_observer_only_observes(stack)
        monkeypatch.setenv("HRPSIM_KEY", "driver")
        assert_controller_cannot_pose_as_a_service(stack)
        monkeypatch.setenv("HRPSIM_KEY", "rival")
        assert_a_rival_cannot_evict_the_controller(stack)

        monkeypatch.setenv("HRPSIM_KEY", "admin")
        assert_held(run_to_the_end(stack))
        assert watching.poll(10_000), "the observer key sees the state stream"
        assert CODEC.decode(watching.recv_multipart()[1])["bodies"]
        assert not stranger_watching.poll(0), "a key not on the list sees none of it"
        assert not keyless_watching.poll(0), "nor does a peer without a key"
        for sock in (watching, stranger_watching, keyless_watching):
            sock.close()
        context.term()
    finally:
        stack.stop()


def make_keys(keys: Path, stranger_keys: Path) -> None:
    for args in (
        [str(keys)],
        [str(keys), "--name", "watcher", "--role", "observer"],
        [str(keys), "--name", "driver", "--role", "controller", "--robots", "robot"],
        [str(keys), "--name", "rival", "--role", "controller"],
        [str(stranger_keys)],
    ):
        done = subprocess.run(
            [sys.executable, "-m", "hrpsim", "keys", "new", *args],
            capture_output=True,
            text=True,
            timeout=30,
            cwd=REPO,
            env={**os.environ, "PYTHONPATH": str(REPO)},
        )
        assert done.returncode == 0, done.stderr
    # The stranger knows the services' public key (it is public): only the allow-list stops it.
    shutil.copy(keys / "server.key", stranger_keys / "server.key")


def assert_gets_nothing(stack: Stack, who: str, refusal: type | tuple = REFUSED) -> None:
    """No registration, no list, no command, no attach: each ends in an error, none succeeds.
    ``refusal``: the error a client sees (a refused key is named as such where zmq reports it)."""
    with NameClient(stack.nameserver, timeout=2.0) as names:
        with pytest.raises(refusal):
            names.list()
        with pytest.raises(refusal):
            names.register("intruder", "controller", "tcp://10.0.0.1:1", owner="x")
    with Client(stack.sim["endpoint"], peer=f"simserver, as {who}", timeout=2.0) as sim, pytest.raises(refusal):
        sim.call("quit")
    link = SimulatorLink(stack.sim["metadata"]["controllers"])
    try:
        with pytest.raises(refusal):
            link.attach("holder", "robot", period=None, timeout=2.0)
    finally:
        link.close()


def assert_observer_only_observes(stack: Stack) -> None:
    with Client(stack.sim["endpoint"], peer="simserver, as observer", timeout=5.0) as sim:
        assert sim.call("status")["running"] is False
        with pytest.raises(AccessDenied, match="needs the admin role"):
            sim.call("pause")
        with pytest.raises(AccessDenied, match="needs the admin role"):
            sim.call("set_link_data", robot="robot", q=[0.0])
    link = SimulatorLink(stack.sim["metadata"]["controllers"])
    try:
        with pytest.raises(AccessDenied, match="controller role"):  # the hub admits controller keys only
            link.attach("holder", "robot", period=None, timeout=2.0)
    finally:
        link.close()


def assert_controller_cannot_pose_as_a_service(stack: Stack) -> None:
    with NameClient(stack.nameserver, timeout=5.0) as names:
        assert any(e["name"] == "simserver" for e in names.list())
        with pytest.raises(AccessDenied):
            names.register("simserver", "simserver", "tcp://10.0.0.1:1", owner="guess")
        assert names.resolve("simserver")["endpoint"] == stack.sim["endpoint"]


def assert_a_rival_cannot_evict_the_controller(stack: Stack) -> None:
    link = SimulatorLink(stack.sim["metadata"]["controllers"])
    try:
        with pytest.raises(RequestError, match="attached with another key"):
            link.attach("holder", "robot", period=None, timeout=5.0)
    finally:
        link.close()
