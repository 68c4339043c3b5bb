"""Shared by the model loader tests: where the corpus is, its facts, and a modelloader process."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from process_helpers import MODEL_FACTS, MODELS, ManagedProcess, spawn
from process_helpers import wait_registered as registered_entry

REPO = Path(__file__).resolve().parents[1]
HRPSIM = [sys.executable, "-m", "hrpsim"]

SENSOR_TYPE_OF_FACT = {
    "Force": "force",
    "RateGyro": "gyro",
    "Acceleration": "accel",
    "Vision": "vision",
    "Range": "range",
}


JOINT_PROTO = """
PROTO Joint [
  exposedField SFVec3f translation 0 0 0
  exposedField SFRotation rotation 0 0 1 0
  exposedField MFNode children []
  exposedField SFString jointType ""
  exposedField SFInt32 jointId -1
  exposedField SFVec3f jointAxis 0 0 1
  exposedField MFFloat ulimit []
  exposedField MFFloat llimit []
] { Transform { translation IS translation rotation IS rotation children IS children } }
PROTO Segment [
  exposedField SFVec3f centerOfMass 0 0 0
  exposedField SFFloat mass 0
  exposedField MFFloat momentsOfInertia [0 0 0 0 0 0 0 0 0]
  exposedField MFNode children []
] { Group { children IS children } }
PROTO Humanoid [ exposedField MFNode humanoidBody [] exposedField SFString name "" ] { Group {} }
"""


def write_model(tmp_path: Path, body: str, name: str = "m.wrl", header: str = "#VRML V2.0 utf8\n") -> Path:
    """A model file in ``tmp_path``: the minimal OpenHRP PROTOs, then ``body``."""
    path = tmp_path / name
    path.write_text(header + JOINT_PROTO + body)
    return path


def vrml_facts() -> dict[str, dict[str, Any]]:
    models = json.loads(MODEL_FACTS.read_text())["models"]
    return {rel: facts for rel, facts in models.items() if rel.endswith(".wrl")}


def vrml_corpus_files() -> list[Path]:
    return sorted((MODELS / "openhrp3" / "model").rglob("*.wrl"))


def wait_registered(nameserver: str, name: str, proc: ManagedProcess, timeout: float = 20.0) -> str:
    """The endpoint ``name`` registered, once it has."""
    return registered_entry(nameserver, name, proc, timeout)["endpoint"]


@contextmanager
def modelloader_process(
    nameserver: str,
    folder: Path,
    name: str = "modelloader",
    *,
    roots: list[Path] | None = None,
    args: tuple[str, ...] = (),
) -> Iterator[ManagedProcess]:
    """A real ``hrpsim run modelloader`` registered with ``nameserver``; stopped afterwards.
    ``roots``: the only folders it reads (default: the repository and ``folder``)."""
    confined = [a for root in roots or () for a in ("--model-root", str(root))]
    proc = spawn(
        ["run", "modelloader", "--nameserver", nameserver, "--name", name, *confined, *args],
        folder / f"{name}.log",
        env={"HRPSIM_MODEL_ROOTS": ""} if roots else None,
    )
    try:
        proc.address = wait_registered(nameserver, name, proc)
        yield proc
    finally:
        proc.stop()
