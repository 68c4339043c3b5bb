"""Reading a recording back: its project, files, bodies, summary and time series.

A finished file is read through its index, decoding only the topics asked for. A file whose
writer was killed has no index or footer: it is read front to back, and everything up to the
last whole chunk comes back (``complete`` is then False and ``cut_note`` says where it ends).
A file with no whole tick at all, or that is not MCAP, raises :class:`RecordingError`.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from mcap.exceptions import McapError
from mcap.reader import make_reader
from mcap.records import Attachment, Channel, Chunk, Message, Metadata
from mcap.stream_reader import StreamReader, breakup_chunk

from hrpsim.bodyinfo import Body
from hrpsim.codec import CODEC
from hrpsim.errors import RecordingError
from hrpsim.project import Project
from hrpsim.recording import schemas

MAGIC = b"\x89MCAP0\r\n"
# what a file cut short raises while being read: a short read, a cut chunk that will not decompress
_CUT = (McapError, struct.error, EOFError, ValueError, OSError)


@dataclass
class Series:
    """A robot's recorded states as arrays, one row per state (``time`` (n,), ``q`` (n, joints) ...)."""

    joints: list[str]
    sensors: list[str]
    time: np.ndarray
    tick: np.ndarray
    fields: dict[str, np.ndarray]
    sensor_readings: dict[str, np.ndarray]


