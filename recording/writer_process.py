"""The writer process of a recording: reads each tick's messages from the simulator's pipe (JSON,
and link poses as arrays, which become foxglove.FrameTransforms here), batches them by simulated
time and writes the MCAP file: chunks, zstd, index; and hands what its recording profile wants to the
profile's output (recording/profiles.py: a ROS 2 bag with ``ros2``).

    python -m hrpsim.recording.writer_process PIPE_FD FILE_FD PARENT_PID PATH

It ends when the pipe closes: the simulator finished the run, or died (the kernel closes the
pipe). Either way it writes what it received and closes the file with its index, so a killed
simulator loses nothing it handed over; the file then lacks only the run summary. Should the pipe
have leaked into another process, the parent's pid going away ends it too. Signals from the
terminal or the supervisor are for the simulator, which closes the pipe when it stops.
"""

from __future__ import annotations

import logging
import os
import select
import signal
import sys
from collections.abc import Iterator
from typing import Any

import orjson

from hrpsim.bodyinfo import Body
from hrpsim.codec import CODEC, MAX_MESSAGE_BYTES
from hrpsim.logs import setup_logging
from hrpsim.recording import foxglove_scene, messages, schemas
from hrpsim.recording.mcap_file import Entry, McapFile
from hrpsim.recording.profiles import NOTHING, PROFILES, ProfileOutput
from hrpsim.unix_channel import cut

log = logging.getLogger("hrpsim.recording")

POLL_MS = 1000  # how often a quiet pipe makes the process look whether its simulator still lives
READ_BYTES = 1024 * 1024


def frames(fd: int, parent: int) -> Iterator[Any]:
    """The values on the pipe, until it closes or ``parent`` is gone."""
    poll = select.poll()
    poll.register(fd, select.POLLIN)
    buffer = bytearray()
    while True:
        if not poll.poll(POLL_MS):
            if os.getppid() != parent:
                log.warning("recording: the simulator is gone; finishing the file")
                return
            continue
        data = os.read(fd, READ_BYTES)
        if not data:
            if buffer:
                log.warning("recording: the simulator stopped in the middle of a tick; that tick is left out")
            return
        buffer += data
        for message in cut(buffer, max_message=MAX_MESSAGE_BYTES, peer="simulator"):
            yield CODEC.decode(message)


