"""Cameras rendered in a process of their own, as OpenHRP's ViewSimulator does, so a heavy camera
does not hold up the tick loop.

The simulator starts ``python -m hrpsim.simserver.render_process ENDPOINT``; the two talk over one
ZeroMQ PAIR socket in the hrpsim codec: ``{bodies, sensing}`` once (answered ``{ready, cameras}`` or
``{error}``), then ``{render: {tick, time, labels, frames}}`` (each model's link poses) answered by
``{tick, time, images}``, and ``{stop}``. One request is outstanding at a time: the simulator
submits the poses of tick k and collects the images when it next needs the renderer, so rendering
overlaps the ticks in between. The child leaves when the simulator goes away (it checks its parent
while waiting).
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import time
from typing import Any

import numpy as np
import zmq

from hrpsim.bodyinfo import Body
from hrpsim.codec import Codec
from hrpsim.errors import ConfigError, SimulationError

log = logging.getLogger("hrpsim.simserver.render")

START_TIMEOUT_S = 60.0  # building the scene of a large model can take a while on a software renderer
RENDER_TIMEOUT_S = 60.0
PARENT_CHECK_S = 1.0
# The renderer has a whole frame period for each image, the tick loop has one step per tick: on a
# machine with few cores the loop and its controllers go first, the renderer takes what is left.
RENDER_NICENESS = 5


class RenderProcess:
    """The simulator's side: a child process holding a SceneRenderer of the given bodies."""

    def __init__(
        self, bodies: dict[str, Body], sensing: set[str] | None = None, *, timeout_s: float = RENDER_TIMEOUT_S
    ) -> None:
        self.codec = Codec()
        self.timeout_ms = int(timeout_s * 1000)
        self.socket = zmq.Context.instance().socket(zmq.PAIR)
        self.socket.setsockopt(zmq.LINGER, 0)
        port = self.socket.bind_to_random_port("tcp://127.0.0.1")
        self.child = subprocess.Popen(
            [sys.executable, "-m", "hrpsim.simserver.render_process", f"tcp://127.0.0.1:{port}"]
        )
        self.pending: dict[str, Any] | None = None
        try:
            wire = {name: b.to_wire() for name, b in bodies.items()}
            self.socket.send(self.codec.encode({"bodies": wire, "sensing": sorted(sensing or bodies)}))
            answer = self._receive(int(START_TIMEOUT_S * 1000), "start")
        except BaseException:
            self.close()
            raise
        if "error" in answer:
            self.close()
            raise ConfigError(f"the camera rendering process could not start: {answer['error']}")
        self.cameras: list[str] = list(answer["cameras"])

    def submit(self, tick: int, sim_time: float, labels: list[str], frames: dict[str, np.ndarray]) -> None:
        """Send one tick's poses to render; collect() must come before the next submit()."""
        if self.pending is not None:
            raise RuntimeError("render_process: collect() the outstanding frame before submitting another")
        self.socket.send(
            self.codec.encode({"render": {"tick": tick, "time": sim_time, "labels": labels, "frames": frames}})
        )
        self.pending = {"tick": tick}

    def collect(self) -> dict[str, Any] | None:
        """The outstanding frame's answer ``{tick, time, images}``, waiting for it; None if nothing is out."""
        if self.pending is None:
            return None
        answer = self._receive(self.timeout_ms, f"the frame of tick {self.pending['tick']}")
        self.pending = None
        if "error" in answer:
            raise SimulationError(f"the camera rendering process failed: {answer['error']}")
        return answer

    def _receive(self, timeout_ms: int, what: str) -> dict[str, Any]:
        deadline = time.monotonic() + timeout_ms / 1000
        while not self.socket.poll(100):
            if self.child.poll() is not None:
                raise SimulationError(
                    f"the camera rendering process (pid {self.child.pid}) exited with status "
                    f"{self.child.returncode} before sending {what}; its log is above"
                )
            if time.monotonic() > deadline:
                raise SimulationError(
                    f"the camera rendering process (pid {self.child.pid}) sent no {what} within "
                    f"{timeout_ms / 1000:.0f} s"
                )
        return self.codec.decode(self.socket.recv())

    def close(self) -> None:
        if self.child.poll() is None:
            try:
                self.socket.send(self.codec.encode({"stop": True}), flags=zmq.NOBLOCK)
            except zmq.ZMQError:
                pass
            try:
                self.child.wait(timeout=5.0)
            except subprocess.TimeoutExpired:
                self.child.kill()
                self.child.wait(timeout=5.0)
        self.socket.close(linger=0)


def serve(endpoint: str) -> int:
    """The child's side: answer requests until told to stop or the parent is gone."""
    from hrpsim.simserver.vision_sensors import SceneRenderer  # the GL context lives in this process only

    os.nice(RENDER_NICENESS)
    codec = Codec()
    parent = os.getppid()
    socket = zmq.Context.instance().socket(zmq.PAIR)
    socket.setsockopt(zmq.LINGER, 1000)
    socket.connect(endpoint)
    renderer = None
    try:
        while True:
            if not socket.poll(int(PARENT_CHECK_S * 1000)):
                if os.getppid() != parent:
                    return 1  # the simulator is gone
                continue
            message = codec.decode(socket.recv())
            if "stop" in message:
                return 0
            if "bodies" in message:
                try:
                    bodies = {n: Body.from_wire(b) for n, b in message["bodies"].items()}
                    renderer = SceneRenderer(bodies, set(message["sensing"]))
                except ConfigError as exc:
                    socket.send(codec.encode({"error": str(exc)}))
                    return 2
                socket.send(codec.encode({"ready": True, "cameras": list(renderer.cameras)}))
                continue
            request = message["render"]
            images = renderer.render_frames(request["labels"], request["frames"])
            socket.send(codec.encode({"tick": request["tick"], "time": request["time"], "images": images}))
    finally:
        if renderer is not None:
            renderer.close()
        socket.close()


if __name__ == "__main__":
    logging.basicConfig(level=logging.WARNING)
    if len(sys.argv) != 2:
        print("usage: python -m hrpsim.simserver.render_process ENDPOINT", file=sys.stderr)
        sys.exit(2)
    sys.exit(serve(sys.argv[1]))