class Recording:
    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._check_magic()
        self.complete = self._has_footer()
        self.metadata: dict[str, dict[str, str]] = {}
        self.attachments: dict[str, bytes] = {}
        self.channels: dict[str, dict[str, str]] = {}  # topic -> channel metadata
        self.cut_note = ""
        self._read_contents()
        if schemas.META_PROJECT not in self.metadata:
            raise RecordingError(
                f"{self.path}: truncated or not an hrpsim recording: it holds no project "
                f"(record a run with: hrpsim launch PROJECT --record FILE.mcap)"
            )

    # --- what the file holds ---

    @property
    def project(self) -> Project:
        return Project.from_wire(json.loads(self.metadata[schemas.META_PROJECT]["wire"]))

    @property
    def project_text(self) -> str:
        return self.metadata[schemas.META_PROJECT].get("text", "")

    @property
    def timestep(self) -> float:
        return float(self.metadata.get(schemas.META_RECORDING, {}).get("timestep", self.project.world.timestep))

    @property
    def files(self) -> dict[str, str]:
        """Absolute path at recording time -> sha256, for the project file and every model file."""
        return dict(self.metadata.get(schemas.META_FILES, {}))

    def file_bytes(self, path: str) -> bytes:
        return self.attachments[path]

    @property
    def summary(self) -> dict[str, Any] | None:
        entry = self.metadata.get(schemas.META_SUMMARY)
        return json.loads(entry["json"]) if entry else None

    def bodies(self) -> dict[str, Body]:
        return {
            name[len(schemas.BODY_PREFIX) :]: Body.from_wire(CODEC.decode(data))
            for name, data in self.attachments.items()
            if name.startswith(schemas.BODY_PREFIX)
        }

    @property
    def robots(self) -> list[str]:
        return [
            meta["robot"]
            for topic, meta in self.channels.items()
            if topic == schemas.state_topic(meta.get("robot", ""))
        ]

    @property
    def controllers(self) -> list[str]:
        return [t.split("/")[2] for t in self.channels if t.startswith("/controllers/") and t.endswith("/command")]

    def joints(self, robot: str) -> list[str]:
        return json.loads(self._robot_channel(robot)["joints"])

    def sensors(self, robot: str) -> list[str]:
        return json.loads(self._robot_channel(robot)["sensors"])

    def _robot_channel(self, robot: str) -> dict[str, str]:
        meta = self.channels.get(schemas.state_topic(robot))
        if meta is None:
            raise RecordingError(
                f"{self.path}: no robot {robot!r} in this recording (robots: {', '.join(self.robots) or 'none'})"
            )
        return meta

    # --- messages ---

    def messages(self, topics: Iterable[str], every_s: float = 0.0) -> Iterator[tuple[str, int, dict[str, Any]]]:
        """(topic, log time in ns, decoded message) in file order, only for ``topics``; with
        ``every_s``, a topic's messages closer than that to the last one kept are skipped undecoded."""
        wanted = set(topics)
        gap, last = round(every_s * 1e9), dict.fromkeys(wanted, -(2**62))
        for topic, message in self._raw_messages(wanted):
            if message.log_time - last[topic] >= gap:
                last[topic] = message.log_time
                yield topic, message.log_time, json.loads(message.data)

    def raw_messages(self, topics: Iterable[str]) -> Iterator[tuple[str, Message]]:
        """(topic, undecoded mcap Message) for ``topics``, in file order."""
        return self._raw_messages(set(topics))

    def _raw_messages(self, wanted: set[str]) -> Iterator[tuple[str, Message]]:
        if self.complete:
            with open(self.path, "rb") as handle:
                for _schema, channel, message in make_reader(handle).iter_messages(topics=list(wanted)):
                    yield channel.topic, message
            return
        for channel, message in self._stream_messages():
            if channel.topic in wanted:
                yield channel.topic, message

    def series(self, robot: str) -> Series:
        joints, sensors = self.joints(robot), self.sensors(robot)
        rows = [m for _, _, m in self.messages([schemas.state_topic(robot)])]
        if not rows:
            raise RecordingError(f"{self.path}: robot {robot!r} has no recorded state")
        fields = {
            key: np.array([r[key] for r in rows], dtype=np.float64)
            for key in ("q", "dq", "tau", "root_position", "root_rotation", "root_velocity")
        }
        readings = {
            name: np.array([r["sensors"].get(name, ()) for r in rows], dtype=np.float64)
            for name in sensors
            if name in rows[0].get("sensors", {})
        }
        return Series(
            joints, sensors, np.array([r["time"] for r in rows]), np.array([r["tick"] for r in rows]), fields, readings
        )

    def link_poses(self, every_s: float = 0.0) -> tuple[np.ndarray, dict[str, dict[str, np.ndarray]]]:
        """Times (n,) and, per model and link, poses (n, 7) x y z qw qx qy qz from ``/tf`` (at most
        one per ``every_s``); a link absent from a message (a static model's) keeps its last pose."""
        times: list[float] = []
        poses: dict[str, dict[str, list[list[float]]]] = {}
        for _, stamp, message in self.messages([schemas.TF_TOPIC], every_s):
            times.append(stamp * 1e-9)
            for tf in message["transforms"]:
                model, _, link = tf["child_frame_id"].partition("/")
                t, r = tf["translation"], tf["rotation"]
                track = poses.setdefault(model, {}).setdefault(link, [])
                track.extend([track[-1]] * (len(times) - 1 - len(track)) if track else [])
                track.append([t["x"], t["y"], t["z"], r["w"], r["x"], r["y"], r["z"]])
        for links in poses.values():
            for track in links.values():
                track.extend([track[-1]] * (len(times) - len(track)))
        return np.array(times), {m: {lk: np.array(v) for lk, v in links.items()} for m, links in poses.items()}

    # --- reading the file ---

    def _check_magic(self) -> None:
        try:
            with open(self.path, "rb") as handle:
                head = handle.read(len(MAGIC))
        except OSError as exc:
            raise RecordingError(f"cannot read recording {self.path}: {exc.strerror}") from None
        if head != MAGIC:
            raise RecordingError(f"{self.path}: not an MCAP file (it does not start with the MCAP magic bytes)")

    def _has_footer(self) -> bool:
        size = self.path.stat().st_size
        if size < 2 * len(MAGIC):
            return False
        with open(self.path, "rb") as handle:
            handle.seek(size - len(MAGIC))
            if handle.read() != MAGIC:
                return False
            handle.seek(0)
            try:
                return make_reader(handle).get_summary() is not None
            except _CUT:
                return False

    def _read_contents(self) -> None:
        if self.complete:
            with open(self.path, "rb") as handle:
                reader = make_reader(handle)
                self.metadata = {m.name: dict(m.metadata) for m in reader.iter_metadata()}
                self.attachments = {a.name: a.data for a in reader.iter_attachments()}
                summary = reader.get_summary()
                self.channels = {c.topic: dict(c.metadata) for c in summary.channels.values()}
            return
        ticks = 0
        for record in self._stream_records():
            if isinstance(record, Metadata):
                self.metadata[record.name] = dict(record.metadata)
            elif isinstance(record, Attachment):
                self.attachments[record.name] = record.data
            elif isinstance(record, Channel):
                self.channels[record.topic] = dict(record.metadata)
            elif isinstance(record, Message):
                ticks += 1
        if ticks == 0:
            raise RecordingError(
                f"{self.path}: truncated: the file ends before its first whole chunk of ticks "
                f"({self.path.stat().st_size} bytes); nothing was recorded to read"
            )

    def _stream_records(self) -> Iterator[Any]:
        """Every record up to the cut, chunks broken up into their records."""
        with open(self.path, "rb") as handle:
            records = StreamReader(handle, emit_chunks=True, record_size_limit=self.path.stat().st_size).records
            while True:
                try:
                    record = next(records)
                    inner = breakup_chunk(record) if isinstance(record, Chunk) else [record]
                except StopIteration:
                    return
                except _CUT as exc:
                    self.cut_note = (
                        f"{self.path}: the recording ends early (its writer stopped before "
                        f"finishing it); read up to the cut at byte {handle.tell()} ({type(exc).__name__}: {exc})"
                    )
                    return
                yield from inner

    def _stream_messages(self) -> Iterator[tuple[Channel, Message]]:
        channels: dict[int, Channel] = {}
        for record in self._stream_records():
            if isinstance(record, Channel):
                channels[record.id] = record
            elif isinstance(record, Message):
                yield channels[record.channel_id], record


def open_recording(path: str | Path) -> Recording:
    """Open a recording; RecordingError naming the file and the problem if it cannot be read."""
    return Recording(path)
