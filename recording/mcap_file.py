"""One recording's MCAP file: what goes into it first, its batches of messages, its summary."""

from __future__ import annotations

import hashlib
from typing import Any, BinaryIO

import mcap.writer
import zstandard
from mcap.writer import CompressionType, Writer

from hrpsim import __version__
from hrpsim.recording import schemas

CHUNK_BYTES = 4 * 1024 * 1024  # a chunk also closes at this size (uncompressed), whichever comes first
# mcap's Writer compresses each chunk with zstandard.compress(), zstd's level 3, and takes no
# level. Level 1 compresses a recording's JSON twice as fast and 10 % smaller (the sample walk:
# 10.1 against 11.2 MB for 6 s), so the writer process hands the library a level-1 compressor.
ZSTD_LEVEL = 1

# A batch holds channel announcements (topic, schema title, channel metadata) and messages
# (topic, log time in ns, JSON bytes), in the order they happened.
Entry = tuple[str, Any, Any]


def file_digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class McapFile:
    """The mcap library's Writer on an open stream, with the channels registered so far."""

    def __init__(self, stream: BinaryIO) -> None:
        _compress_chunks_at(ZSTD_LEVEL)
        self.stream = stream
        self.writer = Writer(stream, chunk_size=CHUNK_BYTES, compression=CompressionType.ZSTD)
        self.writer.start(profile=schemas.PROFILE, library=f"hrpsim {__version__}")
        self.channels: dict[str, int] = {}
        self.schemas: dict[str, int] = {}

    def write_contents(self, contents: dict[str, Any]) -> None:
        """The project, the files it was built from and the bodies, as metadata and attachments."""
        writer = self.writer
        writer.add_metadata(schemas.META_RECORDING, contents[schemas.META_RECORDING])
        writer.add_metadata(schemas.META_PROJECT, contents[schemas.META_PROJECT])
        for path, data in contents["files"].items():
            writer.add_attachment(0, 0, path, schemas.FILE_MEDIA_TYPE, data)
        writer.add_metadata(schemas.META_FILES, {path: file_digest(data) for path, data in contents["files"].items()})
        for name, data in contents["bodies"].items():
            writer.add_attachment(0, 0, schemas.BODY_PREFIX + name, schemas.BODY_MEDIA_TYPE, data)
        writer.flush()

    def write_batch(self, batch: list[Entry]) -> None:
        """Channels first, then two chunks: states, commands and events; then link poses, scans and
        images (schemas.bulky), which are most of the bytes. A reader of joints or sensors (hrpsim
        plot) skips the second kind whole."""
        for topic, second, third in batch:
            if isinstance(second, str):
                self._channel(topic, second, third)
        add = self.writer.add_message
        for bulky in (False, True):
            for topic, second, third in batch:
                if not isinstance(second, str) and schemas.bulky(topic) == bulky:
                    add(self.channels[topic], log_time=second, publish_time=second, data=third)
            self.writer.flush()

    def write_summary(self, summary_json: str) -> None:
        self.writer.add_metadata(schemas.META_SUMMARY, {"json": summary_json})

    def finish(self) -> None:
        """The index and footer, so the file reads through its index."""
        self.writer.finish()
        self.stream.close()

    def _channel(self, topic: str, title: str, metadata: dict[str, str]) -> None:
        schema = self.schemas.get(title)
        if schema is None:
            schema = self.schemas[title] = self.writer.register_schema(title, "jsonschema", schemas.schema_bytes(title))
        self.channels[topic] = self.writer.register_channel(topic, "json", schema, metadata)


class _ZstdAtLevel:
    """What mcap's writer calls as ``zstandard.compress``, at a chosen level."""

    def __init__(self, level: int) -> None:
        self.level = level
        self.compress = zstandard.ZstdCompressor(level=level).compress


def _compress_chunks_at(level: int) -> None:
    current = getattr(mcap.writer, "zstandard", None)
    if current is zstandard or (isinstance(current, _ZstdAtLevel) and current.level != level):
        mcap.writer.zstandard = _ZstdAtLevel(level)
