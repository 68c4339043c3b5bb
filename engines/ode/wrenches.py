"""What a model reads off its joints' constraint wrenches, all of it in one einsum per state.

ODE's joint feedback gives the force ``f`` and the torque ``t`` (about the body's centre of
mass, world frame) that a joint put on its child body in the last step. Everything read from it
is linear in that wrench turned into the link frame, ``(R^T f, R^T t)``: a joint's effort along
its axis, a force sensor's six values. So each reader registers fixed maps (m outputs x 2 x 3)
on the joints it needs, and one einsum over the gathered wrenches and the bodies' rotations
gives every output of every joint at once.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from hrpsim.engines.ode.body_table import BodyReading, FeedbackTable


class JointWrenches:
    """Registered outputs per joint; ``outputs(reading)`` computes them all, once per reading."""

    def __init__(self, moving_links: Sequence) -> None:
        self._row_of = {id(sim): row for row, sim in enumerate(moving_links)}
        self._joints: list = []  # LinkSims whose joints' feedback is read, in output order
        self._maps: list[list[np.ndarray]] = []  # per joint, the (m, 2, 3) maps registered on it
        self._built = False
        self._for: BodyReading | None = None  # the reading the kept outputs were computed for
        self._outputs: np.ndarray | None = None

    def add(self, sim, link_map: np.ndarray) -> tuple[int, list[int]]:
        """Register outputs ``link_map[a, c, j] . (R^T wrench_c)_j`` on ``sim``'s joint; returns
        the joint's row and the output columns they take (see :meth:`outputs`)."""
        link_map = np.asarray(link_map, float).reshape(-1, 2, 3)
        row = next((k for k, joint in enumerate(self._joints) if joint is sim), None)
        if row is None:
            row = len(self._joints)
            self._joints.append(sim)
            self._maps.append([])
        start = sum(len(m) for m in self._maps[row])
        self._maps[row].append(link_map)
        self._built = False
        return row, list(range(start, start + len(link_map)))

    @property
    def direct(self) -> bool:
        """Whether the wrenches come straight from ODE's memory (False: through pyode's getters)."""
        if not self._built:
            self._build()
        return self._feedback.direct

    def _build(self) -> None:
        width = max((sum(len(m) for m in maps) for maps in self._maps), default=0)
        self._map = np.zeros((len(self._joints), width, 2, 3))
        for k, maps in enumerate(self._maps):
            if maps:
                self._map[k, : sum(len(m) for m in maps)] = np.concatenate(maps)
        self._rows = np.array([self._row_of[id(sim)] for sim in self._joints], dtype=np.intp)
        self._feedback = FeedbackTable([(sim.joint, sim.body, sim.kind) for sim in self._joints])
        self._built, self._for = True, None

    def outputs(self, reading: BodyReading) -> np.ndarray:
        """(outputs per joint, joints): column k holds joint k's outputs in the order registered.
        Computed once per reading of the bodies; callers must not write into it."""
        if reading is self._for:
            return self._outputs
        if not self._built:
            self._build()
        # out[a, k] = sum over c, i, j of map[k, a, c, j] R[k, i, j] wrench[k, c, i]: one pass in C
        out = np.einsum("kacj,kij,kci->ak", self._map, reading.rotations[self._rows], self._feedback.read())
        self._for, self._outputs = reading, out
        return out
