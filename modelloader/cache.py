"""Loaded bodies kept by the content of every file they were read from.

An entry remembers the sha256 of each file the load read (the model and every Inline or mesh
it pulled in). A lookup hashes those files again: if any changed, vanished or cannot be read,
the entry is dropped and the caller loads afresh. Hashing a few hundred kilobytes costs far
less than parsing them, and it notices an edit that keeps the size and the timestamp.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

CacheKey = tuple[str, tuple[tuple[str, Any], ...]]


@dataclass
class _Entry:
    wire: dict[str, Any]
    digests: dict[str, str]


def file_sha256(path: str) -> str | None:
    """The file's sha256; None when it is not a regular file that can be read (opened without
    blocking: a file replaced by a FIFO since its load must not hang the service)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        return hashlib.file_digest(handle, "sha256").hexdigest()


def body_digests(metadata: dict[str, Any]) -> dict[str, str]:
    """The content of every file a load read (``metadata["files"]``): as the loader saw it when
    it says so (``metadata["file_sha256"]``), else as it is now."""
    known = dict(metadata.get("file_sha256") or {})
    for path in metadata.get("files") or []:
        if path not in known:
            digest = file_sha256(path)
            known[path] = digest if digest is not None else ""
    return known


class BodyCache:
    """A bounded LRU map from (path, options) to a body's wire form, checked by content."""

    def __init__(self, capacity: int = 64) -> None:
        self.capacity = max(1, capacity)
        self._entries: OrderedDict[CacheKey, _Entry] = OrderedDict()
        self.hits = 0
        self.misses = 0

    def get(self, key: CacheKey) -> dict[str, Any] | None:
        entry = self._entries.get(key)
        if entry is not None and all(file_sha256(p) == d for p, d in entry.digests.items()):
            self._entries.move_to_end(key)
            self.hits += 1
            return entry.wire
        if entry is not None:
            del self._entries[key]
        self.misses += 1
        return None

    def put(self, key: CacheKey, wire: dict[str, Any], digests: dict[str, str]) -> None:
        self._entries[key] = _Entry(wire, dict(digests))
        self._entries.move_to_end(key)
        while len(self._entries) > self.capacity:
            self._entries.popitem(last=False)

    def clear(self) -> int:
        count = len(self._entries)
        self._entries.clear()
        return count

    def __len__(self) -> int:
        return len(self._entries)
