"""The least a controller can do on the tick protocol, for bench_tick's transport floor: answer every
state with an empty command (keep the last one), decoding nothing but the tick. It takes the path the
SDK takes by default on the simulator's host: shared memory (the state's tick read in place, the
command's counter bumped and the doorbell rung) where the platform has it, over the Unix channel
(hello, welcome, the end of the run); the Unix channel alone without it; else the ipc endpoint."""

from __future__ import annotations

import mmap
import os
import select
import sys
from pathlib import Path

import msgpack
import numpy as np
import zmq

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hrpsim import shared_state, unix_channel
from hrpsim import tick_protocol as proto
from hrpsim.naming import NameClient, Registration

SKIP_ARRAYS = {"ext_hook": lambda _code, _data: None, "raw": False}
WAIT_MS = 10_000  # a simulator silent this long has stopped: the benchmark is over


def _over_unix(channel: unix_channel.Channel) -> None:
    while (data := channel.receive(10.0)) is not None:
        channel.send(proto.command(msgpack.unpackb(data, **SKIP_ARRAYS)["tick"]))


def _over_shared_memory(channel: unix_channel.Channel, fields: dict, fds: list[int]) -> None:
    """States' ticks read from the segment, empty commands written to it; a state that came as a
    message (one the segment cannot hold) is answered on the channel."""
    layout = shared_state.Layout.from_wire(fields)
    memory = mmap.mmap(fds[0], layout.size)
    header = np.frombuffer(memory, dtype="<u8", count=shared_state.HEADER_BYTES // 8)
    state_tick = np.frombuffer(memory, dtype="<i8", count=1, offset=layout.state)
    command_head = np.frombuffer(memory, dtype="<i8", count=2, offset=layout.command)
    to_us, to_simulator = fds[1], fds[2]
    os.set_blocking(to_us, False)
    poll = select.poll()
    poll.register(to_us, select.POLLIN)
    poll.register(channel.fileno(), select.POLLIN)
    states_read = 0
    while ready := poll.poll(WAIT_MS):
        for fd, _ in ready:
            if fd == to_us:
                try:
                    os.eventfd_read(to_us)
                except BlockingIOError:
                    pass
            elif (data := channel.receive(0.0)) is not None:  # EOFError once the simulator closed
                channel.send(proto.command(msgpack.unpackb(data, **SKIP_ARRAYS)["tick"]))
        if int(header[shared_state.STATE_SEQ]) != states_read:
            states_read = int(header[shared_state.STATE_SEQ])
            command_head[:] = (int(state_tick[0]), 0)  # no arrays: the last command stands
            header[shared_state.COMMAND_SEQ] += 1
            os.eventfd_write(to_simulator, 1)


def _attach_unix(endpoint: str, name: str, robot: str) -> None:
    shared = shared_state.available()
    channel = unix_channel.connect(endpoint, timeout=10.0, max_message=1 << 26, peer="simulator", takes_fds=shared)
    channel.send(proto.hello(name, robot, shared_memory=shared))
    welcome = msgpack.unpackb(channel.receive(10.0), **SKIP_ARRAYS)
    fds, channel.fds = channel.fds, []
    if shared and isinstance(welcome.get("shared_memory"), dict) and len(fds) == 3:
        _over_shared_memory(channel, welcome["shared_memory"], fds)
    else:
        _over_unix(channel)


def _over_zmq(endpoint: str, name: str, robot: str) -> None:
    sock = zmq.Context.instance().socket(zmq.DEALER)
    sock.connect(endpoint)
    sock.send(proto.hello(name, robot))
    sock.recv()  # the welcome
    while sock.poll(WAIT_MS):
        sock.send(proto.command(msgpack.unpackb(sock.recv(), **SKIP_ARRAYS)["tick"]))


def main(nameserver: str, name: str, robot: str) -> None:
    with NameClient(nameserver) as ns:
        meta = ns.resolve("simserver")["metadata"]
    unix = meta.get("controllers_unix")
    endpoint = unix or meta.get("controllers_ipc") or meta["controllers"]
    Registration(name, "controller", endpoint, nameserver=nameserver).start()
    try:
        (_attach_unix if unix else _over_zmq)(endpoint, name, robot)
    except EOFError:
        pass  # the simulator closed: the benchmark is over


if __name__ == "__main__":
    main(*sys.argv[1:4])
