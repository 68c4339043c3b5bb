"""``np.einsum`` without its Python dispatch, for the tick's small contractions.

Called without ``optimize``, ``np.einsum`` ends in numpy's C function ``c_einsum`` after a Python
dispatcher (a generator over the operands, for ``__array_function__``) and a Python wrapper. For
the few dozen numbers of a tick's readings those cost more than the contraction itself: about
2.5 µs of the 5-7 µs a call takes right after ODE's step. Calling the C function directly gives
the same results; it takes plain ndarrays only (no ``optimize``, no ``out`` keyword overrides).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np


def _c_einsum() -> Callable[..., np.ndarray]:
    try:
        from numpy._core.multiarray import c_einsum  # numpy 2
    except ImportError:
        try:
            from numpy.core.multiarray import c_einsum  # numpy 1.x
        except ImportError:
            return np.einsum
    return c_einsum


einsum = _c_einsum()
