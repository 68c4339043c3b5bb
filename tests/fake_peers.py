"""Fault-injecting peers, run as their own processes: one that never answers."""

from __future__ import annotations

import sys
import time

import zmq


def silent_router(bind: str, endpoint_file: str) -> None:
    """Accepts connections and requests, and never answers any of them."""
    sock = zmq.Context.instance().socket(zmq.ROUTER)
    sock.bind(bind)
    with open(endpoint_file + ".tmp", "w") as f:
        f.write(sock.getsockopt_string(zmq.LAST_ENDPOINT))
    import os

    os.rename(endpoint_file + ".tmp", endpoint_file)
    while True:
        if sock.poll(100):
            sock.recv_multipart()
        time.sleep(0.01)


if __name__ == "__main__":
    silent_router(sys.argv[1], sys.argv[2])
