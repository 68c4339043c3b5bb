"""Round trip of one request through the service layer (Client -> nameserver process -> reply).

Baseline: a bare pyzmq REQ/REP echo of the same request bytes, to a separate process, in the same
run. `ratio` = ours / bare (aim: within 1.2x). Both use tcp on loopback. `floor_rtt_us`: the least
any service speaking this protocol does, measured the same way: a bare DEALER/ROUTER pair (the
sockets the service layer uses) where the client msgpack-encodes the request and decodes the reply
and the server decodes the request and encodes a reply of the same shape (the `resolve` answer),
with no checks, no dispatch, no bookkeeping. `floor_ratio` = floor / bare: what the codec and the
socket types alone cost over the echo; `ratio_over_floor` = ours / floor: what the service layer
adds (argument and role checks, the envelope, connection bounds, error handling).
"""

from __future__ import annotations

import multiprocessing as mp
import time

import zmq
from procs import nameserver_process

from hrpsim.client import Client
from hrpsim.codec import CODEC

ROUNDS = 4000
ALTERNATIONS = 8


def bare_echo_server(ready: mp.Queue, stop: mp.Event) -> None:
    sock = zmq.Context().socket(zmq.REP)
    sock.bind("tcp://127.0.0.1:*")
    ready.put(sock.getsockopt_string(zmq.LAST_ENDPOINT))
    while not stop.is_set():
        if sock.poll(100):
            sock.send(sock.recv())


def floor_server(ready: mp.Queue, stop: mp.Event) -> None:
    import msgpack

    sock = zmq.Context().socket(zmq.ROUTER)
    sock.bind("tcp://127.0.0.1:*")
    ready.put(sock.getsockopt_string(zmq.LAST_ENDPOINT))
    entry = {"name": "bench", "kind": "bench", "endpoint": "tcp://x:1", "metadata": {}, "age": 0.5, "expires_in": 2.5}
    while not stop.is_set():
        if sock.poll(100):
            route, payload = sock.recv_multipart()
            request = msgpack.unpackb(payload)
            reply = msgpack.packb({"v": 1, "id": request["id"], "ok": True, "result": entry})
            sock.send_multipart([route, reply])


def samples_us(call, rounds: int) -> list[float]:
    out = []
    for _ in range(rounds):
        start = time.perf_counter()
        call()
        out.append((time.perf_counter() - start) * 1e6)
    return out


def median(values: list[float]) -> float:
    return sorted(values)[len(values) // 2]


def run() -> dict[str, float]:
    import msgpack

    ctx = mp.get_context("spawn")
    stop = ctx.Event()
    servers, endpoints = [], []
    for target in (bare_echo_server, floor_server):
        ready = ctx.Queue()
        servers.append(ctx.Process(target=target, args=(ready, stop), daemon=True))
        servers[-1].start()
        endpoints.append(ready.get(timeout=30))
    try:
        sock = zmq.Context.instance().socket(zmq.REQ)
        sock.connect(endpoints[0])
        floor_sock = zmq.Context.instance().socket(zmq.DEALER)
        floor_sock.connect(endpoints[1])
        frame = CODEC.request(1, "resolve", {"name": "bench"})

        def bare() -> None:
            sock.send(frame)
            if not sock.poll(5000):
                raise TimeoutError("bare echo server did not answer")
            sock.recv()

        def floor() -> None:
            floor_sock.send(msgpack.packb({"v": 1, "id": 1, "op": "resolve", "args": {"name": "bench"}}))
            if not floor_sock.poll(5000):
                raise TimeoutError("bare codec server did not answer")
            msgpack.unpackb(floor_sock.recv())

        with nameserver_process(ttl=3600.0) as address, Client(address, peer="nameserver") as client:
            client.call("register", name="bench", kind="bench", endpoint="tcp://x:1", owner="bench", metadata={})

            def ours() -> None:
                client.call("resolve", name="bench")

            timed: dict[str, list[float]] = {"ours": [], "bare": [], "floor": []}
            calls = {"ours": ours, "bare": bare, "floor": floor}
            for call in calls.values():
                samples_us(call, 300)  # warm up every path
            for _ in range(ALTERNATIONS):  # interleaved, so load on the machine hits all alike
                for name, call in calls.items():
                    timed[name] += samples_us(call, ROUNDS // ALTERNATIONS)
        sock.close(0)
        floor_sock.close(0)
    finally:
        stop.set()
        for server in servers:
            server.join(5)
    ours_median, bare_median, floor_median = (median(timed[k]) for k in ("ours", "bare", "floor"))
    return {
        "rtt_us": ours_median,
        "bare_rtt_us": bare_median,
        "ratio": ours_median / bare_median,
        "floor_rtt_us": floor_median,
        "floor_ratio": floor_median / bare_median,
        "ratio_over_floor": ours_median / floor_median,
    }
