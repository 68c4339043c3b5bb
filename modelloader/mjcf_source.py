"""The MJCF file beside MuJoCo's compiled model: compiling it, finding an element's line for a
message, the files a load read, and element names.

MuJoCo's compiler resolves defaults, includes, ``fromto``, degrees and frames, from the files
mjcf_files.py read and checked; the compiled model keeps no line numbers, so a problem is located
by looking the element up in the file with lxml (by its name, else by its place among the
elements of its tag).
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import numpy as np
from lxml import etree

from hrpsim.errors import ModelError
from hrpsim.modelloader.mjcf_files import MjcfFiles
from hrpsim.modelloader.urdf_xml import Problems

MISSING_MUJOCO = "MJCF is read by MuJoCo's own compiler; install it with: pip install 'hrpsim[mujoco]'"


def import_mujoco(path: Path) -> Any:
    try:
        import mujoco
    except ImportError:
        raise ModelError(f"{path}: {MISSING_MUJOCO}") from None
    return mujoco


def source_spec(mujoco: Any, files: MjcfFiles) -> Any:
    """MuJoCo's MjSpec of the model, from the files hrpsim read and checked (mjcf_files.py): MuJoCo
    opens none itself. Its error (which names the line) is a ValueError."""
    return mujoco.MjSpec.from_string(files.text, include=files.include, assets=files.assets)


def compile_model(mujoco: Any, path: Path, files: MjcfFiles) -> tuple[Any, list[str], Any]:
    """MuJoCo's MjModel of the model at ``path``, its compiler's warnings and the MjSpec it was
    compiled from; its error (which names the line) as a ModelError.

    Textures are dropped before compiling: BodyInfo keeps colours, not images, and generating
    them is nearly all of MuJoCo's compile time for dm_control's files (their skybox)."""
    try:
        spec = source_spec(mujoco, files)
        for texture in list(spec.textures):
            spec.delete(texture)
        for material in spec.materials:
            material.textures = [""] * len(material.textures)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            model = spec.compile()
        return model, [f"MuJoCo: {' '.join(str(w.message).split())}" for w in caught], spec
    except ValueError as exc:
        message = " ".join(str(exc).split())
        raise ModelError(f"{path}: MuJoCo cannot compile this MJCF file: {message}") from None


def quat_matrix(mujoco: Any, quat: np.ndarray) -> np.ndarray:
    """MuJoCo's quaternion (w x y z) as a rotation matrix."""
    matrix = np.empty(9)
    mujoco.mju_quat2Mat(matrix, np.asarray(quat, float))
    return matrix.reshape(3, 3)


class MjcfSource:
    """The file's elements, to locate problems, and the names MuJoCo gave the compiled ones."""

    def __init__(
        self, path: Path, compiled: tuple[Any, list[str], Any], mujoco: Any, problems: Problems, files: MjcfFiles
    ) -> None:
        self.path = path
        self.paths = files.paths
        self.assets = files.assets  # the asset files' bytes, by the names the model gives them
        self.model, compiler_warnings, self.spec = compiled
        for message in compiler_warnings:
            problems.warn(None, message)
        self.mujoco = mujoco
        self.problems = problems
        self.root = files.root
        if self.root.tag != "mujoco":
            raise ModelError(f"{path}: root element is <{self.root.tag}>, expected <mujoco> (an MJCF file)")
        self.prefix = self._hrpsim_prefix()

    # --- names ---------------------------------------------------------------------------------

    def name(self, kind: str, index: int) -> str:
        """The element's name (an hrpsim-written file's ``model/`` prefix removed), "" if it has none."""
        obj = getattr(self.mujoco.mjtObj, f"mjOBJ_{kind.upper()}")
        name = self.mujoco.mj_id2name(self.model, obj, index) or ""
        return name[len(self.prefix) :] if self.prefix and name.startswith(self.prefix) else name

    @property
    def written_by_hrpsim(self) -> bool:
        return bool(self.prefix)

    def _hrpsim_prefix(self) -> str:
        """``MODEL/`` when every body is named so: hrpsim model convert's names, read back as they were."""
        model_name = self.root.get("model", "")
        bodies = [
            self.mujoco.mj_id2name(self.model, self.mujoco.mjtObj.mjOBJ_BODY, b) for b in range(1, self.model.nbody)
        ]
        prefix = f"{model_name}/"
        if model_name and bodies and all(b and b.startswith(prefix) for b in bodies):
            return prefix
        return ""

    # --- locating ------------------------------------------------------------------------------

    def element(self, tags: tuple[str, ...], name: str = "", nth: int = -1) -> etree._Element | None:
        """The file's element of one of ``tags`` named ``name`` (a hrpsim prefix put back), else the
        ``nth`` of those tags in the file outside ``<default>``; None when it is not in this file
        (an included one)."""
        found = [e for e in self.root.iter(*tags) if not any(a.tag == "default" for a in e.iterancestors())]
        if name:
            for wanted in (self.prefix + name, name):
                named = [e for e in found if e.get("name") == wanted]
                if named:
                    return named[0]
        return found[nth] if 0 <= nth < len(found) else None

    def refuse(self, tags: tuple[str, ...], name: str, nth: int, message: str) -> None:
        element = self.element(tags, name, nth)
        label = f"<{tags[0]}{f' name={name!r}' if name else ''}>"
        self.problems.add(element, message if element is not None else f"{label}: {message}")

    # --- files ---

    def files(self) -> list[str]:
        """This file and every file it read: what the modelloader's cache checks for edits."""
        return list(self.paths)
