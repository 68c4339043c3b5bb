"""The libode that pyode is linked against, through ctypes, for what pyode does not expose.

Loaded once; ``None`` when it cannot be found or is not built in double precision (every ctypes
structure here assumes ``dReal`` is a C double).
"""

from __future__ import annotations

import ctypes
import ctypes.util

_SIGNATURES: dict[str, tuple[list, object]] = {
    "dGeomGetBody": ([ctypes.c_void_p], ctypes.c_void_p),
    "dBodyGetPosition": ([ctypes.c_void_p], ctypes.c_void_p),
    "dBodyGetRotation": ([ctypes.c_void_p], ctypes.c_void_p),
    "dBodyGetQuaternion": ([ctypes.c_void_p], ctypes.c_void_p),
    "dBodyGetLinearVel": ([ctypes.c_void_p], ctypes.c_void_p),
    "dBodyGetAngularVel": ([ctypes.c_void_p], ctypes.c_void_p),
    "dBodyGetNumJoints": ([ctypes.c_void_p], ctypes.c_int),
    "dBodyGetJoint": ([ctypes.c_void_p, ctypes.c_int], ctypes.c_void_p),
    "dJointGetType": ([ctypes.c_void_p], ctypes.c_int),
    "dJointGetBody": ([ctypes.c_void_p, ctypes.c_int], ctypes.c_void_p),
    "dJointGetFeedback": ([ctypes.c_void_p], ctypes.c_void_p),
    "dRandGetSeed": ([], ctypes.c_ulong),
    "dRandSetSeed": ([ctypes.c_ulong], None),
}
JOINT_TYPE_HINGE = 2  # ODE's dJointType
JOINT_TYPE_SLIDER = 3
JOINT_TYPE_FIXED = 7


def _load() -> ctypes.CDLL | None:
    try:
        lib = ctypes.CDLL(ctypes.util.find_library("ode") or "libode.so.8")
    except OSError:
        return None
    if not lib.dCheckConfiguration(b"ODE_double_precision"):
        return None
    for name, (args, result) in _SIGNATURES.items():
        fn = getattr(lib, name)
        fn.argtypes, fn.restype = args, result
    return lib


LIBODE = _load()
