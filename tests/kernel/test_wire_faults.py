"""The service layer under bad input and failing peers, with real processes over tcp and ipc."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import msgpack
import psutil
import pytest
import zmq
from process_helpers import ManagedProcess, start_nameserver, wait_for_file

from hrpsim.client import Client
from hrpsim.codec import CODEC, PROTOCOL_VERSION
from hrpsim.errors import AccessDenied, NotFound, PeerGone, ProtocolError, RequestError, Timeout
from hrpsim.naming import NameClient, Registration

HERE = Path(__file__).resolve().parents[1]  # the tests folder, where fake_peers.py is


@pytest.fixture(params=["tcp", "ipc"])
def bind(request, tmp_path: Path) -> str:
    if request.param == "tcp":
        return "tcp://127.0.0.1:*"
    return f"ipc://{tmp_path}/ns.sock"


def malformed_frames(n: int, seed: int = 7) -> list[bytes]:
    rng = random.Random(seed)
    good = CODEC.request(1, "list", {})
    makers = [
        lambda: rng.randbytes(rng.randint(0, 64)),
        lambda: good[: rng.randint(0, len(good) - 1)],
        lambda: msgpack.packb(rng.choice([[1, 2], "text", 3.5, None, {"v": PROTOCOL_VERSION}])),
        lambda: msgpack.packb(
            {
                "v": PROTOCOL_VERSION,
                "id": rng.randint(0, 9),
                "op": rng.choice(["list", "nope"]),
                "args": {"kind": rng.choice([5, [1], None, "x" * 5000])},
            }
        ),
        lambda: msgpack.packb({"v": rng.randint(2, 99), "id": 1, "op": "list", "args": {}}),
        lambda: msgpack.packb(
            {
                "v": PROTOCOL_VERSION,
                "id": 1,
                "op": "register",
                "args": {"name": 1, "kind": None, "endpoint": [], "owner": {}},
            }
        ),
        lambda: b"\xdb\xff\xff\xff\xf0" + b"x" * 16,  # a str32 header claiming ~4 GB
        lambda: msgpack.packb(
            {"v": PROTOCOL_VERSION, "id": 1, "op": "resolve", "args": {"name": msgpack.ExtType(1, rng.randbytes(12))}}
        ),
    ]
    return [rng.choice(makers)() for _ in range(n)]


def test_ten_thousand_malformed_frames_leave_the_nameserver_serving(tmp_path: Path, bind: str) -> None:
    ns = start_nameserver(tmp_path, bind=bind)
    try:
        sock = zmq.Context.instance().socket(zmq.DEALER)
        sock.setsockopt(zmq.LINGER, 0)
        sock.connect(ns.address)
        process = psutil.Process(ns.pid)
        with Client(ns.address, peer="nameserver") as client:
            client.call("list")
        rss_before = process.memory_info().rss
        errors = 0
        for batch_start in range(0, 10_000, 500):
            for frame in malformed_frames(500, seed=batch_start):
                sock.send(frame)
            deadline = time.monotonic() + 10
            replies = 0
            while replies < 500 and time.monotonic() < deadline:
                if sock.poll(200):
                    reply = CODEC.parse_reply(sock.recv())
                    errors += not reply.ok
                    replies += 1
            assert replies == 500, "every malformed frame gets a reply (none was silently swallowed)"
        assert errors > 9_000, "nearly all of them are error replies"
        with NameClient(ns.address) as names:
            assert names.register("alive", "test", "tcp://x:1", owner="me") == {"ttl": 3.0}
            assert names.resolve("alive")["endpoint"] == "tcp://x:1"
        growth = process.memory_info().rss - rss_before
        assert growth < 64 * 1024 * 1024, f"nameserver grew by {growth} bytes"
        sock.close()
    finally:
        ns.stop()


def test_errors_are_typed_and_name_the_field(nameserver: str) -> None:
    with NameClient(nameserver) as ns:
        with pytest.raises(NotFound, match="'ghost'"):
            ns.resolve("ghost")
        with pytest.raises(RequestError, match="'endpoint'"):
            ns.register("a", "k", "", owner="me")
        ns.register("taken", "k", "tcp://x:1", owner="first")
        with pytest.raises(AccessDenied, match="already registered by another process"):
            ns.register("taken", "k", "tcp://x:2", owner="second")
        assert ns.register("taken", "k", "tcp://x:3", owner="first") == {"ttl": 3.0}
    with Client(nameserver, peer="nameserver") as client, pytest.raises(RequestError, match="unknown operation"):
        client.call("getattr")


def start_silent_peer(tmp_path: Path, bind: str) -> ManagedProcess:
    endpoint_file = tmp_path / "silent.endpoint"
    log = tmp_path / "silent.log"
    with open(log, "wb") as out:
        popen = subprocess.Popen(
            [sys.executable, str(HERE / "fake_peers.py"), bind, str(endpoint_file)],
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    proc = ManagedProcess(popen, log)
    proc.address = wait_for_file(endpoint_file, proc)
    return proc


def test_a_peer_that_never_answers_raises_timeout_naming_it(tmp_path: Path, bind: str) -> None:
    bind = bind.replace("ns.sock", "silent.sock")
    peer = start_silent_peer(tmp_path, bind)
    try:
        with Client(peer.address, peer="mute-service", timeout=0.3) as client:
            start = time.monotonic()
            with pytest.raises(Timeout, match=f"mute-service at {peer.address}.*'ping'"):
                client.call("ping")
            assert time.monotonic() - start < 5.0, "the call gave up, it did not hang"
    finally:
        peer.stop()


def test_a_peer_that_dies_during_a_call_raises_peer_gone(tmp_path: Path, bind: str) -> None:
    bind = bind.replace("ns.sock", "dying.sock")
    peer = start_silent_peer(tmp_path, bind)
    with Client(peer.address, peer="dying-service", timeout=20.0) as client:
        killer = subprocess.Popen(
            [sys.executable, "-c", f"import os,time,signal; time.sleep(0.5); os.killpg({peer.pid}, signal.SIGKILL)"]
        )
        with pytest.raises(PeerGone, match=f"dying-service at {peer.address} went away"):
            start = time.monotonic()
            client.call("ping", timeout=20.0)
        killer.wait(5)
        assert time.monotonic() - start < 15.0, "a dead peer was noticed before the deadline"


def test_killed_nameserver_is_reported_and_a_restarted_one_is_found_again(tmp_path: Path, bind: str) -> None:
    ns = start_nameserver(tmp_path, bind=bind, ttl=0.6)
    address = ns.address
    registration = Registration("worker", "test", "tcp://127.0.0.1:9", nameserver=address, timeout=0.5)
    registration.start()
    try:
        os.killpg(ns.pid, signal.SIGKILL)
        ns.popen.wait(5)
        with NameClient(address, timeout=0.5) as names, pytest.raises((Timeout, PeerGone), match=address):
            names.resolve("worker")
        restarted = start_nameserver(tmp_path, bind=address, ttl=0.6, name="nameserver-restarted")
        try:
            deadline = time.monotonic() + 10
            with NameClient(address, timeout=0.5) as names:
                while time.monotonic() < deadline:
                    try:
                        assert names.resolve("worker")["endpoint"] == "tcp://127.0.0.1:9"
                        break
                    except (NotFound, Timeout):
                        time.sleep(0.1)
                else:
                    pytest.fail("the heartbeating service did not register again with the restarted nameserver")
        finally:
            restarted.stop()
    finally:
        registration.stop(unregister=False)


def test_registrations_expire_without_heartbeats(tmp_path: Path) -> None:
    ns = start_nameserver(tmp_path, ttl=0.3)
    try:
        with NameClient(ns.address) as names:
            names.register("fleeting", "test", "tcp://x:1", owner="me")
            assert [e["name"] for e in names.list()] == ["fleeting"]
            deadline = time.monotonic() + 5
            while names.list() and time.monotonic() < deadline:
                time.sleep(0.05)
            assert names.list() == []
            with pytest.raises(NotFound):
                names.heartbeat("fleeting", owner="me")
    finally:
        ns.stop()


def test_a_garbage_reply_is_a_protocol_error_naming_the_peer(tmp_path: Path) -> None:
    ctx = zmq.Context.instance()
    router = ctx.socket(zmq.ROUTER)
    router.bind("tcp://127.0.0.1:*")
    with Client(router.getsockopt_string(zmq.LAST_ENDPOINT), peer="liar", timeout=2.0) as client:

        def answer() -> None:
            if router.poll(2000):
                ident, _ = router.recv_multipart()
                router.send_multipart([ident, b"\xc1nonsense"])

        t = threading.Thread(target=answer)
        t.start()
        with pytest.raises(ProtocolError, match="bad reply from liar"):
            client.call("ping")
        t.join()
    router.close(0)


def test_a_service_bound_to_every_interface_registers_a_reachable_endpoint(
    nameserver: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hrpsim.rpc import Service

    monkeypatch.setenv("HRPSIM_ADVERTISE_HOST", "127.0.0.1")
    monkeypatch.setenv("HRPSIM_INSECURE", "1")  # the refusal without keys has its own test
    service = Service("wide", bind="tcp://0.0.0.0:*", nameserver=nameserver)
    service.start()
    try:
        entry = NameClient(nameserver).resolve("wide")
        assert entry["endpoint"].startswith("tcp://127.0.0.1:") and entry["endpoint"] == service.endpoint
        thread = threading.Thread(target=service.serve_pending, args=(5.0,))
        thread.start()
        with Client(entry["endpoint"], peer="wide", timeout=5.0) as client:
            assert client.call("ping")["name"] == "wide"
        thread.join(5)
    finally:
        service.close()


def test_a_service_process_registers_again_with_a_restarted_nameserver(tmp_path: Path) -> None:
    from process_helpers import spawn, wait_registered

    ns = start_nameserver(tmp_path, ttl=0.6)
    address = ns.address
    loader = spawn(["run", "modelloader", "--nameserver", address], tmp_path / "modelloader.log")
    try:
        first = wait_registered(address, "modelloader", loader)
        os.killpg(ns.pid, signal.SIGKILL)
        ns.popen.wait(5)
        restarted = start_nameserver(tmp_path, bind=address, ttl=0.6, name="nameserver-restarted")
        try:
            again = wait_registered(address, "modelloader", loader, timeout=20)
            assert again["endpoint"] == first["endpoint"] and again["kind"] == "modelloader"
            with Client(again["endpoint"], peer="modelloader", timeout=5.0) as client:
                assert client.call("ping")["kind"] == "modelloader", "the service itself never stopped"
        finally:
            restarted.stop()
    finally:
        loader.stop()
