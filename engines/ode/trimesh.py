"""Exact triangle-mesh collision through libode itself.

Debian's pyode is built with its trimesh wrapper disabled, while the libode it loads has trimesh
collision compiled in. A mesh therefore gets two geoms: a pyode box around it (the broad phase:
it lives in the space, carries the model and link, and finds candidate pairs) and a libode
trimesh made here through ctypes, attached to the same body, outside any space (the narrow
phase). :func:`collide` stands in for ``ode.collide``: a pair involving such a mesh is collided
with libode's ``dCollide`` on the trimesh, and the contacts come back as pyode ``Contact``s.

pyode never sees the trimesh geoms, so its geom tables stay consistent; the vertex and index
arrays are kept alive here because libode does not copy them.
"""

from __future__ import annotations

import ctypes
import logging
import weakref

import numpy as np
import ode

from hrpsim.engines.ode.contact_reduction import kept_indices
from hrpsim.engines.ode.libode import LIBODE

log = logging.getLogger("hrpsim.odemesh")

MAX_CONTACTS = 32


class _ContactGeom(ctypes.Structure):  # dContactGeom, double precision
    _fields_ = [
        ("pos", ctypes.c_double * 4),
        ("normal", ctypes.c_double * 4),
        ("depth", ctypes.c_double),
        ("g1", ctypes.c_void_p),
        ("g2", ctypes.c_void_p),
        ("side1", ctypes.c_int),
        ("side2", ctypes.c_int),
    ]


_CONTACT_DTYPE = np.dtype(
    [
        ("pos", "<f8", 4),
        ("normal", "<f8", 4),
        ("depth", "<f8"),
        ("g1", "<u8"),
        ("g2", "<u8"),
        ("side1", "<i4"),
        ("side2", "<i4"),
    ]
)
assert _CONTACT_DTYPE.itemsize == ctypes.sizeof(_ContactGeom)


def _load() -> ctypes.CDLL | None:
    lib = LIBODE
    if lib is None or not lib.dCheckConfiguration(b"ODE_EXT_trimesh"):
        return None
    vp, d = ctypes.c_void_p, ctypes.c_double
    signatures = {
        "dGeomTriMeshDataCreate": ([], vp),
        "dGeomTriMeshDataBuildDouble": ([vp, vp, ctypes.c_int, ctypes.c_int, vp, ctypes.c_int, ctypes.c_int], None),
        "dGeomTriMeshDataDestroy": ([vp], None),
        "dCreateTriMesh": ([vp, vp, vp, vp, vp], vp),
        "dGeomDestroy": ([vp], None),
        "dGeomSetBody": ([vp, vp], None),
        "dGeomSetPosition": ([vp, d, d, d], None),
        "dGeomSetRotation": ([vp, vp], None),
        "dGeomSetOffsetPosition": ([vp, d, d, d], None),
        "dGeomSetOffsetRotation": ([vp, vp], None),
        "dCollide": ([vp, vp, ctypes.c_int, vp, ctypes.c_int], ctypes.c_int),
        "dAllocateODEDataForThread": ([ctypes.c_uint], ctypes.c_int),
    }
    for name, (args, result) in signatures.items():
        fn = getattr(lib, name)
        fn.argtypes, fn.restype = args, result
    return lib


_LIB = _load()
AVAILABLE = _LIB is not None


def _matrix3(rotation: np.ndarray) -> ctypes.Array:
    """ODE's dMatrix3: three rows of four (the fourth unused)."""
    padded = np.zeros((3, 4))
    padded[:, :3] = rotation
    return (ctypes.c_double * 12)(*padded.ravel())


class ExactMesh:
    """A libode trimesh placed like the proxy geom's shape: on its body, or static in the world."""

    def __init__(self, vertices: np.ndarray, triangles: np.ndarray) -> None:
        assert _LIB is not None
        _LIB.dAllocateODEDataForThread(0xFFFFFFFF)  # trimesh colliders need per-thread data
        self._vertices = np.ascontiguousarray(vertices, dtype=np.float64)
        self._indices = np.ascontiguousarray(triangles, dtype=np.int32)
        self._data = _LIB.dGeomTriMeshDataCreate()
        _LIB.dGeomTriMeshDataBuildDouble(
            self._data,
            self._vertices.ctypes.data,
            3 * 8,
            len(self._vertices),
            self._indices.ctypes.data,
            self._indices.size,
            3 * 4,
        )
        self.id = _LIB.dCreateTriMesh(None, self._data, None, None, None)
        # The C objects go when this does; the arrays ride along so libode never reads freed memory.
        self._finalizer = weakref.finalize(self, _destroy, self.id, self._data, self._vertices, self._indices)

    def place(self, proxy: ode.GeomObject, translation: np.ndarray, rotation: np.ndarray) -> None:
        """Put the mesh on the proxy's body at this offset (or, without a body, at this world pose)."""
        assert _LIB is not None
        body = _LIB.dGeomGetBody(proxy._id())
        x, y, z = (float(v) for v in translation)
        if body:
            _LIB.dGeomSetBody(self.id, body)
            _LIB.dGeomSetOffsetPosition(self.id, x, y, z)
            _LIB.dGeomSetOffsetRotation(self.id, _matrix3(rotation))
        else:
            _LIB.dGeomSetPosition(self.id, x, y, z)
            _LIB.dGeomSetRotation(self.id, _matrix3(rotation))

    def destroy(self) -> None:
        self._finalizer()


def _destroy(geom: int, data: int, *_arrays: np.ndarray) -> None:
    if _LIB is not None:
        _LIB.dGeomDestroy(geom)  # a geom whose body was destroyed first is merely detached: still valid
        _LIB.dGeomTriMeshDataDestroy(data)


def exact_mesh_of(geom: ode.GeomObject) -> ExactMesh | None:
    return getattr(geom, "exact_mesh", None)


def collide(g1: ode.GeomObject, g2: ode.GeomObject, *, spanning: bool = False) -> list[ode.Contact]:
    """``ode.collide(g1, g2)``, with a mesh proxy's exact trimesh in place of its box; ``spanning``:
    of a mesh's contacts only those that span the patch (contact_reduction), made into pyode objects."""
    m1, m2 = exact_mesh_of(g1), exact_mesh_of(g2)
    if m1 is None and m2 is None:
        return ode.collide(g1, g2)
    assert _LIB is not None
    buffer = (_ContactGeom * MAX_CONTACTS)()
    count = _LIB.dCollide(
        m1.id if m1 else g1._id(), m2.id if m2 else g2._id(), MAX_CONTACTS, buffer, ctypes.sizeof(_ContactGeom)
    )
    found = np.frombuffer(buffer, dtype=_CONTACT_DTYPE, count=count)
    positions, normals, depths = found["pos"][:, :3], found["normal"][:, :3], found["depth"]
    contacts = []
    for i in kept_indices(positions, normals, depths) if spanning else range(count):
        contact = ode.Contact()
        contact.setContactGeomParams(tuple(positions[i].tolist()), tuple(normals[i].tolist()), float(depths[i]), g1, g2)
        contacts.append(contact)
    return contacts
