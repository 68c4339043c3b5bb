"""Model files -> BodyInfo: one entry point that picks the reader by the file's suffix.

The formats are declared once, in MODEL_FORMATS: each format's name, suffixes, reader and the
options it takes. The command lines' help, the loader service's help and the error for an unknown
suffix are made from it, and docs/models.md's table is checked against it
(tests/modelloader/test_model_formats.py). Each reader is imported only when a file of its kind is
loaded. The ``world`` option (MJCF only) reads the file's environment, its world geoms, as a static
body.
"""

from __future__ import annotations

import importlib
import os
from dataclasses import dataclass
from pathlib import Path

from hrpsim.bodyinfo import Body
from hrpsim.errors import ModelError
from hrpsim.modelloader.sensor_names import check_and_name_sensors

# What reading a VRML mesh may take beyond the process's baseline, per byte of the file (checked
# by tests/modelloader/test_model_memory_bound.py); docs/security.md gives every format's figure.
MEMORY_PER_FILE_BYTE = 6


@dataclass(frozen=True)
class ModelFormat:
    """A model format: its name, its suffixes and its reader (``module:function``), and which of
    the options ``lenient`` and ``world`` the reader takes."""

    name: str
    suffixes: tuple[str, ...]
    reader: str
    lenient: bool = False
    world: bool = False

    @property
    def module(self) -> str:
        return self.reader.partition(":")[0]

    def describe(self) -> str:
        """``.dae/.zae COLLADA`` and the like: the suffixes, then the name."""
        return f"{'/'.join(self.suffixes)} {self.name}"


MODEL_FORMATS: tuple[ModelFormat, ...] = (
    ModelFormat("OpenHRP VRML97", (".wrl",), "hrpsim.modelloader.openhrp:load_vrml", lenient=True),
    ModelFormat("URDF", (".urdf",), "hrpsim.modelloader.urdf:load_urdf"),
    ModelFormat("COLLADA", (".dae", ".zae"), "hrpsim.modelloader.collada:load_collada"),
    ModelFormat("Choreonoid body", (".body",), "hrpsim.modelloader.choreonoid:load_choreonoid_body"),
    ModelFormat("MuJoCo's MJCF", (".xml",), "hrpsim.modelloader.mjcf:load_mjcf", world=True),
)

# suffix -> (module, function, takes the ``lenient`` option), from MODEL_FORMATS
FORMATS: dict[str, tuple[str, str, bool]] = {
    suffix: (*f.reader.split(":"), f.lenient) for f in MODEL_FORMATS for suffix in f.suffixes
}


def formats_help() -> str:
    """The formats as help and errors list them: ``.wrl OpenHRP VRML97, .urdf URDF, ...``."""
    return ", ".join(f.describe() for f in MODEL_FORMATS)


def format_of(suffix: str) -> ModelFormat | None:
    return next((f for f in MODEL_FORMATS if suffix.lower() in f.suffixes), None)


def load_body(path: str | Path, *, lenient: bool = False, world: bool = False) -> Body:
    """Read ``path`` into a Body; ModelError (naming the file) for anything that goes wrong."""
    path = Path(os.path.abspath(os.fspath(path)))
    suffix = path.suffix.lower()
    model_format = format_of(suffix)
    if model_format is None:
        raise ModelError(f"{path}: unknown model format {suffix or '(no suffix)'!r}; known: {formats_help()}")
    if world and not model_format.world:
        takers = " or ".join(f"{'/'.join(f.suffixes)} ({f.name})" for f in MODEL_FORMATS if f.world)
        raise ModelError(f"{path}: the world option reads the environment of a {takers} file; this is a {suffix} file")
    module_name, _, function = model_format.reader.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ModelError(f"{path}: the {suffix} reader is not available: {exc}") from None
    reader = getattr(module, function)
    options = {"world": world} if model_format.world else {"lenient": lenient} if model_format.lenient else {}
    try:
        body = reader(path, **options)
    except MemoryError:
        raise ModelError(
            f"{path}: not enough memory to read this model (reading a model takes 4 to 160 times "
            "its size, by format: docs/security.md)"
        ) from None
    check_and_name_sensors(body, str(path))
    return body
