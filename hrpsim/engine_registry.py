"""The physics engines a project may name (``world.engine``): engine name -> its package.

Adding an engine is its folder (a package) plus one line here. The package's ``__init__.py``
declares, without importing the physics library:

- ``OPTIONS``: its settings, a tuple of :class:`hrpsim.engine_options.Option` (the project's
  ``world.<name>`` section, checked with the rest of the project file);
- ``ENGINE``: where its class is, ``"MODULE:CLASS"`` (a module relative to the package when it
  starts with a dot), imported only when a project runs on it;
- optionally ``PHYSICS = False`` for an engine that simulates no dynamics (the hardware stand-in's):
  the conformance suite's physics cases run on every other engine;
- optionally ``REQUIRES``, the modules its physics library is imported as, and ``INSTALL``, how to
  install them where they are missing (the error of a project that asks for the engine says so).

A project that names no engine runs on the first installed of ``DEFAULT_ENGINES``: ODE, the engine
OpenHRP's and Choreonoid's users know and the one the examples were tuned on, where Debian's
python3-pyode provides it; MuJoCo where only pip installed the physics (``pip install 'hrpsim[mujoco]'``).

The kernel names engines as strings, as the command line names its subcommands: it imports an
engine's declaration on demand and never the engine's code.
"""

from __future__ import annotations

import importlib
import importlib.util
from types import ModuleType

ENGINES: dict[str, str] = {
    "ode": "hrpsim.engines.ode",
    "kinematic": "hrpsim.engines.kinematic",
    "mujoco": "hrpsim.engines.mujoco",
}

DEFAULT_ENGINES = ("ode", "mujoco")


class EngineDeclarationError(ImportError):
    """An engine's package is registered but cannot be read (not installed, or broken)."""


def engine_names() -> tuple[str, ...]:
    return tuple(ENGINES)


def declaration(name: str) -> ModuleType:
    """The package registered as ``name``, with its ``OPTIONS`` and ``ENGINE``."""
    try:
        package = importlib.import_module(ENGINES[name])
    except ImportError as exc:
        raise EngineDeclarationError(f"the {name} engine cannot be imported ({ENGINES[name]}): {exc}") from exc
    for attribute in ("OPTIONS", "ENGINE"):
        if not hasattr(package, attribute):
            raise EngineDeclarationError(f"the {name} engine's package {ENGINES[name]!r} declares no {attribute}")
    return package


def physics_engines() -> list[str]:
    """The registered engines that simulate dynamics (their ``PHYSICS`` is not False)."""
    return [name for name in ENGINES if getattr(declaration(name), "PHYSICS", True)]


def engine_target(name: str) -> tuple[str, str]:
    """(absolute module, class name) of the engine registered as ``name``."""
    package = declaration(name)
    module, _, cls = package.ENGINE.partition(":")
    if module.startswith("."):
        module = importlib.util.resolve_name(module, package.__name__)
    return module, cls


def installed(name: str) -> bool:
    """Whether the physics library the engine ``name`` requires can be imported here (found, not imported)."""
    return all(importlib.util.find_spec(module) is not None for module in getattr(declaration(name), "REQUIRES", ()))


def install_hint(name: str) -> str:
    """How to install the engine's physics library."""
    return getattr(declaration(name), "INSTALL", f"pip install 'hrpsim[{name}]'")


def default_engine() -> str:
    """The engine of a project that names none: the first installed of ``DEFAULT_ENGINES`` (the first
    when none is, so that the error says how to install it)."""
    return next((name for name in DEFAULT_ENGINES if installed(name)), DEFAULT_ENGINES[0])
