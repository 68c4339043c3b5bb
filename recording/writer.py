"""The recorder: a tick-record observer that writes every tick of a run to an MCAP file.

The file is self-contained: the project file, every model file (bytes and sha256), each loaded
body, every tick's robot states, link poses, commands and controller events, and the run summary
at the end. The tick thread hands each tick's values to a writer process
(recording/handoff.py, recording/writer_process.py), which builds the JSON messages and writes
zstd chunks of ``flush_every_s`` of simulated time. docs/recording.md describes the layout and
what a killed simulator loses.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from hrpsim.codec import CODEC
from hrpsim.errors import RecordingError
from hrpsim.recording import schemas
from hrpsim.recording.handoff import WriterProcess
from hrpsim.recording.mcap_file import file_digest
from hrpsim.recording.messages import (
    command_message,
    contacts_message,
    disturbances_message,
    event_message,
    nanoseconds,
    state_message,
    to_json,
)
from hrpsim.recording.profiles import DEFAULT_PROFILE, PROFILES, ros2_bag_folder
from hrpsim.recording.sensor_messages import SensorMessages

if TYPE_CHECKING:
    from hrpsim.engines.base import Engine
    from hrpsim.project import Project
    from hrpsim.simserver.tick_record import TickRecord

__all__ = ["FLUSH_EVERY_S", "Recorder", "file_digest", "recorders", "ros2_bag_folder", "to_json"]

log = logging.getLogger("hrpsim.recording")

# Simulated seconds per batch (one chunk or more). A writer process killed with the simulator
# loses the batch it was filling and what was still in the pipe (docs/recording.md).
FLUSH_EVERY_S = 0.25


class Recorder:
    """Writes the run it observes to ``path``. A second run in the same process (after a reset)
    goes to ``NAME.1.mcap``, ``NAME.2.mcap`` ..., so no record is overwritten.

    Per tick the tick thread encodes states, commands and events (orjson, fast) and reads the
    link poses; the poses' FrameTransforms, the chunks and their compression are the writer
    process's work, on another core.
    """

    def __init__(
        self,
        path: str | Path,
        *,
        contacts: bool = False,
        profile: str = DEFAULT_PROFILE,
        flush_every_s: float = FLUSH_EVERY_S,
    ) -> None:
        self.path = Path(path)
        self.contacts = contacts
        if profile not in PROFILES:
            raise RecordingError(f"no record profile {profile!r} (profiles: {', '.join(PROFILES)})")
        self.profile = PROFILES[profile]
        self.profile.check()
        self.flush_every_s = flush_every_s
        self.runs = 0
        self.current: Path | None = None
        self._writer: WriterProcess | None = None
        self._finishing: list[WriterProcess] = []  # earlier runs' writers, finishing their files
        self._engine: Engine | None = None
        self._topics: set[str] = set()
        self._poses: _LinkPoses | None = None
        self._sensors: SensorMessages | None = None
        self._last_tick = -1

    # --- the observer protocol ---

    def begin(self, engine: Engine) -> None:
        if self._writer is not None:  # a reset: the last run's writer finishes its file while this one runs
            self._finish(None, wait=False)
        self._finishing = [w for w in self._finishing if not w.finished()]
        self.current = self.path if self.runs == 0 else self.path.with_suffix(f".{self.runs}{self.path.suffix}")
        self.runs += 1
        self._engine = engine
        self._topics = set()
        self._last_tick = -1
        self._poses = _LinkPoses(engine)
        self._sensors = SensorMessages(engine)
        begin = {
            "contents": _contents(engine, self.flush_every_s),  # read first: a file that fails starts no writer
            "frames": self._poses.frames,
            "flush_every_s": self.flush_every_s,
            "time": engine.time,
            "robots": list(engine.robots),
            "profile": self.profile.name,
            "profile_place": self.profile.place(self.current),
        }
        self._writer = WriterProcess(self.current)
        self._writer.send(["begin", begin], now=True)
        log.info("recording to %s", self.current)

    def observe(self, record: TickRecord) -> None:
        if self._writer is None:
            return
        entries: list[list[Any]] = []
        for robot in record.robots:
            self._add(entries, schemas.ROBOT_STATE, schemas.state_topic(robot), state_message(record.state(robot)))
        for command in record.commands:
            topic = schemas.command_topic(command.controller)
            self._add(entries, schemas.APPLIED_COMMAND, topic, command_message(record, command))
        for event in record.events:
            topic = schemas.events_topic(event.controller)
            self._add(entries, schemas.CONTROLLER_EVENT, topic, event_message(record, event))
        if self.contacts:
            self._add(entries, schemas.CONTACTS, schemas.CONTACTS_TOPIC, contacts_message(record))
        if record.disturbances:
            self._add(entries, schemas.DISTURBANCES, schemas.DISTURBANCES_TOPIC, disturbances_message(record))
        for model, readings in record.readings.items():
            for label, reading in readings.items():
                for topic, schema, data in self._sensors.messages(model, label, reading):
                    self._add(entries, schema, topic, data)
        self._add(entries, schemas.FRAME_TRANSFORMS, schemas.TF_TOPIC, self._poses.take(record.time, record.links))
        self._writer.send(["tick", record.time, nanoseconds(record.time), entries, False])
        self._last_tick = record.tick

    def flush(self) -> None:
        """Hand the held ticks to the writer: the loop paused, ended or served steps."""
        if self._writer is not None:
            self._writer.flush()

    def end(self, summary: dict[str, Any]) -> None:
        if self._writer is not None:
            self._finish(summary)
        for writer in self._finishing:  # no writer outlives the simulation's end
            writer.wait()
        self._finishing = []

    # --- writing ---

    def _finish(self, summary: dict[str, Any] | None, *, wait: bool = True) -> None:
        try:
            if self._engine.tick > self._last_tick:  # not after a reset: that state is the next run's start
                self._send_final_state(self._engine)
        except Exception as exc:  # an engine that failed mid-step: the ticks before it are what matters
            log.warning("recording: the final state could not be read (%s)", exc)
        if summary is not None:
            self._writer.send(["summary", to_json(summary).decode()])
        self._writer.close(wait=wait)
        if not wait:
            self._finishing.append(self._writer)
        self._writer, self._engine = None, None
        log.info("recording %s: %s", "finished" if wait else "handed to its writer to finish", self.current)

    def _send_final_state(self, engine: Engine) -> None:
        entries: list[list[Any]] = []
        for robot in engine.robots:
            self._add(entries, schemas.ROBOT_STATE, schemas.state_topic(robot), state_message(engine.read(robot)))
        poses = self._poses.take(engine.time, engine.link_states, final=True)
        self._add(entries, schemas.FRAME_TRANSFORMS, schemas.TF_TOPIC, poses)
        self._writer.send(["tick", engine.time, nanoseconds(engine.time), entries, True])

    def _add(self, entries: list[list[Any]], schema: dict[str, Any], topic: str, data: bytes | list[Any]) -> None:
        """A message (its JSON, or link poses for the writer process to encode), after its channel
        the first time the topic is seen."""
        if topic not in self._topics:
            self._topics.add(topic)
            entries.append(["channel", topic, [schema["title"], self._channel_metadata(topic)]])
        entries.append(["tf" if topic == schemas.TF_TOPIC else "json", topic, data])

    def _channel_metadata(self, topic: str) -> dict[str, str]:
        if not topic.startswith("/robots/"):
            return {}
        robot = topic.split("/")[2]
        body = self._engine.body(robot)
        return {
            "robot": robot,
            "joints": json.dumps(body.joint_names),
            "sensors": json.dumps([s.name for s in body.sensors]),
        }


def _contents(engine: Engine, flush_every_s: float) -> dict[str, Any]:
    """The project, the files it was built from and the bodies: read now, written first."""
    project = engine.project
    path = Path(project.path)
    return {
        schemas.META_RECORDING: {
            "format": schemas.FORMAT_VERSION,
            "timestep": repr(engine.timestep),
            "flush_every_s": repr(flush_every_s),
        },
        schemas.META_PROJECT: {
            "path": project.path,
            "wire": to_json(project.to_wire()).decode(),
            "text": path.read_text(encoding="utf-8", errors="replace") if path.is_file() else "",
        },
        "files": {str(p): p.read_bytes() for p in _source_files(engine)},
        "bodies": {name: CODEC.encode(body.to_wire()) for name, body in engine.bodies.items()},
    }


def _source_files(engine: Engine) -> list[Path]:
    """The project file and every file its models were read from, once each, in a stable order."""
    names = [engine.project.path]
    for model in engine.project.models:
        names.append(model.file)
        body = engine.bodies.get(model.name)
        if body is not None:
            names.extend(body.metadata.get("files") or [])
    return [Path(n) for n in dict.fromkeys(str(Path(n).resolve()) for n in names) if Path(n).is_file()]


class _LinkPoses:
    """Every link's pose, per model, for foxglove.FrameTransforms (frames ``MODEL/LINK`` in
    ``world``). Static models go out with the first and the last message only: they do not move."""

    def __init__(self, engine: Engine) -> None:
        self.robots = list(engine.robots)
        self.static = [m for m in engine.model_names if m not in self.robots]
        self.frames = {
            name: [schemas.frame_id(name, lk.name) for lk in body.links] for name, body in engine.bodies.items()
        }
        self.first = True

    def take(self, time: float, links: Callable[[str], Any], *, final: bool = False) -> list[Any]:
        """[time, [[model, positions, quaternions] ...]], the arrays as raw float64 bytes: a tenth
        of what packing them as arrays costs, and the writer knows their shapes."""
        models = self.robots + (self.static if self.first or final else [])
        self.first = False
        poses = []
        for name in models:
            states = links(name)
            poses.append([name, _raw(states.positions), _raw(states.quaternions)])
        return [time, poses]


def _raw(values: np.ndarray) -> bytes:
    return np.asarray(values, dtype=np.float64).tobytes()  # as float64: the values tolist() gives


def recorders(project: Project, path: str | None = None) -> list[Recorder]:
    """The recorder a simulator attaches: to ``path`` if given (``--record``), else to the
    project's ``record:`` file, else none; with the project's record contacts and profile."""
    settings = project.record
    contacts = bool(settings and settings.contacts)
    profile = settings.profile if settings else DEFAULT_PROFILE
    if path:
        return [Recorder(path, contacts=contacts, profile=profile)]
    return [Recorder(settings.file, contacts=contacts, profile=profile)] if settings else []
