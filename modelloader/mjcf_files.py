"""The files an MJCF model reads, each checked and read before MuJoCo sees any of them.

MuJoCo's compiler opens ``<include>`` files, ``<model>`` files and asset files itself, with a
blocking open and no notion of the folders a service may read. So hrpsim finds and reads every
one of them first, by MuJoCo's own rules for where each lies (checked against MuJoCo 4.0):

- an ``<include>`` file is relative to the folder of the model file it belongs to (the main
  file's folder for every include of its include tree), each file included once;
- a ``<model>`` file (what ``<attach>`` attaches) is relative to the same folder, and is a model
  of its own: its includes and asset files are relative to its own folder;
- meshes, skins, height fields and flexcomp files are relative to ``meshdir``, textures to
  ``texturedir`` (``assetdir`` sets both; a later ``<compiler>`` overrides an earlier one; each
  is relative to the model file's folder); an absolute path is used as it is; ``strippath``
  keeps only an asset's file name.

Each file is read by hrpsim.files' rules (a regular file under the allowed folders, within the
size limit; a FIFO is refused without blocking). MuJoCo then gets the model as text in which
every file attribute names one of the files read, handed to it in memory (``MjSpec.from_string``
with ``include`` and ``assets``), and every folder attribute is empty: nothing is left for it to
open. Texture files are not read at all: BodyInfo keeps colours, not images, and the reader drops
textures before compiling. At most :data:`MAX_FILES` files, :data:`MAX_TOTAL_BYTES` in all.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from lxml import etree

from hrpsim.errors import AccessDenied, ModelError
from hrpsim.files import read_model
from hrpsim.modelloader.urdf_xml import parse_xml

MAX_FILES = 4096  # an MJCF model and everything it reads; the largest real ones read a few hundred
MAX_TOTAL_BYTES = 512 * 1024 * 1024
MAX_INCLUDE_DEPTH = 32
FOLDER_ATTRIBUTES = ("assetdir", "meshdir", "texturedir")
MODEL_TAGS = ("include", "model")  # XML files: MuJoCo takes them from ``include``
_ATTRIBUTE = re.compile(r"(?<=\s)(file[A-Za-z]*|assetdir|meshdir|texturedir)(\s*=\s*)(\"[^\"]*\"|'[^']*')")
_UNSAFE = re.compile(r"[^A-Za-z0-9_.+-]")


@dataclass
class MjcfFiles:
    """The model as MuJoCo gets it: the main file's text and every file it reads, by the name
    its rewritten text gives it."""

    text: str
    root: etree._Element  # the main file as written, to locate problems in
    include: dict[str, bytes] = field(default_factory=dict)
    assets: dict[str, bytes] = field(default_factory=dict)
    paths: list[str] = field(default_factory=list)  # every file read, the main one first


@dataclass
class _Source:
    """One XML file of a model (its main file or an include)."""

    path: Path
    data: bytes
    root: etree._Element
    renames: list[tuple[str, str]] = field(default_factory=list)  # (attribute, new value), in order


@dataclass
class _Model:
    """A model file and its include tree."""

    folder: Path  # where its includes and asset folders are relative to: its main file's
    sources: list[_Source]
    included: dict[etree._Element, _Source] = field(default_factory=dict)  # each <include>'s file

    def elements(self, source: _Source | None = None) -> list[etree._Element]:
        """Every element of the model in MuJoCo's order: an include's in place of the <include>."""
        found = []
        for element in _own_elements((source or self.sources[0]).root):
            found.append(element)
            if element in self.included:
                found.extend(self.elements(self.included[element]))
        return found


@dataclass
class _AssetFolder:
    path: Path
    strip: bool  # strippath: only the file name of what an asset names counts


def read_mjcf_files(path: Path) -> MjcfFiles:
    """Every file the MJCF model at ``path`` reads, checked and read; ModelError (or AccessDenied
    for a file the rules refuse) naming the file and line that refers to it."""
    reader = _Reader()
    main = reader.model(path, "")
    return MjcfFiles(_text(main), main.root, reader.include, reader.assets, reader.paths)


class _Reader:
    def __init__(self) -> None:
        self.include: dict[str, bytes] = {}
        self.assets: dict[str, bytes] = {}
        self.paths: list[str] = []
        self._names: dict[Path, str] = {}  # each file read once, under one name
        self._models: list[Path] = []  # the <model> files being read, to refuse one that holds itself
        self._bytes = 0

    def model(self, path: Path, where: str) -> _Source:
        """The model file ``path`` with its include tree read and every file attribute renamed;
        its asset files read."""
        if path in self._models or len(self._models) > MAX_INCLUDE_DEPTH:
            raise ModelError(f"{where}: the model holds itself (or models nest more than {MAX_INCLUDE_DEPTH} deep)")
        self._models.append(path)
        model = _Model(path.parent, [])
        self._tree(model, path, 0, where)
        folder = _asset_folder(model.elements(), model.folder)
        for source in reversed(model.sources):  # an include's text is renamed before its includer's
            for element in _own_elements(source.root):
                self._rename(model, source, element, folder)
        self._models.pop()
        return model.sources[0]

    def _tree(self, model: _Model, path: Path, depth: int, where: str) -> _Source:
        data = self._read(path, "included MJCF file" if model.sources else "MJCF file", where)
        source = _Source(path, data, parse_xml(data, path, "MJCF"))
        model.sources.append(source)
        for element in source.root.iter("include"):
            file = element.get("file")
            if not file:
                continue  # MuJoCo's own error names it
            here = f"{path}:{element.sourceline}: <include file={file!r}>"
            included = _resolve(model.folder, file)
            if included in (s.path for s in model.sources) or included == model.sources[0].path.resolve():
                raise ModelError(f"{here}: the file is already included (MuJoCo includes a file once)")
            if depth >= MAX_INCLUDE_DEPTH:
                raise ModelError(f"{here}: includes nest more than {MAX_INCLUDE_DEPTH} deep")
            model.included[element] = self._tree(model, included, depth + 1, here)
        return source

    def _rename(self, model: _Model, source: _Source, element: etree._Element, folder: _AssetFolder) -> None:
        """Record the new values of the element's file and folder attributes, in their order."""
        for attribute, value in element.attrib.items():
            if attribute in FOLDER_ATTRIBUTES:
                source.renames.append((attribute, ""))
            elif attribute.startswith("file"):
                where = f"{source.path}:{element.sourceline}: <{element.tag} {attribute}={value!r}>"
                source.renames.append((attribute, self._file(model, element, value, folder, where)))

    def _file(self, model: _Model, element: etree._Element, value: str, folder: _AssetFolder, where: str) -> str:
        """The name MuJoCo gets for the file an attribute names, once it is read."""
        if element.tag == "texture" or not value:
            return ""  # never read: textures are dropped before compiling
        if element.tag == "include":
            return self._name(
                model.included[element].path, _text(model.included[element]).encode("utf-8"), self.include
            )
        if element.tag == "model":
            path = _resolve(model.folder, value)
            if path not in self._names:
                text = _text(self.model(path, where)).encode("utf-8")  # its own folder, its own includes
                self._name(path, text, self.include)
            return self._names[path]
        path = _resolve(folder.path, os.path.basename(value) if folder.strip else value)
        if path not in self._names:
            self._name(path, self._read(path, f"<{element.tag}> file", where), self.assets)
        return self._names[path]

    def _read(self, path: Path, what: str, where: str) -> bytes:
        if len(self.paths) >= MAX_FILES:
            raise ModelError(f"{where or path}: an MJCF model may read at most {MAX_FILES} files")
        data = read_model(path, what) if not where else _read_referred(path, what, where)
        self._bytes += len(data)
        if self._bytes > MAX_TOTAL_BYTES:
            raise ModelError(f"{where or path}: the model's files hold more than {MAX_TOTAL_BYTES} bytes in all")
        self.paths.append(str(path))
        return data

    def _name(self, path: Path, data: bytes, table: dict[str, bytes]) -> str:
        name = f"{len(self._names)}-{_UNSAFE.sub('_', path.name)}"
        self._names[path] = name
        table[name] = data
        return name


