"""The least a controller can do on the tick protocol, for bench_tick's transport floor: answer every
state with an empty command (keep the last one), decoding nothing but the tick."""

from __future__ import annotations

import sys
from pathlib import Path

import msgpack
import zmq

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hrpsim import tick as proto
from hrpsim.naming import NameClient, Registration


def main(nameserver: str, name: str, robot: str) -> None:
    with NameClient(nameserver) as ns:
        meta = ns.resolve("simserver")["metadata"]
        endpoint = meta.get("controllers_ipc") or meta["controllers"]
    sock = zmq.Context.instance().socket(zmq.DEALER)
    sock.connect(endpoint)
    sock.send(proto.hello(name, robot))
    sock.recv()  # the welcome
    Registration(name, "controller", endpoint, nameserver=nameserver).start()
    skip_arrays = {"ext_hook": lambda _code, _data: None, "raw": False}
    while sock.poll(10_000):
        sock.send(proto.command(msgpack.unpackb(sock.recv(), **skip_arrays)["tick"]))


if __name__ == "__main__":
    main(*sys.argv[1:4])
