"""Round trip of one request through the service layer (Client -> nameserver process -> reply).

Baseline: a bare pyzmq REQ/REP echo of the same request bytes, to a separate process, in the same
run. `ratio` = ours / bare (aim: within 1.2x). Both use tcp on loopback.
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
    ctx = mp.get_context("spawn")
    ready, stop = ctx.Queue(), ctx.Event()
    server = ctx.Process(target=bare_echo_server, args=(ready, stop), daemon=True)
    server.start()
    try:
        sock = zmq.Context.instance().socket(zmq.REQ)
        sock.connect(ready.get(timeout=30))
        frame = CODEC.request(1, "resolve", {"name": "bench"})

        def bare() -> None:
            sock.send(frame)
            if not sock.poll(5000):
                raise TimeoutError("bare echo server did not answer")
            sock.recv()

        with nameserver_process() as address, Client(address, peer="nameserver") as client:
            client.call("register", name="bench", kind="bench", endpoint="tcp://x:1", owner="bench", metadata={})

            def ours() -> None:
                client.call("resolve", name="bench")

            ours_us, bare_us = [], []
            samples_us(ours, 300), samples_us(bare, 300)  # warm up both paths
            for _ in range(ALTERNATIONS):  # interleaved, so load on the machine hits both alike
                ours_us += samples_us(ours, ROUNDS // ALTERNATIONS)
                bare_us += samples_us(bare, ROUNDS // ALTERNATIONS)
        sock.close(0)
    finally:
        stop.set()
        server.join(5)
    ours_median, bare_median = median(ours_us), median(bare_us)
    return {"rtt_us": ours_median, "bare_rtt_us": bare_median, "ratio": ours_median / bare_median}
