"""The run summary's robot figures as an observer: where each robot's root started and ended, and
how low it went (``min_root_z``), tick by tick."""

from __future__ import annotations

import copy
from typing import Any

import numpy as np

from hrpsim.engines.base import Engine
from hrpsim.runsummary import upright
from hrpsim.simserver.record import TickRecord


class RootTracker:
    def __init__(self) -> None:
        self.engine: Engine | None = None
        self._roots: dict[str, dict[str, Any]] = {}

    def begin(self, engine: Engine) -> None:
        self.engine = engine
        self._roots = {}
        for name in engine.robots:
            p, r = engine.root_pose(name)
            self._roots[name] = {
                "root_start": [float(v) for v in p],
                "min_root_z": float(p[2]),
                "has_joints": bool(engine.body(name).joints),
                "upright_start": upright(r),
            }

    def observe(self, record: TickRecord) -> None:
        for name, entry in self._roots.items():
            z = record.root_height(name)
            if z < entry["min_root_z"]:
                entry["min_root_z"] = z

    def end(self, summary: dict[str, Any]) -> None:
        """Nothing to flush: the figures are read by :meth:`robots`."""

    def memory(self) -> dict[str, dict[str, Any]]:
        """The figures so far, for a snapshot."""
        return copy.deepcopy(self._roots)

    def restore(self, memory: dict[str, dict[str, Any]]) -> None:
        self._roots = copy.deepcopy(memory)

    def _lowest(self, name: str, entry: dict[str, Any]) -> np.ndarray:
        p, _ = self.engine.root_pose(name)
        z = p[2]
        if z < entry["min_root_z"]:
            entry["min_root_z"] = z
        return p

    def robots(self) -> dict[str, Any]:
        """Per robot: root_start, root_end, min_root_z (the state now included), has_joints, upright_start."""
        out = {}
        for name, entry in self._roots.items():
            p = self._lowest(name, entry)
            end = [float(v) for v in p] if np.all(np.isfinite(p)) else None
            out[name] = {
                "root_start": entry["root_start"],
                "root_end": end,
                "min_root_z": float(entry["min_root_z"]),
                "has_joints": entry["has_joints"],
                "upright_start": entry["upright_start"],
            }
        return out
