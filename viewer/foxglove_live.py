"""``--foxglove``: a run's Foxglove channels served over the Foxglove WebSocket protocol
(the ``foxglove-sdk`` server), live from a simulator or played from a recording.

    hrpsim view --live --foxglove [HOST:PORT]     follow a running simulator (what launch --foxglove starts)
    hrpsim view RUN.mcap --foxglove [HOST:PORT]   play a recording in real time, looping

The channels are the recording's: ``/scene`` (foxglove.SceneUpdate, each link's shapes),
``/tf`` (foxglove.FrameTransforms), ``/robots/R/joint_states`` (foxglove.JointStates); a
recording also serves its other topics as they are. Live, the frames come from the simulator's
world-state stream, which never waits for its subscribers (a slow viewer loses frames there), and
the SDK's server drops a slow client's oldest messages: nothing here can slow a tick.

The server is read only (no client publishing, parameters or services). It binds loopback by
default; beyond loopback only as our other sockets may (keys or --insecure, hrpsim.security's
check_web_bind), and a WebSocket client is never authenticated: docs/security.md says what it sees.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import orjson

from hrpsim.bodyinfo import Body
from hrpsim.errors import ConfigError
from hrpsim.recording import foxglove_scene, schemas
from hrpsim.recording.messages import nanoseconds, timestamp
from hrpsim.security import check_web_bind

log = logging.getLogger("hrpsim.viewer")

DEFAULT_ADDRESS = "127.0.0.1:8765"
BACKLOG = 64  # messages held per client; a slower client loses the oldest


def parse_address(text: str) -> tuple[str, int]:
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or not host:
        raise ConfigError(f"--foxglove: {text!r} is not HOST:PORT (for example {DEFAULT_ADDRESS})")
    return host.strip("[]"), int(port)


def _scene_on_subscribe(foxglove: Any) -> Any:
    """The server's listener: a client that subscribes to /scene after it was sent gets it again
    (entities are sent once). It is one of the SDK's ServerListener, which answers the callbacks it
    does not override (an unsubscribe, a client leaving) by doing nothing."""

    class SceneOnSubscribe(foxglove.ServerListener):
        def __init__(self) -> None:
            self.wanted = threading.Event()

        def on_subscribe(self, client: Any, channel: Any) -> None:
            if channel.topic == schemas.SCENE_TOPIC:
                self.wanted.set()

    return SceneOnSubscribe()


# /scene goes out again at least this often (wall-clock seconds): the SDK drops a slow client's
# oldest messages past its backlog, and a client that lost the scene so would never draw the robot.
# Its entities replace those of the same id, so a repeat changes nothing for a client that has it.
SCENE_REPEAT_S = 1.0


class FoxgloveServer:
    """A foxglove-sdk WebSocket server with one JSON channel per topic, made on first use."""

    def __init__(self, host: str, port: int, *, name: str = "hrpsim") -> None:
        try:
            import foxglove
        except ImportError as exc:
            raise ConfigError(f"--foxglove needs foxglove-sdk ({exc}): pip install 'hrpsim[foxglove]'") from None

        check_web_bind(host, port, "the Foxglove server (--foxglove)")
        self._foxglove = foxglove
        self.context = foxglove.Context()
        self.listener = _scene_on_subscribe(foxglove)
        try:
            self.server = foxglove.start_server(
                name=name,
                host=host,
                port=port,
                context=self.context,
                server_listener=self.listener,
                message_backlog_size=BACKLOG,
            )
        except Exception as exc:  # the SDK raises its own error for a port in use
            raise ConfigError(f"--foxglove: cannot serve on {host}:{port} ({exc}); pick another port") from None
        self.host = host
        self.channels: dict[str, Any] = {}
        self._scene_due = time.monotonic() + SCENE_REPEAT_S

    @property
    def port(self) -> int:
        return int(self.server.port)

    def log(self, topic: str, data: bytes, log_time: int) -> None:
        channel = self.channels.get(topic)
        if channel is None:
            schema = schemas.schema_of(topic) or {"type": "object"}
            channel = self.channels[topic] = self._foxglove.Channel(topic, schema=schema, context=self.context)
        channel.log(data, log_time=log_time)

    def scene_wanted(self) -> bool:
        """Whether /scene should go out again now: a client subscribed to it, or it is due."""
        now = time.monotonic()
        if not (self.listener.wanted.is_set() or now >= self._scene_due):
            return False
        self.listener.wanted.clear()
        self._scene_due = now + SCENE_REPEAT_S
        return True

    def stop(self) -> None:
        self.server.stop()


class LiveFrames:
    """The simulator's world-state frames as /tf and joint states, and the scene of its models."""

    def __init__(self, server: FoxgloveServer, bodies: dict[str, Body], robots: list[str]) -> None:
        self.server, self.bodies = server, bodies
        self.frames = {name: [schemas.frame_id(name, lk.name) for lk in b.links] for name, b in bodies.items()}
        self.joints = {r: bodies[r].joint_names for r in robots if r in bodies}
        self.scene = orjson.dumps(foxglove_scene.scene_update(0.0, bodies))
        self.warned = False
        server.log(schemas.SCENE_TOPIC, self.scene, 0)

    def take(self, frame: dict[str, Any]) -> None:
        t = float(frame.get("time", 0.0))
        stamp, ns = timestamp(t), nanoseconds(t)
        if self.server.scene_wanted():
            self.server.log(schemas.SCENE_TOPIC, self.scene, ns)
        transforms = []
        bodies = frame.get("bodies", {})
        if not self.warned and not set(bodies) <= set(self.frames):
            self.warned = True  # the simulator loaded another project: its shapes are not in /scene
            log.warning("the simulator's models changed to %s; restart the Foxglove server to see them", sorted(bodies))
        for model, entry in bodies.items():
            for child, row in zip(self.frames.get(model, ()), np.asarray(entry["poses"]).tolist(), strict=False):
                transforms.append(_transform(stamp, child, row))
            names = self.joints.get(model)
            if names is not None and "q" in entry:
                message = foxglove_scene.joint_states(t, names, {"q": np.asarray(entry["q"]).tolist()})
                self.server.log(schemas.joint_states_topic(model), orjson.dumps(message), ns)
        self.server.log(schemas.TF_TOPIC, orjson.dumps({"transforms": transforms}), ns)


def _transform(stamp: dict[str, int], child: str, row: list[float]) -> dict[str, Any]:
    x, y, z, qw, qx, qy, qz = row
    return {
        "timestamp": stamp,
        "parent_frame_id": schemas.WORLD_FRAME,
        "child_frame_id": child,
        "translation": {"x": x, "y": y, "z": z},
        "rotation": {"x": qx, "y": qy, "z": qz, "w": qw},
    }


def play_recording(server: FoxgloveServer, recording: Any, *, speed: float) -> Callable[[threading.Event], None]:
    """A worker that plays every topic of ``recording`` in simulated time times ``speed``, looping."""
    topics = [t for t in recording.channels if schemas.schema_of(t) is not None]

    def play(stop: threading.Event) -> None:
        scene = None
        while not stop.is_set():
            started, first = time.monotonic(), None
            for topic, message in recording.raw_messages(topics):
                first = message.log_time if first is None else first
                due = started + (message.log_time - first) * 1e-9 / speed
                if stop.wait(max(0.0, due - time.monotonic())):
                    return
                if topic == schemas.SCENE_TOPIC:
                    scene = message.data
                elif scene is not None and server.scene_wanted():
                    server.log(schemas.SCENE_TOPIC, scene, message.log_time)
                server.log(topic, message.data, message.log_time)
            if first is None:
                return  # nothing to play

    return play
