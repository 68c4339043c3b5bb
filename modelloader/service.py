"""The modelloader process: ``hrpsim run modelloader [--nameserver ADDR] [--bind ADDR] [--name NAME]``.

Operations:

- ``load(path, options=None)`` -> ``Body.to_wire()``. ``path`` is a local path or a file:// url
  (relative paths are taken from the service's working directory, so clients send absolute
  ones) to a regular file under the model roots (``--model-root``, ``$HRPSIM_MODEL_ROOTS``; the
  working directory when none is given; ``~`` is not expanded); ``options`` may hold ``lenient``
  (bool) and ``world`` (bool: an MJCF file's environment). Results are cached by the content of
  the model file and of every file it read, so an edited Inline is noticed.
- ``clear()`` -> how many cached bodies were dropped.
- ``stats()`` -> cache size, hits and misses.

A model that cannot be loaded is an error reply (ModelError naming file, line and problem);
the service goes on serving.
"""

from __future__ import annotations

import argparse
import logging
import os
import time
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from hrpsim.cli_options import add_service_options
from hrpsim.errors import HrpsimError, RequestError
from hrpsim.files import ReadPolicy, add_root_option, allowed_path, model_roots, reading_under
from hrpsim.logs import setup_logging
from hrpsim.modelloader import load_body
from hrpsim.modelloader.cache import BodyCache, CacheKey, file_sha256
from hrpsim.service import Operation, Service

log = logging.getLogger("hrpsim.modelloader")

OPTIONS: dict[str, type] = {"lenient": bool, "world": bool}  # world: an MJCF file's environment


class ModelLoaderService(Service):
    kind = "modelloader"

    def __init__(
        self, name: str = "modelloader", *, cache_size: int = 64, roots: tuple[Path, ...] = (), **kwargs: Any
    ) -> None:
        self.cache = BodyCache(cache_size)
        self.policy = ReadPolicy(roots=roots or (Path.cwd().resolve(),))
        super().__init__(name, **kwargs)

    def operations(self) -> dict[str, Operation]:
        return {"load": self.load, "clear": self.clear, "stats": self.stats}

    def roles(self) -> dict[str, str]:  # clear needs admin (the default)
        return {"load": "observer", "stats": "observer"}

    def load(self, path: Any, options: Any = None) -> dict[str, Any]:
        local = local_path(path)
        opts = checked_options(options)
        with reading_under(self.policy):
            # the folders first: a path outside them learns nothing of its format, existence or link target
            allowed_path(local, "model file", shown=path)
            return self._load(local, opts)

    def _load(self, local: str, opts: dict[str, Any]) -> dict[str, Any]:
        key: CacheKey = (local, tuple(sorted(opts.items())))
        wire = self.cache.get(key)
        if wire is not None:
            return wire
        started = time.perf_counter()
        body = load_body(local, **opts)
        wire = body.to_wire()
        self.cache.put(key, wire, _digests(body.metadata))
        log.info(
            "loaded %s (%s, %d links) in %.0f ms",
            local,
            body.name,
            len(body.links),
            (time.perf_counter() - started) * 1000,
        )
        return wire

    def clear(self) -> int:
        return self.cache.clear()

    def stats(self) -> dict[str, int]:
        return {"bodies": len(self.cache), "hits": self.cache.hits, "misses": self.cache.misses}


def local_path(path: Any) -> str:
    """An absolute local path from a path or file:// url; RequestError for anything else."""
    if not isinstance(path, str) or not path.strip():
        raise RequestError(
            f"load: path must be a non-empty string (a file path or file:// url), got {path!r}", field="path"
        )
    parsed = urlparse(path)
    if parsed.scheme == "file":
        path = unquote(parsed.path)
    elif len(parsed.scheme) > 1:
        raise RequestError(f"load: only local files are read; {path!r} is a {parsed.scheme}: url", field="path")
    if "\0" in path:
        raise RequestError("load: path contains a NUL character; no file name does", field="path")
    return os.path.abspath(path)  # no ~ expansion: the service's home is none of the peer's business


def checked_options(options: Any) -> dict[str, Any]:
    if options is None:
        return {}
    if not isinstance(options, dict):
        raise RequestError(f"load: options must be a map such as {{'lenient': true}}, got {options!r}", field="options")
    unknown = sorted(set(options) - set(OPTIONS))
    if unknown:
        raise RequestError(
            f"load: unknown option(s) {', '.join(map(repr, unknown))}; known: {', '.join(OPTIONS)}",
            field=f"options.{unknown[0]}",
        )
    for name, value in options.items():
        if not isinstance(value, OPTIONS[name]):
            raise RequestError(
                f"load: option {name!r} must be {OPTIONS[name].__name__}, got {value!r}", field=f"options.{name}"
            )
    return dict(options)


def _digests(metadata: dict[str, Any]) -> dict[str, str]:
    """The content of every file the load read: as the loader saw it when it says so."""
    known = dict(metadata.get("file_sha256") or {})
    for path in metadata.get("files") or []:
        if path not in known:
            digest = file_sha256(path)
            known[path] = digest if digest is not None else ""
    return known


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="hrpsim run modelloader", description="Serve model files (.wrl, .urdf, .dae, .zae, .body) as BodyInfo."
    )
    add_service_options(parser, name="modelloader")
    add_root_option(parser)
    parser.add_argument("--cache-size", type=int, default=64, help="bodies kept in the cache (default 64)")
    args = parser.parse_args(argv)
    setup_logging("modelloader")
    try:
        service = ModelLoaderService(
            args.name,
            bind=args.bind,
            nameserver=args.nameserver,
            cache_size=args.cache_size,
            roots=model_roots(args.model_root),
        )
        print(f"modelloader {args.name!r} bound to {service.endpoint}", flush=True)
        service.serve_forever()
    except HrpsimError as exc:  # cannot bind, or the nameserver cannot be reached to register
        log.error("modelloader %r cannot run: %s", args.name, exc)
        return 1
    return 0
