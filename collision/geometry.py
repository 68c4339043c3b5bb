"""Which physics library answers the collision queries: ODE's collision functions, or MuJoCo's.

Both take the same scene and answer in the same types (hrpsim.geometry_queries). ODE comes first
where it is installed: it is the default engine, so the collision service then sees the shapes as
that engine collides them (a cone as a cylinder, a mesh by its triangles). Where only pip installed
the physics (``pip install 'hrpsim[mujoco]'``, no Debian python3-pyode), MuJoCo answers: a mesh then
collides as its convex hull (MuJoCo's rule), and rays still hit its triangles. Nothing here imports
a library until a scene asks for it.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Any

import numpy as np

from hrpsim.engine_registry import install_hint, installed
from hrpsim.errors import ConfigError
from hrpsim.geometry_queries import Hits, LinkPair, PairContacts, PosedScene, SceneBody

LIBRARIES = ("ode", "mujoco")  # in order of preference


@dataclass(frozen=True)
class Geometry:
    """One library's answers to the collision queries, on a scene's bodies at their poses."""

    name: str
    prepare: Callable[[SceneBody], Any]  # build (and check) a body's shapes; raises ModelError
    contacts: Callable[[PosedScene, dict[LinkPair, float], int], list[PairContacts]]
    place: Callable[[PosedScene, list[LinkPair]], None]  # pose the bodies the pairs name
    pair_contacts: Callable[[PosedScene, LinkPair], PairContacts | None]  # of placed bodies
    touches: Callable[[PosedScene, LinkPair], bool]  # of placed bodies
    cast: Callable[
        [PosedScene, np.ndarray, np.ndarray, float, list[str] | None, Collection[tuple[str, int]]], Hits
    ]  # origins (R, 3), unit directions (R, 3), max distance, bodies (None: all), links passed through


def _ode() -> Geometry:
    rays = importlib.import_module("hrpsim.engines.ode.rays")
    scene = importlib.import_module("hrpsim.engines.ode.scene")
    return Geometry(
        "ode", scene.geometry_of, scene.contacts, scene.place_bodies, scene.pair_contacts, scene.pair_touches, rays.cast
    )


def _mujoco() -> Geometry:
    scene = importlib.import_module("hrpsim.engines.mujoco.scene")
    return Geometry(
        "mujoco", scene.prepare, scene.contacts, scene.place_bodies, scene.pair_contacts, scene.pair_touches, scene.cast
    )


_LOADERS = {"ode": _ode, "mujoco": _mujoco}


def collision_geometry(name: str | None = None) -> Geometry:
    """The named library's geometry, or the first installed one; ConfigError saying how to install
    one when the library (or every library) is missing."""
    if name is not None and name not in _LOADERS:
        raise ConfigError(f"collision geometry {name!r} is unknown (choices: {', '.join(LIBRARIES)})")
    choices = [name] if name is not None else [lib for lib in LIBRARIES if installed(lib)]
    if not choices or not installed(choices[0]):
        wanted = name or " or ".join(LIBRARIES)
        hints = "; ".join(f"{lib}: {install_hint(lib)}" for lib in ([name] if name else LIBRARIES))
        raise ConfigError(f"collision queries and range sensors need {wanted}, which is not installed here ({hints})")
    return _LOADERS[choices[0]]()
