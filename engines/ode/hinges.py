"""Hinge values beyond ODE's (-pi, pi]: every hinge of a model read once per step, turns counted.

ODE reads a hinge's angle from its bodies' poses, wrapped into (-pi, pi] and measured from the
pose the joint was made in. A joint's value is that reading plus the value at creation (the
offset) plus the whole turns counted so far, so that a wheel's value keeps growing. The readings
are taken after every step and every placement by hand, one getter call per hinge, and kept as
arrays: the drives, the state read and the turn count all use them without asking ODE again.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np

TURN = 2.0 * np.pi
_QUARTER = np.pi / 2.0


class _Link(Protocol):
    index: int
    kind: str
    offset: float
    joint: object


class HingeTurns:
    """The hinges of one model: rows in controller order first (``columns`` are their controller
    columns), then the hinges that have no joint id, in link order."""

    def __init__(self, links: Sequence[_Link], joints: Sequence[_Link]) -> None:
        commanded = [sim for sim in joints if sim.kind == "hinge"]
        ids = {id(sim) for sim in commanded}
        hinges = commanded + [sim for sim in links if sim.kind == "hinge" and id(sim) not in ids]
        self.columns = np.array([k for k, sim in enumerate(joints) if sim.kind == "hinge"], dtype=np.intp)
        self.row = {sim.index: row for row, sim in enumerate(hinges)}  # link index -> row
        self._links = np.array([sim.index for sim in hinges], dtype=np.intp)
        self._angle = [sim.joint.getAngle for sim in hinges]
        self.offsets = np.array([sim.offset for sim in hinges], dtype=float)
        self.turns = np.zeros(len(hinges))
        self.angles: np.ndarray | list[float] = self._read()  # ODE's readings at the last count
        self._near_wrap = True  # whether one of them lies beyond a quarter turn (checked at the next count)
        self._base = self.offsets + self.turns
        self.values = self.angles + self._base  # what the joints' values are now

    def _read(self) -> np.ndarray:
        return np.array([angle() for angle in self._angle], dtype=float)

    def track(self) -> None:
        """After a step: a reading that jumped by more than half a turn went round the wrap."""
        if not self._angle:
            return
        readings = [angle() for angle in self._angle]
        # Only a reading beyond a quarter turn, now or at the last count, can have wrapped.
        near_wrap = max(readings) > _QUARTER or min(readings) < -_QUARTER
        if near_wrap or self._near_wrap:
            jump = np.subtract(readings, self.angles)
            self.turns[jump > np.pi] -= TURN
            self.turns[jump < -np.pi] += TURN
            self._base = self.offsets + self.turns
        self._near_wrap = near_wrap
        self.angles = readings  # kept as floats: an array only near the wrap, where jumps are looked at
        self.values = np.add(readings, self._base)

    def sync(self, values: np.ndarray) -> None:
        """After the links were moved by hand: the turns that make each hinge read ``values``
        (per link, link order) again."""
        if not self._angle:
            return
        raw = self._read()
        self.turns = TURN * np.round((values[self._links] - self.offsets - raw) / TURN)
        self.angles, self._near_wrap = raw, True
        self._base = self.offsets + self.turns
        self.values = raw + self._base

    def restore(self, turns: np.ndarray) -> None:
        """After the bodies were put back as a snapshot had them: the turns counted then, and the
        readings of now (the same ones, from the same poses)."""
        if not self._angle:
            return
        raw = self._read()
        self.turns = np.array(turns, dtype=float)
        self.angles, self._near_wrap = raw, True  # a wrap check more than needed changes nothing
        self._base = self.offsets + self.turns
        self.values = raw + self._base
