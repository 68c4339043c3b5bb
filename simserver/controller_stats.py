"""Per-controller statistics of a run, in constant memory: counts, events, and round-trip times
in a logarithmic histogram (1 % wide bins), so a run of any length keeps the same few kilobytes."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

MAX_EVENTS = 20  # the latest events a summary shows
_BIN_RATIO = 1.01
_MIN_US = 1.0
_LOG_RATIO = math.log(_BIN_RATIO)
_BINS = int(math.log(1e9 / _MIN_US) / _LOG_RATIO) + 2  # 1 us .. 1000 s


class LatencyHistogram:
    """Percentiles of positive durations (µs) within 1 %, in a fixed number of bins."""

    def __init__(self) -> None:
        self.counts = [0] * _BINS  # a list: added to every tick, and a list's item adds in a third of numpy's time
        self.total = 0
        self.max_us = 0.0

    def add(self, value_us: float) -> None:
        index = 0 if value_us <= _MIN_US else min(_BINS - 1, 1 + int(math.log(value_us / _MIN_US) / _LOG_RATIO))
        self.counts[index] += 1
        self.total += 1
        if value_us > self.max_us:
            self.max_us = value_us

    def percentile(self, p: float) -> float | None:
        if self.total == 0:
            return None
        rank = max(1, math.ceil(p / 100.0 * self.total))
        index = int(np.searchsorted(np.cumsum(self.counts), rank))
        if index == 0:
            return _MIN_US
        centre = _MIN_US * _BIN_RATIO ** (index - 0.5)
        return min(centre, self.max_us)


@dataclass
class ControllerStats:
    ticks: int = 0
    missed: int = 0
    late_applied: int = 0
    errors: int = 0
    rtt: LatencyHistogram = field(default_factory=LatencyHistogram)
    policy_applied: str | None = None
    events: list[str] = field(default_factory=list)
    attached: bool = False
    joined_tick: int | None = None  # the tick of its latest attachment: its turns start there

    def event(self, text: str) -> None:
        self.events.append(text)
        del self.events[:-MAX_EVENTS]

    def public(self) -> dict[str, Any]:
        return {
            "ticks": self.ticks,
            "rtt_p50_us": self.rtt.percentile(50),
            "rtt_p99_us": self.rtt.percentile(99),
            "rtt_max_us": self.rtt.max_us if self.rtt.total else None,
            "missed": self.missed,
            "late_applied": self.late_applied,
            "errors": self.errors,
            "policy_applied": self.policy_applied,
            "events": list(self.events),
            "attached": self.attached,
            "joined_tick": self.joined_tick,
        }
