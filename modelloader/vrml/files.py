"""Reading VRML files for one load: the main file, its Inlines and EXTERNPROTO urls.

A :class:`SceneLoader` parses each file once per load (an Inline used twice is read once),
keeps the list of every file it read (for the model's metadata and the service's cache), and
resolves urls relative to the file that names them, as VRML says.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from urllib.parse import unquote, urlparse

from hrpsim.errors import ModelError
from hrpsim.files import allowed_path, read_model
from hrpsim.modelloader.vrml.nodes import ExternProto, ParsedFile, Proto, Where
from hrpsim.modelloader.vrml.parser import decode, parse_text
from hrpsim.modelloader.vrml.scope import resolve_file


class SceneLoader:
    """Reads and parses files, once each; collects problems (with locations) on the way."""

    def __init__(self) -> None:
        self.files: list[str] = []
        self.digests: dict[str, str] = {}  # sha256 of the bytes parsed, per file
        self.problems: list[str] = []
        self._parsed: dict[str, ParsedFile] = {}

    def load(self, path: str | Path) -> ParsedFile:
        """Parse ``path`` (raising ModelError for a missing file or a syntax error)."""
        absolute = os.path.abspath(os.fspath(path))
        cached = self._parsed.get(absolute)
        if cached is not None:
            return cached
        data = _read(absolute)
        self.files.append(absolute)
        self.digests[absolute] = hashlib.sha256(data).hexdigest()
        text = decode(data)
        del data  # the text is all the parser needs: one copy of a large file fewer while it runs
        parsed = parse_text(text, absolute)
        self._parsed[absolute] = parsed
        resolve_file(parsed, self.problems)
        for proto in parsed.protos:
            if isinstance(proto, ExternProto):
                self._resolve_extern(proto)
        return parsed

    def load_url(self, urls: list[str], where: Where, what: str) -> ParsedFile | None:
        """The first of ``urls`` that can be read, relative to the file of ``where``.

        A missing file is a problem naming it and the file that refers to it; a syntax error in
        a referred file is a problem too, so that one load reports everything it finds.
        """
        if not urls:
            self.problems.append(f"{where}: {what} without a url")
            return None
        tried = []
        for url in urls:
            path = resolve_url(url, where.file)
            if path is None:
                tried.append(f"{url!r} (only local files are read)")
                continue
            allowed_path(path, what)  # before any look at the file: a refusal says nothing of it
            if not os.path.isfile(path):
                tried.append(path)
                continue
            try:
                return self.load(path)
            except ModelError as exc:
                self.problems.extend(exc.problems)
                return None
        self.problems.append(
            f"{where}: {what} names a file that cannot be read: {', '.join(tried)} (referred to from {where.file})"
        )
        return None

    def _resolve_extern(self, proto: ExternProto) -> None:
        for url in proto.urls:
            base, _, fragment = url.partition("#")
            path = resolve_url(base, proto.where.file) if base else proto.where.file
            if path is None:
                continue
            allowed_path(path, "EXTERNPROTO")
            if not os.path.isfile(path):
                continue
            try:
                parsed = self.load(path)
            except ModelError as exc:
                self.problems.extend(exc.problems)
                return
            wanted = fragment or proto.name
            for candidate in parsed.protos:
                if isinstance(candidate, Proto) and candidate.name == wanted:
                    proto.resolved = candidate
                    return
        # An unresolved EXTERNPROTO matters only when an instance needs its body; OpenHRP's
        # own PROTOs are read by their fields, so this is not a problem by itself.


def resolve_url(url: str, including_file: str) -> str | None:
    """A local path for ``url`` written in ``including_file``; None for a remote url."""
    url = url.strip()
    parsed = urlparse(url)
    if parsed.scheme == "file":
        path = unquote(parsed.path)
        if parsed.netloc and parsed.netloc != "localhost":
            path = "//" + parsed.netloc + path
    elif parsed.scheme and len(parsed.scheme) > 1:  # one letter is a Windows drive
        return None
    else:
        path = url
    path = path.split("#", 1)[0]
    if not os.path.isabs(path):
        path = os.path.join(os.path.dirname(including_file), path)
    return os.path.normpath(path)


def _read(path: str) -> bytes:
    return read_model(path, "model file")