def _read_referred(path: Path, what: str, where: str) -> bytes:
    """The file another names; a refusal names where it is named, then the path and the rule."""
    try:
        return read_model(path, what)
    except (ModelError, AccessDenied) as exc:
        raise type(exc)(f"{where}: {exc.message}") from None


def _resolve(folder: Path, file: str) -> Path:
    """Where MuJoCo looks for ``file`` written relative to ``folder`` (an absolute one as it is)."""
    return Path(os.path.normpath(os.path.join(folder, file)))


def _own_elements(root: etree._Element) -> list[etree._Element]:
    return [e for e in root.iter() if isinstance(e.tag, str)]


def _asset_folder(elements: list[etree._Element], folder: Path) -> _AssetFolder:
    """Where asset files are read from, as the model's compiler settings leave it (a later
    compiler element overriding an earlier one). Textures are never read: only meshdir counts."""
    mesh, strip = "", False
    for compiler in (e for e in elements if e.tag == "compiler"):
        mesh = compiler.get("meshdir", compiler.get("assetdir", mesh))
        strip = compiler.get("strippath", "true" if strip else "false") == "true"
    return _AssetFolder(_resolve(folder, mesh) if mesh else folder, strip)


def _text(source: _Source) -> str:
    """The file's text with its file and folder attributes renamed, lines kept where they were;
    checked by parsing it again (any doubt: the parsed tree written out, lines or not)."""
    try:
        text = source.data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ModelError(f"{source.path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    pending = list(source.renames)

    def rename(match: re.Match[str]) -> str:
        if pending and pending[0][0] == match.group(1):
            quote = match.group(3)[0]
            return f"{match.group(1)}{match.group(2)}{quote}{pending.pop(0)[1]}{quote}"
        return match.group(0)

    renamed = _ATTRIBUTE.sub(rename, text)
    if not pending and _renamed_values(renamed, source.path) == [v for _, v in source.renames]:
        return renamed
    return _written_out(source)


def _renamed_values(text: str, path: Path) -> list[str]:
    """The values of the file and folder attributes of ``text``, in order (as _Source.renames)."""
    root = parse_xml(text.encode("utf-8"), path, "MJCF")
    return [
        value
        for element in _own_elements(root)
        for attribute, value in element.attrib.items()
        if attribute in FOLDER_ATTRIBUTES or attribute.startswith("file")
    ]


def _written_out(source: _Source) -> str:
    """The file's parsed tree with the new values, written out: a fallback for text the renaming
    by position cannot be sure of (an attribute's text inside a comment or another value)."""
    root = parse_xml(source.data, source.path, "MJCF")
    pending = list(source.renames)
    for element in _own_elements(root):
        for attribute in list(element.attrib):
            if attribute in FOLDER_ATTRIBUTES or attribute.startswith("file"):
                element.set(attribute, pending.pop(0)[1])
    return etree.tostring(root, encoding="unicode")
