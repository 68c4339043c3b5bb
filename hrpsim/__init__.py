"""hrpsim: a distributed controller-simulator middleware in the tradition of OpenHRP3.

``hrpsim.Simulation`` (hrpsim/simulation.py) runs a whole simulation in this process; every other
part is a process of its own (``hrpsim launch``)."""

from __future__ import annotations

from typing import Any

__version__ = "0.9.0"  # CHANGELOG.md says what each version changed
__all__ = ["Simulation", "__version__"]


def __getattr__(name: str) -> Any:
    # Imported on first use: the processes that import hrpsim for its kernel need no engine.
    if name == "Simulation":
        from hrpsim.simulation import Simulation

        return Simulation
    raise AttributeError(f"module 'hrpsim' has no attribute {name!r}")
