"""Model files -> BodyInfo: one entry point that picks the reader by the file's suffix.

``.wrl`` is OpenHRP VRML97 (modelloader.openhrp), ``.urdf`` URDF (modelloader.urdf), ``.dae``
and ``.zae`` COLLADA with the OpenRAVE extensions (modelloader.collada), ``.body`` Choreonoid body
files (modelloader.choreonoid), ``.xml`` MuJoCo's MJCF (modelloader.mjcf). Each reader is imported
only when a file of its kind is loaded. The ``world`` option (MJCF only) reads the file's
environment, its world geoms, as a static body.
"""

from __future__ import annotations

import importlib
import os
from pathlib import Path

from hrpsim.bodyinfo import Body
from hrpsim.errors import ModelError
from hrpsim.modelloader.sensor_names import check_and_name_sensors

# What reading a VRML mesh may take beyond the process's baseline, per byte of the file (checked
# by tests/modelloader/test_model_memory_bound.py); docs/security.md gives every format's figure.
MEMORY_PER_FILE_BYTE = 6

# suffix -> (module, function, takes the ``lenient`` option)
FORMATS: dict[str, tuple[str, str, bool]] = {
    ".wrl": ("hrpsim.modelloader.openhrp", "load_vrml", True),
    ".urdf": ("hrpsim.modelloader.urdf", "load_urdf", False),
    ".dae": ("hrpsim.modelloader.collada", "load_collada", False),
    ".zae": ("hrpsim.modelloader.collada", "load_collada", False),
    ".body": ("hrpsim.modelloader.choreonoid", "load_choreonoid_body", False),
    ".xml": ("hrpsim.modelloader.mjcf", "load_mjcf", False),
}
WORLD_FORMATS = (".xml",)  # readers that take the ``world`` option


def load_body(path: str | Path, *, lenient: bool = False, world: bool = False) -> Body:
    """Read ``path`` into a Body; ModelError (naming the file) for anything that goes wrong."""
    path = Path(os.path.abspath(os.fspath(path)))
    suffix = path.suffix.lower()
    if world and suffix not in WORLD_FORMATS:
        raise ModelError(f"{path}: the world option reads an MJCF file's environment; this is not an MJCF (.xml) file")
    if suffix not in FORMATS:
        raise ModelError(
            f"{path}: unknown model format {suffix or '(no suffix)'!r}; known: "
            + ", ".join(f"{s} ({m.rsplit('.', 1)[-1]})" for s, (m, _, _) in FORMATS.items())
        )
    module_name, function, has_lenient = FORMATS[suffix]
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ModelError(f"{path}: the {suffix} reader is not available: {exc}") from None
    reader = getattr(module, function)
    try:
        if suffix in WORLD_FORMATS:
            body = reader(path, world=world)
        else:
            body = reader(path, lenient=lenient) if has_lenient else reader(path)
    except MemoryError:
        raise ModelError(
            f"{path}: not enough memory to read this model (reading a model takes 4 to 160 times "
            "its size, by format: docs/security.md)"
        ) from None
    check_and_name_sensors(body, str(path))
    return body
