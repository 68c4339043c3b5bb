"""The nameserver's table: who is registered, by whom, and until when.

A registration is owned by whoever made it: the ``owner`` secret the registering process chose
(and, with keys, the key it connected with). Only its owner may refresh, replace or remove it,
and the secret is never shown: ``resolve`` and ``list`` give what others need to connect, no more.
"""

from __future__ import annotations

import hmac
import math
import time
from dataclasses import dataclass, field
from typing import Any

from hrpsim.errors import AccessDenied, NotFound, RequestError


@dataclass
class Entry:
    name: str
    kind: str
    endpoint: str
    owner: str  # the registering process's secret
    metadata: dict[str, Any] = field(default_factory=dict)
    registered_at: float = 0.0
    expires_at: float = 0.0
    peer: str = ""  # the key it registered with ("" without keys)

    def owned_by(self, owner: str, peer: str) -> bool:
        return hmac.compare_digest(self.owner.encode(), owner.encode()) and self.peer == peer

    def public(self, now: float) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": self.kind,
            "endpoint": self.endpoint,
            "metadata": self.metadata,
            "age": now - self.registered_at,
            "expires_in": self.expires_at - now,
        }


def _text(field_name: str, value: Any, *, allow_empty: bool = False) -> str:
    if not isinstance(value, str) or (not value and not allow_empty):
        raise RequestError(f"field {field_name!r} must be a non-empty string, got {value!r}")
    if len(value) > 1024:
        raise RequestError(f"field {field_name!r} is longer than 1024 characters")
    return value


class Registry:
    """Registrations expire ``ttl`` seconds after their last heartbeat (monotonic clock)."""

    def __init__(self, ttl: float = 3.0, clock=time.monotonic) -> None:
        if ttl <= 0:
            raise ValueError("ttl must be positive")
        self.ttl = ttl
        self._clock = clock
        self._entries: dict[str, Entry] = {}
        self._soonest = math.inf  # no entry expires before this (monotonic) time

    def expire(self) -> list[str]:
        now = self._clock()
        if now < self._soonest:  # nothing can have expired yet: every request need not walk the table
            return []
        gone = [name for name, e in self._entries.items() if e.expires_at <= now]
        for name in gone:
            del self._entries[name]
        # a heartbeat only moves an expiry later, so the least one now stays a safe bound until then
        self._soonest = min((e.expires_at for e in self._entries.values()), default=math.inf)
        return gone

    def register(
        self, name: Any, kind: Any, endpoint: Any, owner: Any, metadata: Any, peer: str = ""
    ) -> dict[str, Any]:
        name, kind = _text("name", name), _text("kind", kind)
        endpoint, owner = _text("endpoint", endpoint), _text("owner", owner)
        if not isinstance(metadata, dict):
            raise RequestError(f"field 'metadata' must be a map, got {type(metadata).__name__}")
        self.expire()
        now = self._clock()
        current = self._entries.get(name)
        if current is not None and not current.owned_by(owner, peer):
            raise AccessDenied(
                f"name {name!r} is already registered by another process (at {current.endpoint}); "
                "choose another name or stop that process"
            )
        self._entries[name] = Entry(name, kind, endpoint, owner, metadata, now, now + self.ttl, peer)
        self._soonest = min(self._soonest, now + self.ttl)
        return {"ttl": self.ttl}

    def heartbeat(self, name: Any, owner: Any, peer: str = "") -> dict[str, Any]:
        entry = self._owned(name, owner, peer)
        entry.expires_at = self._clock() + self.ttl
        return {"ttl": self.ttl}

    def unregister(self, name: Any, owner: Any, peer: str = "") -> bool:
        self._owned(name, owner, peer)
        del self._entries[name]
        return True

    def resolve(self, name: Any) -> dict[str, Any]:
        name = _text("name", name)
        self.expire()
        entry = self._entries.get(name)
        if entry is None:
            known = ", ".join(sorted(self._entries)) or "nothing"
            raise NotFound(f"no service named {name!r} is registered (registered: {known})")
        return entry.public(self._clock())

    def list(self, kind: Any = None) -> list[dict[str, Any]]:
        if kind is not None:
            kind = _text("kind", kind)
        self.expire()
        now = self._clock()
        return [
            e.public(now)
            for e in sorted(self._entries.values(), key=lambda e: e.name)
            if kind is None or e.kind == kind
        ]

    def _owned(self, name: Any, owner: Any, peer: str) -> Entry:
        name, owner = _text("name", name), _text("owner", owner)
        self.expire()
        entry = self._entries.get(name)
        if entry is None:
            raise NotFound(f"no service named {name!r} is registered")
        if not entry.owned_by(owner, peer):
            raise AccessDenied(f"{name!r} was registered by another process; only it may refresh or remove it")
        return entry
