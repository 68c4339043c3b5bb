"""Every body's pose and velocity in one numpy gather, straight from ODE's memory.

pyode reads a body's position, rotation, quaternion and velocities one call (and one tuple) at a
time: 150 calls per tick for a 30-link robot, which made up most of the state guard and of an
observer's per-tick read of every link. ODE keeps those vectors inside each body's struct, and
``dBodyGetPosition`` and its siblings return pointers to them that stay valid for the body's
life. A table records those addresses once, as indices into one float64 view spanning the
bodies' memory, and reads them all with a single fancy index: only those addresses are ever
read, creating the view touches nothing.

Where libode cannot be loaded through ctypes (or its layout does not check out), the same table
reads through pyode's getters instead: slower, same numbers.
"""

from __future__ import annotations

import ctypes
import logging
from collections.abc import Sequence
from functools import cached_property

import numpy as np
import ode

from hrpsim.engines.ode.libode import JOINT_TYPE_FIXED, JOINT_TYPE_HINGE, JOINT_TYPE_SLIDER, LIBODE

log = logging.getLogger("hrpsim.simserver")

_DOUBLE = ctypes.sizeof(ctypes.c_double)
_MAX_SPAN = 1 << 34  # doubles: bodies further apart than 128 GiB are read through pyode
# Per body, in the gathered row: position 3, linear 3, angular 3 (together: the guard's motion),
# rotation 3x3, quaternion 4.
ROW = 3 + 3 + 3 + 9 + 4
_JOINT_TYPES = {"hinge": JOINT_TYPE_HINGE, "slider": JOINT_TYPE_SLIDER, "fixed": JOINT_TYPE_FIXED}


class BodyReading:
    """World-frame vectors of each body, at its centre of mass; rows in the table's body order.
    Readers must not write into the arrays: they are shared until the bodies move."""

    positions: np.ndarray  # (n, 3)
    rotations: np.ndarray  # (n, 3, 3)
    quaternions: np.ndarray  # (n, 4) w x y z
    linear: np.ndarray  # (n, 3)
    angular: np.ndarray  # (n, 3)

    def __init__(
        self,
        *,
        positions: np.ndarray,
        rotations: np.ndarray,
        quaternions: np.ndarray,
        linear: np.ndarray,
        angular: np.ndarray,
    ) -> None:
        self.positions, self.rotations, self.quaternions = positions, rotations, quaternions
        self.linear, self.angular = linear, angular


class GatheredReading(BodyReading):
    """A :class:`BodyReading` over one gathered (n, 22) array: each part is sliced from it when
    first asked for (a tick asks for two or three of them)."""

    def __init__(self, rows: np.ndarray) -> None:  # no super().__init__: the parts are properties here
        self.rows = rows

    @cached_property
    def motion(self) -> np.ndarray:
        """(n, 3, 3): position, linear and angular velocity, for checks."""
        return self.rows[:, 0:9].reshape(-1, 3, 3)

    @cached_property
    def positions(self) -> np.ndarray:
        return self.rows[:, 0:3]

    @cached_property
    def linear(self) -> np.ndarray:
        return self.rows[:, 3:6]

    @cached_property
    def angular(self) -> np.ndarray:
        return self.rows[:, 6:9]

    @cached_property
    def rotations(self) -> np.ndarray:
        return self.rows[:, 9:18].reshape(-1, 3, 3)

    @cached_property
    def quaternions(self) -> np.ndarray:
        return self.rows[:, 18:22]


class BodyTable:
    """Reads a fixed list of bodies at once; holds them so their memory outlives the table."""

    def __init__(self, bodies: Sequence[ode.Body]) -> None:
        self.bodies = list(bodies)
        self._view: np.ndarray | None = None
        self._index: np.ndarray | None = None
        if self.bodies and LIBODE is not None:
            self._map_memory()

    @property
    def direct(self) -> bool:
        """True when reads come straight from ODE's memory (False: through pyode's getters)."""
        return self._view is not None

    def read(self) -> GatheredReading:
        if self._view is not None:
            return GatheredReading(self._view[self._index])
        return GatheredReading(np.array([_pyode_row(b) for b in self.bodies]).reshape(len(self.bodies), ROW))

    def write(self, rows: np.ndarray) -> bool:
        """Write rows as :meth:`read` gives them back into ODE's memory, every double as it is; False
        when reads go through pyode (then only pyode's setters can place the bodies)."""
        if self._view is None:
            return False
        self._view[self._index] = rows
        return True

    def rotation_index(self, rows: np.ndarray) -> np.ndarray | None:
        """Indices that :meth:`gather` turns into the rotations of ``rows`` (None: no direct access)."""
        return None if self._index is None else self._index[rows, 9:18].reshape(-1, 3, 3)

    def gather(self, index: np.ndarray) -> np.ndarray:
        """The doubles of ODE's body memory at ``index`` (from :meth:`rotation_index`)."""
        return self._view[index]

    def motion(self) -> np.ndarray:
        """(n, 3, 3): each body's position, linear and angular velocity, in one gather (for checks)."""
        if self._view is not None:
            return self._view[self._index[:, :9]].reshape(len(self.bodies), 3, 3)
        return self.read().motion

    def _map_memory(self) -> None:
        addresses = np.array([_vector_addresses(_body_id(b)) for b in self.bodies], dtype=np.int64)
        mapped = _doubles_spanning([int(a) for a in addresses.ravel()], 12)  # a rotation is 12 doubles
        if mapped is None:
            log.info("ODE bodies are too far apart in memory to read at once: reading them through pyode")
            return
        self._view, base = mapped
        self._index = np.concatenate([_row_index(row - base) for row in addresses]).reshape(len(self.bodies), ROW)
        if not _agrees(self.read(), self.bodies):  # a libode whose layout is not what pyode reads
            log.warning("ODE's body memory does not read back as pyode reports it: reading through pyode")
            self._view = self._index = None


