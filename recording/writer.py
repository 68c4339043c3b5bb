"""The recorder: a tick-record observer that writes every tick of a run to an MCAP file.

The file is self-contained: the project file, every model file (bytes and sha256), each loaded
body, every tick's robot states, link poses, commands and controller events, and the run summary
at the end. Chunks are zstd-compressed and closed every ``flush_every_s`` of simulated time by
a writer thread, so a simulator killed mid-run loses at most two of those (the batch being
filled and the one being written): everything before reads back (recording/reader.py).
docs/recording.md describes the layout.
"""

from __future__ import annotations

import hashlib
import json
import logging
import queue
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import orjson
from mcap.writer import CompressionType, Writer

from hrpsim import __version__
from hrpsim.codec import CODEC
from hrpsim.recording import schemas

if TYPE_CHECKING:
    from hrpsim.engines.base import Engine
    from hrpsim.project import Project
    from hrpsim.simserver.record import AppliedCommand, ControllerEvent, TickRecord

log = logging.getLogger("hrpsim.recording")

# Simulated seconds per batch (one chunk or more). A killed writer loses the batch being filled
# and the one being written: at most 2 * FLUSH_EVERY_S of simulated time.
FLUSH_EVERY_S = 0.25
CLOSE_TIMEOUT_S = 60.0  # how long the end of a run waits for the writer thread to finish the file
CHUNK_BYTES = 4 * 1024 * 1024  # a chunk also closes at this size (uncompressed), whichever comes first


def to_json(value: Any) -> bytes:
    """JSON with numpy arrays as lists. Floats keep every bit (the shortest repr that reads back
    the same double); NaN and infinities, which JSON lacks, become null."""
    return orjson.dumps(value, default=_plain, option=orjson.OPT_SERIALIZE_NUMPY | orjson.OPT_NON_STR_KEYS)


def _plain(obj: Any) -> Any:
    if isinstance(obj, np.ndarray):  # the layouts orjson does not take as they are (non-contiguous, int8 ...)
        return obj.tolist()
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, bytes):
        return obj.hex()
    raise TypeError(f"cannot record a {type(obj).__name__}")


def file_digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class Recorder:
    """Writes the run it observes to ``path``. A second run in the same process (after a reset)
    goes to ``NAME.1.mcap``, ``NAME.2.mcap`` ..., so no record is overwritten.

    The tick thread only encodes messages (orjson); a writer thread puts them into chunks,
    compresses and writes them, so compression overlaps the simulation. A batch of
    ``flush_every_s`` of ticks goes to the writer thread, which closes a chunk per batch.
    """

    def __init__(self, path: str | Path, *, contacts: bool = False, flush_every_s: float = FLUSH_EVERY_S) -> None:
        self.path = Path(path)
        self.contacts = contacts
        self.flush_every_s = flush_every_s
        self.runs = 0
        self.current: Path | None = None
        self._file: _File | None = None
        self._engine: Engine | None = None
        self._topics: set[str] = set()
        self._batch: list[tuple[Any, ...]] = []
        self._tf: _FrameTransformEncoder | None = None
        self._flushed_at = 0.0

    # --- the observer protocol ---

    def begin(self, engine: Engine) -> None:
        if self._file is not None:
            self._finish(None)
        self.current = self.path if self.runs == 0 else self.path.with_suffix(f".{self.runs}{self.path.suffix}")
        self.runs += 1
        self._file = _File(self.current)
        self._engine = engine
        self._topics, self._batch = set(), []
        self._tf = _FrameTransformEncoder(engine)
        self._file.submit(_write_contents, _contents(engine, self.flush_every_s))
        self._flushed_at = engine.time
        log.info("recording to %s", self.current)

    def observe(self, record: TickRecord) -> None:
        if self._file is None:
            return
        stamp = _nanoseconds(record.time)
        for robot in record.robots:
            self._add(schemas.state_topic(robot), schemas.ROBOT_STATE, stamp, _state_message(record.state(robot)))
        for command in record.commands:
            self._add(
                schemas.command_topic(command.controller),
                schemas.APPLIED_COMMAND,
                stamp,
                _command_message(record, command),
            )
        for event in record.events:
            self._add(
                schemas.events_topic(event.controller), schemas.CONTROLLER_EVENT, stamp, _event_message(record, event)
            )
        if self.contacts:
            self._add(
                schemas.CONTACTS_TOPIC,
                schemas.CONTACTS,
                stamp,
                to_json({"tick": record.tick, "time": record.time, "contacts": record.contacts()}),
            )
        self._add(schemas.TF_TOPIC, schemas.FRAME_TRANSFORMS, stamp, self._tf.take(record.time, record.links))
        if record.time - self._flushed_at >= self.flush_every_s:
            self._hand_over()
            self._flushed_at = record.time

    def end(self, summary: dict[str, Any]) -> None:
        if self._file is not None:
            self._finish(summary)

    # --- writing ---

    def _finish(self, summary: dict[str, Any] | None) -> None:
        try:
            self._add_final_state(self._engine)
        except Exception as exc:  # an engine that failed mid-step: the ticks before it are what matters
            log.warning("recording: the final state could not be read (%s)", exc)
        self._hand_over()
        if summary is not None:
            self._file.submit(_write_summary, to_json(summary).decode())
        self._file.close()
        self._file, self._engine = None, None
        log.info("recording finished: %s", self.current)

    def _add_final_state(self, engine: Engine) -> None:
        stamp = _nanoseconds(engine.time)
        for robot in engine.robots:
            self._add(schemas.state_topic(robot), schemas.ROBOT_STATE, stamp, _state_message(engine.read(robot)))
        self._add(
            schemas.TF_TOPIC,
            schemas.FRAME_TRANSFORMS,
            stamp,
            self._tf.take(engine.time, engine.link_states, final=True),
        )

    def _add(self, topic: str, schema: dict[str, Any], stamp: int, data: bytes | Callable[[], bytes]) -> None:
        """Queue a message: its bytes, or a function the writer thread calls for them."""
        if topic not in self._topics:
            self._topics.add(topic)
            self._batch.append((topic, schema["title"], self._channel_metadata(topic)))
        self._batch.append((topic, stamp, data))

    def _hand_over(self) -> None:
        if self._batch:
            self._file.submit(_write_batch, self._batch)
            self._batch = []

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


