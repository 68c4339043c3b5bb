"""The run summary's robot figures as an observer: what each model is (standing, fixed root, free body:
hrpsim.summary_report), where its root started and ended and how low and high it went, tick by tick;
where a fixed-root model's links went; and the verdict a standing robot gets. Every front end's
summary (``hrpsim launch --summary``, ``hrpsim sim summary``, ``Simulation.summary()``) is this one."""

from __future__ import annotations

import copy
from typing import Any

import numpy as np

from hrpsim.engines.base import Engine
from hrpsim.simserver.tick_record import TickRecord
from hrpsim.summary_report import FIXED_ROOT, MOVED_M, model_kind, upright, verdict


class RootTracker:
    def __init__(self) -> None:
        self.engine: Engine | None = None
        self._roots: dict[str, dict[str, Any]] = {}
        self._links_start: dict[str, np.ndarray] = {}  # fixed-root models: link frames at the start

    def begin(self, engine: Engine) -> None:
        self.engine = engine
        self._roots, self._links_start = {}, {}
        for name in engine.robots:
            p, r = engine.root_pose(name)
            body = engine.body(name)
            links = engine.link_positions(name).copy()
            kind = model_kind(
                free_root=body.root.joint_type == "free",
                has_joints=bool(body.joints),
                root_rotation=r,
                link_positions=links,
            )
            self._roots[name] = {
                "kind": kind,
                "root_start": [float(v) for v in p],
                "min_root_z": float(p[2]),
                "max_root_z": float(p[2]),
                "has_joints": bool(body.joints),
                "upright_start": upright(r),
            }
            if kind == FIXED_ROOT:
                self._links_start[name] = links

    def observe(self, record: TickRecord) -> None:
        for name, entry in self._roots.items():
            z = record.root_height(name)
            if z < entry["min_root_z"]:
                entry["min_root_z"] = z
            elif z > entry["max_root_z"]:
                entry["max_root_z"] = z

    def end(self, summary: dict[str, Any]) -> None:
        """Nothing to flush: the figures are read by :meth:`robots`."""

    def memory(self) -> dict[str, dict[str, Any]]:
        """The figures so far, for a snapshot (the links' starting frames are the run's, not the moment's)."""
        return copy.deepcopy(self._roots)

    def restore(self, memory: dict[str, dict[str, Any]]) -> None:
        self._roots = copy.deepcopy(memory)

    def robots(self) -> dict[str, Any]:
        """Per robot: kind, root_start, root_end, min_root_z and max_root_z (the state now included),
        has_joints, upright_start, verdict; a fixed-root model's moved_links."""
        out = {}
        for name, entry in self._roots.items():
            p, _ = self.engine.root_pose(name)
            entry["min_root_z"] = min(entry["min_root_z"], float(p[2]))
            entry["max_root_z"] = max(entry["max_root_z"], float(p[2]))
            figures = {
                **entry,
                "root_end": [float(v) for v in p] if np.all(np.isfinite(p)) else None,
                "min_root_z": float(entry["min_root_z"]),
                "max_root_z": float(entry["max_root_z"]),
            }
            if name in self._links_start:
                figures["moved_links"] = self._moved_links(name)
            figures["verdict"] = verdict(figures)
            out[name] = figures
        return out

    def _moved_links(self, name: str) -> dict[str, dict[str, list[float]]]:
        """{link: {start, end}} of the links whose frames moved more than MOVED_M, in link order."""
        start, end = self._links_start[name], self.engine.link_positions(name)
        moved = np.flatnonzero(~(np.linalg.norm(end - start, axis=1) <= MOVED_M))  # NaN: moved
        links = self.engine.body(name).links
        return {links[i].name: {"start": start[i].tolist(), "end": end[i].tolist()} for i in moved}