def _doubles_spanning(addresses: Sequence[int], extent: int) -> tuple[np.ndarray, int] | None:
    """A float64 view from the lowest address to ``extent`` doubles past the highest, and that
    lowest address; None when they lie too far apart or off the doubles' alignment. Making the
    view reads nothing: only the indexed elements are ever touched."""
    base = min(addresses)
    span = (max(addresses) - base) // _DOUBLE + extent
    if span > _MAX_SPAN or any((a - base) % _DOUBLE for a in addresses):
        return None
    return np.ctypeslib.as_array((ctypes.c_double * span).from_address(base)), base


def _body_id(body: ode.Body) -> int:
    """The dBodyID behind a pyode Body (pyode does not expose it): through a geom attached to it."""
    probe = ode.GeomSphere(None, 1.0)
    probe.setBody(body)
    try:
        return int(LIBODE.dGeomGetBody(probe._id()))
    finally:
        probe.setBody(None)


def _vector_addresses(body_id: int) -> list[int]:
    lib = LIBODE
    return [
        lib.dBodyGetPosition(body_id),
        lib.dBodyGetRotation(body_id),
        lib.dBodyGetQuaternion(body_id),
        lib.dBodyGetLinearVel(body_id),
        lib.dBodyGetAngularVel(body_id),
    ]


def _row_index(offsets: np.ndarray) -> np.ndarray:
    """Element indices of one body's row: ODE's rotation is three rows of four (the fourth unused)."""
    position, rotation, quaternion, linear, angular = (int(o) // _DOUBLE for o in offsets)
    return np.array(
        [position + i for i in range(3)]
        + [linear + i for i in range(3)]
        + [angular + i for i in range(3)]
        + [rotation + 4 * r + c for r in range(3) for c in range(3)]
        + [quaternion + i for i in range(4)],
        dtype=np.intp,
    )


def _pyode_row(body: ode.Body) -> tuple[float, ...]:
    return (
        *body.getPosition(),
        *body.getLinearVel(),
        *body.getAngularVel(),
        *body.getRotation(),
        *body.getQuaternion(),
    )


def _agrees(reading: BodyReading, bodies: Sequence[ode.Body]) -> bool:
    expected = np.array([_pyode_row(b) for b in bodies])
    got = np.hstack(
        [
            reading.positions,
            reading.linear,
            reading.angular,
            reading.rotations.reshape(len(bodies), 9),
            reading.quaternions,
        ]
    )
    return bool(np.array_equal(got, expected))


class FeedbackTable:
    """The wrench each of a list of hinge, slider or fixed joints put on its first body in the last step
    (``f1``, ``t1`` of ODE's dJointFeedback), read at once like :class:`BodyTable`.

    pyode does not expose a joint's ODE id, so each joint is found among its body's joints: the
    one joint of its kind with that body first and feedback switched on. Where that is not
    unambiguous (or libode is not reachable), reads go through pyode's ``getFeedback``."""

    def __init__(self, joints: Sequence[tuple[ode.Joint, ode.Body, str]]) -> None:
        self.joints = [joint for joint, _, _ in joints]
        self._view: np.ndarray | None = None
        self._index: np.ndarray | None = None
        if self.joints and LIBODE is not None:
            self._map_memory(joints)

    @property
    def direct(self) -> bool:
        return self._view is not None

    def read(self) -> np.ndarray:
        """(k, 2, 3): per joint, the force and the torque (about the body's centre of mass) on its body."""
        if self._view is not None:
            return self._view[self._index]
        return np.array([joint.getFeedback()[:2] for joint in self.joints]).reshape(len(self.joints), 2, 3)

    def _map_memory(self, joints: Sequence[tuple[ode.Joint, ode.Body, str]]) -> None:
        addresses = []
        for _, body, kind in joints:
            address = _feedback_address(_body_id(body), _JOINT_TYPES.get(kind, -1))
            if address is None:
                return
            addresses.append(address)
        mapped = _doubles_spanning(addresses, 8)  # f1 and t1: two vectors of four doubles
        if mapped is None:
            return
        self._view, base = mapped
        self._index = np.array(
            [[[(a - base) // _DOUBLE + part * 4 + i for i in range(3)] for part in (0, 1)] for a in addresses],
            dtype=np.intp,
        )


def _feedback_address(body_id: int, joint_type: int) -> int | None:
    """The dJointFeedback of the one joint of ``joint_type`` whose first body is ``body_id``."""
    lib = LIBODE
    found = []
    for i in range(lib.dBodyGetNumJoints(body_id)):
        joint = lib.dBodyGetJoint(body_id, i)
        if lib.dJointGetType(joint) == joint_type and lib.dJointGetBody(joint, 0) == body_id:
            feedback = lib.dJointGetFeedback(joint)
            if feedback:
                found.append(feedback)
    return found[0] if len(found) == 1 else None