class _File:
    """One MCAP file and the thread that writes it; every Writer call happens on that thread."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.stream = open(path, "wb")  # noqa: SIM115 - held open for the whole run
        self.writer = Writer(self.stream, chunk_size=CHUNK_BYTES, compression=CompressionType.ZSTD)
        self.writer.start(profile=schemas.PROFILE, library=f"hrpsim {__version__}")
        self.channels: dict[str, int] = {}
        self.schemas: dict[str, int] = {}
        self.failed: str | None = None
        self.queue: queue.Queue[tuple[Callable[..., None], Any] | None] = queue.Queue()
        self.thread = threading.Thread(target=self._run, name=f"recorder {path.name}", daemon=True)
        self.thread.start()

    def submit(self, job: Callable[..., None], argument: Any) -> None:
        if self.failed is None:
            self.queue.put((job, argument))

    def close(self) -> None:
        self.queue.put(None)
        self.thread.join(CLOSE_TIMEOUT_S)
        if self.thread.is_alive():
            log.error(
                "recording: %s was not finished within %g s; it reads back up to its last chunk",
                self.path,
                CLOSE_TIMEOUT_S,
            )

    def _run(self) -> None:
        while (item := self.queue.get()) is not None:
            job, argument = item
            try:
                job(self, argument)
            except Exception as exc:  # a full disk must not stop the simulation; the log says why
                self.failed = f"{type(exc).__name__}: {exc}"
                log.error("recording to %s stopped: %s", self.path, self.failed)
                return
        self.writer.finish()
        self.stream.close()

    def channel(self, topic: str, title: str, metadata: dict[str, str]) -> None:
        schema = self.schemas.get(title)
        if schema is None:
            schema = self.schemas[title] = self.writer.register_schema(title, "jsonschema", schemas.schema_bytes(title))
        self.channels[topic] = self.writer.register_channel(topic, "json", schema, metadata)


def _write_batch(file: _File, batch: list[tuple[Any, ...]]) -> None:
    """Channels first, then two chunks: states, commands and events; then link poses, which are
    most of the bytes. A reader of joints or sensors (hrpsim plot) skips the second kind whole."""
    for topic, second, third in batch:
        if isinstance(second, str):
            file.channel(topic, second, third)
    add = file.writer.add_message
    for poses in (False, True):
        for topic, second, third in batch:
            if not isinstance(second, str) and (topic == schemas.TF_TOPIC) == poses:
                data = third if isinstance(third, bytes) else third()
                add(file.channels[topic], log_time=second, publish_time=second, data=data)
        file.writer.flush()


def _write_summary(file: _File, summary_json: str) -> None:
    file.writer.add_metadata(schemas.META_SUMMARY, {"json": summary_json})


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


def _write_contents(file: _File, contents: dict[str, Any]) -> None:
    writer = file.writer
    writer.add_metadata(schemas.META_RECORDING, contents[schemas.META_RECORDING])
    writer.add_metadata(schemas.META_PROJECT, contents[schemas.META_PROJECT])
    for path, data in contents["files"].items():
        writer.add_attachment(0, 0, path, schemas.FILE_MEDIA_TYPE, data)
    writer.add_metadata(schemas.META_FILES, {path: file_digest(data) for path, data in contents["files"].items()})
    for name, data in contents["bodies"].items():
        writer.add_attachment(0, 0, schemas.BODY_PREFIX + name, schemas.BODY_MEDIA_TYPE, data)
    writer.flush()


def _source_files(engine: Engine) -> list[Path]:
    """The project file and every file its models were read from, once each, in a stable order."""
    names = [engine.project.path]
    for model in engine.project.models:
        names.append(model.file)
        body = engine.bodies.get(model.name)
        if body is not None:
            names.extend(body.metadata.get("files") or [])
    return [Path(n) for n in dict.fromkeys(str(Path(n).resolve()) for n in names) if Path(n).is_file()]


def _nanoseconds(t: float) -> int:
    return max(0, round(t * 1e9))


def _state_message(state: Any) -> bytes:
    return to_json(
        {
            "tick": state.tick,
            "time": state.time,
            "q": state.q,
            "dq": state.dq,
            "tau": state.tau,
            "root_position": state.root_position,
            "root_rotation": np.ravel(state.root_rotation),
            "root_velocity": state.root_velocity,
            "sensors": state.sensors,
        }
    )


def _command_message(record: TickRecord, command: AppliedCommand) -> bytes:
    message: dict[str, Any] = {
        "tick": record.tick,
        "time": record.time,
        "robot": command.robot,
        "received": command.received,
    }
    for key in ("torque", "q_ref", "dq_ref", "modes", "rtt_us"):
        value = getattr(command, key)
        if value is not None:
            message[key] = value
    return to_json(message)


def _event_message(record: TickRecord, event: ControllerEvent) -> bytes:
    return to_json(
        {"tick": record.tick, "time": record.time, "robot": event.robot, "kind": event.kind, "detail": event.detail}
    )


class _FrameTransformEncoder:
    """foxglove.FrameTransforms of every link (frames ``MODEL/LINK`` in ``world``). Static models
    go out with the first and the last message only: they do not move.

    ``take`` reads the link states in the tick thread; the message is built later, on the writer
    thread (``encode``), where it overlaps the simulation's waits for its controllers."""

    def __init__(self, engine: Engine) -> None:
        self.robots = list(engine.robots)
        self.static = [m for m in engine.model_names if m not in self.robots]
        self.frames = {
            name: [schemas.frame_id(name, lk.name) for lk in body.links] for name, body in engine.bodies.items()
        }
        self.first = True

    def take(self, time: float, links: Callable[[str], Any], *, final: bool = False) -> Callable[[], bytes]:
        models = self.robots + (self.static if self.first or final else [])
        self.first = False
        states = {name: links(name) for name in models}
        return lambda: self.encode(time, states)

    def encode(self, time: float, states: dict[str, Any]) -> bytes:
        sec, nsec = divmod(_nanoseconds(time), 1_000_000_000)
        stamp = {"sec": sec, "nsec": nsec}
        transforms = []
        for name, links in states.items():
            for child, p, q in zip(
                self.frames[name], links.positions.tolist(), links.quaternions.tolist(), strict=True
            ):
                transforms.append(
                    {
                        "timestamp": stamp,
                        "parent_frame_id": schemas.WORLD_FRAME,
                        "child_frame_id": child,
                        "translation": {"x": p[0], "y": p[1], "z": p[2]},
                        "rotation": {"x": q[1], "y": q[2], "z": q[3], "w": q[0]},
                    }
                )
        return orjson.dumps({"transforms": transforms})


def recorders(project: Project, path: str | None = None) -> list[Recorder]:
    """The recorder a simulator attaches: to ``path`` if given (``--record``), else to the
    project's ``record:`` file, else none."""
    settings = project.record
    contacts = bool(settings and settings.contacts)
    if path:
        return [Recorder(path, contacts=contacts)]
    return [Recorder(settings.file, contacts=contacts)] if settings else []
