"""The run summary's closed loops as an observer: the largest gap and angle of every extra joint
(the models' own and the project's) over the run, tick by tick (hrpsim/loop_gaps.py says what
they measure)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hrpsim.engines.base import Engine
from hrpsim.loop_gaps import LoopWatch, Pose
from hrpsim.simserver.tick_record import TickRecord
from hrpsim.transforms import quaternion_matrix


@dataclass
class _Loop:
    name: str  # MODEL/JOINT, or the project's joint name
    model1: str
    link1: int
    model2: str
    link2: int
    watch: LoopWatch | None = None
    gap: float = 0.0
    angle: float = 0.0


class LoopGapTracker:
    def __init__(self) -> None:
        self._loops: list[_Loop] = []

    def begin(self, engine: Engine) -> None:
        found = [
            (f"{model}/{extra.name}", model, model, extra)
            for model in engine.robots
            for extra in engine.body(model).extra_joints
        ]
        found += [(j.name, j.model1, j.model2, j.as_extra_joint()) for j in engine.project.extra_joints]
        self._loops = []
        for name, model1, model2, extra in found:
            loop = _Loop(
                name,
                model1,
                engine.body(model1).link_index(extra.link1),
                model2,
                engine.body(model2).link_index(extra.link2),
            )
            loop.watch = LoopWatch(extra, *self._poses(loop, engine.link_states))
            self._loops.append(loop)

    @staticmethod
    def _poses(loop: _Loop, links: Any) -> tuple[Pose, Pose]:
        first, second = links(loop.model1), links(loop.model2)
        return (
            (first.positions[loop.link1], quaternion_matrix(first.quaternions[loop.link1])),
            (second.positions[loop.link2], quaternion_matrix(second.quaternions[loop.link2])),
        )

    def observe(self, record: TickRecord) -> None:
        for loop in self._loops:
            gap, angle = loop.watch.gap(*self._poses(loop, record.links))
            loop.gap, loop.angle = max(loop.gap, gap), max(loop.angle, angle)

    def memory(self) -> list[tuple[float, float]]:
        """The largest gaps so far, for a snapshot."""
        return [(loop.gap, loop.angle) for loop in self._loops]

    def restore(self, memory: list[tuple[float, float]]) -> None:
        for loop, (gap, angle) in zip(self._loops, memory, strict=True):
            loop.gap, loop.angle = gap, angle

    def end(self, summary: dict[str, Any]) -> None:
        """Nothing to flush: the figures are added by :meth:`contribute`."""

    def contribute(self, summary: dict[str, Any]) -> None:
        """``loops``: the largest gap (m) and angle (rad) of each closed loop and of them all."""
        if not self._loops:
            return
        summary["loops"] = {
            "gap_max": max(loop.gap for loop in self._loops),
            "angle_max": max(loop.angle for loop in self._loops),
            "joints": {loop.name: {"gap_max": loop.gap, "angle_max": loop.angle} for loop in self._loops},
        }
