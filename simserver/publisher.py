"""The world-state stream for observers: a PUB socket that never holds the simulation up.

Each frame is two parts, the topic ``b"world"`` and a codec-encoded map
``{time, tick, bodies: {model: {poses: (links, 7) [x y z qw qx qy qz], q: (joints,)}}}``, sent every
``world.publish_every`` ticks. The send high-water mark is small and sends never block: a slow
subscriber loses frames.
"""

from __future__ import annotations

from typing import Any

import zmq

from hrpsim.codec import CODEC
from hrpsim.engines.base import Engine
from hrpsim.errors import HrpsimError
from hrpsim.naming import advertised
from hrpsim.security import connect_securely, serve_securely
from hrpsim.simserver.tick_record import TickRecord

TOPIC = b"world"
SEND_HWM = 4
MAX_FRAME_BYTES = 16 * 1024 * 1024  # poses and joint values of every body: kilobytes to a few megabytes


def world_frame(record: TickRecord) -> dict[str, Any]:
    """The stream's frame of one tick: every model's link poses, and the robots' joint values."""
    bodies: dict[str, Any] = {}
    robots = set(record.robots)
    for name in record.engine.model_names:
        entry: dict[str, Any] = {"poses": record.links(name).poses()}
        if name in robots:
            entry["q"] = record.state(name).q
        bodies[name] = entry
    return {"time": record.time, "tick": record.tick, "bodies": bodies}


class StatePublisher:
    def __init__(self, context: zmq.Context, bind: str = "tcp://127.0.0.1:*") -> None:
        self.socket = context.socket(zmq.PUB)
        self.socket.setsockopt(zmq.LINGER, 0)
        self.socket.setsockopt(zmq.SNDHWM, SEND_HWM)
        self.socket.setsockopt(zmq.MAXMSGSIZE, 1024)  # subscribers send only their subscriptions
        try:
            serve_securely(self.socket, bind, "state", "state stream")
        except HrpsimError:
            self.socket.close(linger=0)
            raise
        self.socket.bind(bind)
        self.endpoint = advertised(self.socket.getsockopt_string(zmq.LAST_ENDPOINT))
        self.sent = 0
        self.dropped = 0
        self.every = 1

    # --- as an observer of the tick loop ---

    def begin(self, engine: Engine) -> None:
        self.every = max(1, int(engine.project.world.publish_every))

    def observe(self, record: TickRecord) -> None:
        if record.tick % self.every == 0:
            self.publish(world_frame(record))

    def end(self, summary: dict[str, Any]) -> None:
        """Frames already sent are all there is."""

    def contribute(self, summary: dict[str, Any]) -> None:
        """The run summary's figures of the stream: frames sent and frames a full queue dropped."""
        summary["published"], summary["dropped_frames"] = self.sent, self.dropped

    def publish(self, frame: dict[str, Any]) -> None:
        try:
            self.socket.send_multipart([TOPIC, CODEC.encode(frame)], zmq.NOBLOCK)
            self.sent += 1
        except zmq.Again:
            self.dropped += 1

    def close(self) -> None:
        if not self.socket.closed:
            self.socket.close(linger=0)


def subscribe(context: zmq.Context, endpoint: str) -> zmq.Socket:
    """A SUB socket on a simulator's state stream (``simserver``'s ``state`` metadata), with
    this process's key when keys are set."""
    sock = context.socket(zmq.SUB)
    sock.setsockopt(zmq.LINGER, 0)
    sock.setsockopt(zmq.RCVHWM, SEND_HWM)
    sock.setsockopt(zmq.MAXMSGSIZE, MAX_FRAME_BYTES)
    connect_securely(sock)
    sock.setsockopt(zmq.SUBSCRIBE, TOPIC)
    sock.connect(endpoint)
    return sock