class Batcher:
    """Turns the simulator's values into messages and writes them a batch of ``flush_every_s``
    simulated seconds at a time: the chunk layout docs/recording.md describes."""

    def __init__(self, file: McapFile) -> None:
        self.file = file
        self.batch: list[Entry] = []
        self.flush_every_s = 0.0
        self.flushed_at = 0.0
        self.tf = messages.FrameTransforms({})
        self.joints: dict[str, foxglove_scene.JointStatesEncoder] = {}  # state topic -> its JointStates
        self.output: ProfileOutput = NOTHING  # what the recording profile writes beside the file

    def take(self, value: list[Any]) -> None:
        kind = value[0]
        if kind == "begin":
            self._begin(value[1])
        elif kind == "tick":
            self._tick(*value[1:])
        elif kind == "summary":
            self.file.write_summary(value[1])
        else:
            raise ValueError(f"unknown record {kind!r} from the simulator")

    def finish(self) -> None:
        self._write()
        self.file.finish()
        self.output.close()

    def _begin(self, begin: dict[str, Any]) -> None:
        self.flush_every_s = begin["flush_every_s"]
        self.flushed_at = begin["time"]
        self.tf = messages.FrameTransforms(begin["frames"])
        self.file.write_contents(begin["contents"])
        bodies = {name: Body.from_wire(CODEC.decode(data)) for name, data in begin["contents"]["bodies"].items()}
        self._channel(schemas.SCENE_TOPIC, schemas.SCENE_UPDATE, {})
        scene = orjson.dumps(foxglove_scene.scene_update(begin["time"], bodies))
        self.batch.append((schemas.SCENE_TOPIC, messages.nanoseconds(begin["time"]), scene))
        self.output = PROFILES[begin["profile"]].open(begin["profile_place"], bodies, begin["robots"])

    def _tick(self, time: float, stamp: int, entries: list[list[Any]], last: bool) -> None:
        for kind, topic, payload in entries:
            if kind == "channel":
                self.batch.append((topic, *payload))
                self._foxglove_channel(topic, payload[1])
            elif kind == "tf":
                self.batch.append((topic, stamp, self.tf.encode(payload)))
                self._to_output(topic, stamp, poses=payload)
            else:  # JSON made on the tick thread, decoded once for whichever of the two needs it
                self.batch.append((topic, stamp, payload))
                to_output = self.output.wants(topic)
                if to_output or topic in self.joints or topic == schemas.CONTACTS_TOPIC:
                    message = orjson.loads(payload)
                    self._foxglove_message(topic, time, stamp, message)
                    if to_output:
                        self._to_output(topic, stamp, message=message)
        if last:
            self._write()
        elif time - self.flushed_at >= self.flush_every_s:
            self._write()
            self.flushed_at = time

    def _to_output(
        self, topic: str, stamp: int, *, message: dict[str, Any] | None = None, poses: list[Any] | None = None
    ) -> None:
        """A message into the profile's output: a decoded JSON message, or the link poses as the
        simulator sent them. An output that fails is given up (its error logged); the recording
        goes on."""
        try:
            if poses is None:
                self.output.take(topic, stamp, message or {})
            else:
                self.output.take_link_poses(stamp, poses)
        except Exception as exc:
            output, self.output = self.output, NOTHING
            log.error("recording: %s stopped at %s: %s: %s", output.what, topic, type(exc).__name__, exc)
            output.abandon()

    def _channel(self, topic: str, schema: dict[str, Any], metadata: dict[str, str]) -> None:
        self.batch.append((topic, schema["title"], metadata))

    def _foxglove_channel(self, topic: str, metadata: dict[str, str]) -> None:
        """Beside a robot's state, its foxglove.JointStates; beside the contacts, their SceneUpdate."""
        robot = metadata.get("robot")
        if robot is not None and topic == schemas.state_topic(robot):
            self.joints[topic] = foxglove_scene.JointStatesEncoder(orjson.loads(metadata["joints"]))
            self._channel(schemas.joint_states_topic(robot), schemas.JOINT_STATES, metadata)
        elif topic == schemas.CONTACTS_TOPIC:
            self._channel(schemas.CONTACTS_SCENE_TOPIC, schemas.SCENE_UPDATE, {})

    def _foxglove_message(self, topic: str, time: float, stamp: int, message: dict[str, Any]) -> None:
        encoder = self.joints.get(topic)
        if encoder is not None:
            self.batch.append((schemas.joint_states_topic(topic.split("/")[2]), stamp, encoder.encode(time, message)))
        elif topic == schemas.CONTACTS_TOPIC:
            scene = foxglove_scene.contacts_scene(time, message["contacts"])
            self.batch.append((schemas.CONTACTS_SCENE_TOPIC, stamp, orjson.dumps(scene)))

    def _write(self) -> None:
        if self.batch:
            self.file.write_batch(self.batch)
            self.batch = []


def main(argv: list[str]) -> int:
    read_fd, file_fd, parent, path = int(argv[0]), int(argv[1]), int(argv[2]), argv[3]
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is for the simulator, which then closes the pipe
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # so is the supervisor's SIGTERM to its process group
    setup_logging("recorder")
    stream = os.fdopen(file_fd, "wb")
    try:
        batcher = Batcher(McapFile(stream))
        for value in frames(read_fd, parent):
            batcher.take(value)
        batcher.finish()
    except Exception as exc:  # a full disk, a bad frame: say why; the simulator sees the pipe close
        log.error("recording to %s stopped: %s: %s", path, type(exc).__name__, exc)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
