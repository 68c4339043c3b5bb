"""The least a controller can do on the tick protocol, for bench_tick's transport floor: answer every
state with an empty command (keep the last one), decoding nothing but the tick. It takes the same
path the SDK takes on the simulator's host: the Unix channel when offered, else the ipc endpoint."""

from __future__ import annotations

import sys
from pathlib import Path

import msgpack
import zmq

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hrpsim import tick as proto
from hrpsim import unix_channel
from hrpsim.naming import NameClient, Registration

SKIP_ARRAYS = {"ext_hook": lambda _code, _data: None, "raw": False}


def _over_unix(endpoint: str, name: str, robot: str) -> None:
    channel = unix_channel.connect(endpoint, timeout=10.0, max_message=1 << 26, peer="simulator")
    channel.send(proto.hello(name, robot))
    channel.receive(10.0)  # the welcome
    while (data := channel.receive(10.0)) is not None:
        channel.send(proto.command(msgpack.unpackb(data, **SKIP_ARRAYS)["tick"]))


def _over_zmq(endpoint: str, name: str, robot: str) -> None:
    sock = zmq.Context.instance().socket(zmq.DEALER)
    sock.connect(endpoint)
    sock.send(proto.hello(name, robot))
    sock.recv()  # the welcome
    while sock.poll(10_000):
        sock.send(proto.command(msgpack.unpackb(sock.recv(), **SKIP_ARRAYS)["tick"]))


def main(nameserver: str, name: str, robot: str) -> None:
    with NameClient(nameserver) as ns:
        meta = ns.resolve("simserver")["metadata"]
    unix = meta.get("controllers_unix")
    endpoint = unix or meta.get("controllers_ipc") or meta["controllers"]
    Registration(name, "controller", endpoint, nameserver=nameserver).start()
    try:
        (_over_unix if unix else _over_zmq)(endpoint, name, robot)
    except EOFError:
        pass  # the simulator closed: the benchmark is over


if __name__ == "__main__":
    main(*sys.argv[1:4])
