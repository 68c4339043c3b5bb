"""Which files a service may read for a peer, and how much of them.

A service that opens files named by a request (the modelloader's ``load``, the simulator's
``init``) reads only regular files (never a FIFO, which would block it, nor a device such as
``/dev/zero``, which never ends), only under its allowed folders, and only up to a bounded number of
bytes. The rules are a :class:`ReadPolicy`; a service sets it around the work it does for a
request (:func:`reading_under`), and every reader of model and project files asks
:func:`read_regular` or :func:`check_readable`, so no reader can forget them.

Errors name the path and the rule, never the file's contents, and a path outside the allowed
folders is refused before anything is looked up, so an error does not tell whether it exists.
"""

from __future__ import annotations

import argparse
import contextlib
import contextvars
import os
import stat
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from hrpsim.errors import AccessDenied, HrpsimError, ModelError

ENV_MODEL_ROOTS = "HRPSIM_MODEL_ROOTS"
MAX_FILE_BYTES = 256 * 1024 * 1024  # a model or mesh file is text or geometry; nothing this large is one
MAX_UNPACKED_BYTES = 512 * 1024 * 1024  # everything an archive (.zae) may unpack to


@dataclass(frozen=True)
class ReadPolicy:
    """``roots``: the folders files may come from (None: anywhere, for in-process use)."""

    roots: tuple[Path, ...] | None = None
    max_file_bytes: int = MAX_FILE_BYTES
    max_unpacked_bytes: int = MAX_UNPACKED_BYTES

    def allows(self, path: Path) -> bool:
        return self.roots is None or any(path == root or path.is_relative_to(root) for root in self.roots)

    def where(self) -> str:
        return ", ".join(str(r) for r in self.roots or ()) or "nowhere"


ANYWHERE = ReadPolicy()  # in-process use: the caller is the operator
_POLICY: contextvars.ContextVar[ReadPolicy] = contextvars.ContextVar("hrpsim_read_policy", default=ANYWHERE)


def model_roots(explicit: Iterable[str | Path] = ()) -> tuple[Path, ...]:
    """The folders given on the command line and in ``$HRPSIM_MODEL_ROOTS`` (``:``-separated),
    resolved (symbolic links followed, so a link cannot lead out of them)."""
    listed = [*explicit, *filter(None, os.environ.get(ENV_MODEL_ROOTS, "").split(os.pathsep))]
    return tuple(dict.fromkeys(Path(p).expanduser().resolve() for p in listed))


def add_root_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--model-root",
        action="append",
        default=[],
        metavar="DIR",
        help=f"a folder model files may be read from (repeatable; also ${ENV_MODEL_ROOTS}, {os.pathsep}-separated)",
    )


def current_policy() -> ReadPolicy:
    return _POLICY.get()


@contextlib.contextmanager
def reading_under(policy: ReadPolicy) -> Iterator[None]:
    """Every :func:`read_regular` and :func:`check_readable` inside obeys ``policy``."""
    token = _POLICY.set(policy)
    try:
        yield
    finally:
        _POLICY.reset(token)


def allowed_path(path: str | Path, what: str, *, shown: str | None = None) -> Path:
    """``path`` resolved, when it lies under the allowed folders; AccessDenied otherwise, naming
    ``shown`` (the path as the peer gave it; default ``path``), never where a link leads."""
    policy = _POLICY.get()
    resolved = _resolved(path)
    if not policy.allows(resolved):
        raise AccessDenied(
            f"{path if shown is None else shown}: {what} outside the folders this service reads ({policy.where()}); "
            f"add its folder with --model-root or ${ENV_MODEL_ROOTS}"
        )
    return resolved


def may_read(path: str | Path) -> bool:
    """Whether ``path`` lies under the allowed folders: a search among candidate paths asks this
    before it looks at one, so that it finds nothing, rather than something it may not read."""
    return _POLICY.get().allows(_resolved(path))


def _resolved(path: str | Path) -> Path:
    return Path(os.path.abspath(os.fspath(path))).resolve()


def check_readable(path: str | Path, what: str) -> Path:
    """``path`` resolved, when it is an allowed regular file within the byte limit (for readers
    that open the file themselves, such as a mesh library)."""
    resolved = allowed_path(path, what)
    try:
        info = os.stat(resolved)
    except OSError as exc:
        raise AccessDenied(f"{path}: cannot read {what}: {exc.strerror or exc}") from None
    _check_kind(info, path, what)
    return resolved


def read_regular(path: str | Path, what: str) -> bytes:
    """The bytes of an allowed regular file, at most the policy's limit; AccessDenied naming the
    path and the rule otherwise. Opened without blocking, so a FIFO cannot hang the reader."""
    resolved = allowed_path(path, what)
    limit = _POLICY.get().max_file_bytes
    try:
        fd = os.open(resolved, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        raise AccessDenied(f"{path}: cannot read {what}: {exc.strerror or exc}") from None
    try:
        info = os.fstat(fd)
        _check_kind(info, path, what)  # before fdopen, which refuses a folder with a raw IsADirectoryError
    except AccessDenied:
        os.close(fd)
        raise
    with os.fdopen(fd, "rb") as handle:
        # Asked for its size and a byte more (a read allocates what it is asked for); a file that
        # grows while read is read on, still cut at the limit.
        data = handle.read(info.st_size + 1)
        if len(data) > info.st_size:
            data += handle.read(limit + 1 - len(data))
    if len(data) > limit:
        raise AccessDenied(f"{path}: {what} larger than {limit} bytes; not read")
    return data


def read_model(path: str | Path, what: str, missing: type[HrpsimError] = ModelError) -> bytes:
    """:func:`read_regular` for files a project or model names: a missing file inside the allowed
    folders is a ``missing`` error (a problem of the project or model that names it), not a refusal."""
    try:
        return read_regular(path, what)
    except AccessDenied:
        if not os.path.lexists(path) and may_read(path):
            raise missing(f"{path}: no such file (the {what})") from None
        raise


def _check_kind(info: os.stat_result, path: str | Path, what: str) -> None:
    if stat.S_ISDIR(info.st_mode):
        raise AccessDenied(f"{path}: is a folder, not a {what}")
    if not stat.S_ISREG(info.st_mode):
        raise AccessDenied(f"{path}: {what} is not a regular file ({_kind(info.st_mode)}); not read")
    limit = _POLICY.get().max_file_bytes
    if info.st_size > limit:
        raise AccessDenied(f"{path}: {what} of {info.st_size} bytes is larger than {limit} bytes; not read")


def _kind(mode: int) -> str:
    for test, name in (
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return name
    return "not a plain file"
