"""The constraint wrenches a model's joints put on their links in the last step, in link frames.

ODE's joint feedback gives the force ``f`` and the torque ``t`` (about the body's centre of
mass, world frame) that a joint put on its child body in the last step. Everything read from it
is linear in that wrench turned into the link frame, ``(R^T f, R^T t)``: a joint's effort along
its axis, a force sensor's six values. Readers register the joints they need; the wrenches of
all of them come from one gather of ODE's memory and one batched product with the bodies'
rotations, once per reading of the bodies, and each reader contracts them with its own
constants.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from hrpsim.engines.ode.body_table import BodyReading, BodyTable, FeedbackTable


class JointWrenches:
    """Registered joints; ``link_frame(reading)`` gives their wrenches, once per reading."""

    def __init__(self, bodies: BodyTable, moving_links: Sequence) -> None:
        """``bodies``: the table of ``moving_links``' bodies, in that order."""
        self._bodies = bodies
        self._row_of = {id(sim): row for row, sim in enumerate(moving_links)}
        self._joints: list = []  # LinkSims whose joints' feedback is read, in row order
        self._built = False
        self._for: BodyReading | None = None  # the reading the kept wrenches were computed for
        self._wrenches: np.ndarray | None = None
        # ODE fills a joint's feedback in a step: before its first, the buffer holds whatever the
        # allocator left there (denormals, infinities), so the wrenches read as zero until then.
        self.measured = False
        self._restored: np.ndarray | None = None  # the feedback a snapshot had, until the next step

    def add(self, sim) -> int:
        """Read ``sim``'s joint from now on; returns its row in :meth:`link_frame`."""
        for row, joint in enumerate(self._joints):
            if joint is sim:
                return row
        self._joints.append(sim)
        self._built = False
        return len(self._joints) - 1

    def stepped(self) -> None:
        """A step filled every joint's feedback."""
        self.measured, self._restored = True, None

    def feedback(self) -> np.ndarray | None:
        """The registered joints' feedback of the last step (world frame), None before the first:
        what a snapshot keeps, since ODE's feedback cannot be written back."""
        if not self.measured:
            return None
        if not self._built:
            self._build()
        return (self._feedback.read() if self._restored is None else self._restored).copy()

    def restore(self, feedback: np.ndarray | None) -> None:
        """Read ``feedback`` (from :meth:`feedback`) instead of ODE's until the next step."""
        self.measured, self._restored, self._for = feedback is not None, feedback, None

    @property
    def direct(self) -> bool:
        """Whether the wrenches come straight from ODE's memory (False: through pyode's getters)."""
        if not self._built:
            self._build()
        return self._feedback.direct

    def _build(self) -> None:
        self._rows = np.array([self._row_of[id(sim)] for sim in self._joints], dtype=np.intp)
        self._feedback = FeedbackTable([(sim.joint, sim.body, sim.kind) for sim in self._joints])
        self._rotation_index = self._bodies.rotation_index(self._rows)  # None: from the reading
        self._built, self._for = True, None

    def link_frame(self, reading: BodyReading) -> np.ndarray:
        """(joints, 6): per registered joint, ``R^T f`` then ``R^T t`` (link frame). Computed once
        per reading of the bodies; callers must not write into it."""
        if reading is self._for:
            return self._wrenches
        if not self._built:
            self._build()
        if not self.measured:
            self._for, self._wrenches = reading, np.zeros((len(self._joints), 6))
            return self._wrenches
        if self._rotation_index is None:
            rotations = reading.rotations[self._rows]
        else:  # the same numbers as the reading's, gathered for these joints alone
            rotations = self._bodies.gather(self._rotation_index)
        # rows (f, t) of the world-frame wrench times R: the link-frame vectors, as rows
        feedback = self._feedback.read() if self._restored is None else self._restored
        wrenches = (feedback @ rotations).reshape(-1, 6)
        self._for, self._wrenches = reading, wrenches
        return wrenches
