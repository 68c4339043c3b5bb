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
the service goes on serving. Models are read in worker processes (load_workers.py), each load
within a deadline (``--load-timeout``) and a memory bound (``--load-memory``), so that the service
answers every other request (``ping`` among them) while a load runs, and outlives any model file.
"""

from __future__ import annotations

import argparse
import logging
import os
import time
from functools import partial
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from hrpsim.cli_options import add_service_options
from hrpsim.errors import HrpsimError, RequestError
from hrpsim.files import ReadPolicy, add_root_option, allowed_path, model_roots, reading_under
from hrpsim.logs import setup_logging
from hrpsim.modelloader import formats_help
from hrpsim.modelloader.cache import BodyCache, CacheKey
from hrpsim.modelloader.load_workers import (
    DEFAULT_LIMITS,
    DEFAULT_MEMORY_MB,
    DEFAULT_TIMEOUT_S,
    DEFAULT_WORKERS,
    LoadLimits,
    LoadWorkers,
    reply_error,
)
from hrpsim.rpc import Operation, Pending, Service

log = logging.getLogger("hrpsim.modelloader")

OPTIONS: dict[str, type] = {"lenient": bool, "world": bool}  # world: an MJCF file's environment


class ModelLoaderService(Service):
    kind = "modelloader"

    def __init__(
        self,
        name: str = "modelloader",
        *,
        cache_size: int = 64,
        roots: tuple[Path, ...] = (),
        workers: int = DEFAULT_WORKERS,
        limits: LoadLimits = DEFAULT_LIMITS,
        **kwargs: Any,
    ) -> None:
        self.cache = BodyCache(cache_size)
        self.policy = ReadPolicy(roots=roots or (Path.cwd().resolve(),))
        self.workers = LoadWorkers(workers, limits)
        super().__init__(name, **kwargs)

    def operations(self) -> dict[str, Operation]:
        return {"load": self.load, "clear": self.clear, "stats": self.stats}

    def roles(self) -> dict[str, str]:  # clear needs admin (the default)
        return {"load": "observer", "stats": "observer"}

    @property
    def idle_interval(self) -> float:  # a finished load is answered within this
        return 0.002 if self.workers.busy else 0.1

    def start(self) -> None:
        self.workers.start()
        super().start()

    def on_idle(self) -> None:
        self.workers.poll()

    def close(self) -> None:
        self.workers.close()
        super().close()

    def load(self, path: Any, options: Any = None) -> dict[str, Any] | Pending:
        local = local_path(path)
        opts = checked_options(options)
        with reading_under(self.policy):
            # the folders first: a path outside them learns nothing of its format, existence or link target
            allowed_path(local, "model file", shown=path)
        key: CacheKey = (local, tuple(sorted(opts.items())))
        wire = self.cache.get(key)
        if wire is not None:
            return wire
        answer = Pending()
        request = {"path": local, "options": opts, "roots": [str(root) for root in self.policy.roots or ()]}
        self.workers.submit(request, partial(self._loaded, key, answer, time.perf_counter()))
        return answer

    def _loaded(self, key: CacheKey, answer: Pending, started: float, reply: dict[str, Any]) -> None:
        error = reply_error(reply)
        if error is not None:
            answer.fail(error)
            return
        self.cache.put(key, reply["wire"], reply["digests"])
        elapsed_ms = (time.perf_counter() - started) * 1000
        log.info("loaded %s (%s, %d links) in %.0f ms", key[0], reply["name"], reply["links"], elapsed_ms)
        answer.resolve(reply["wire"])

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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="hrpsim run modelloader", description=f"Serve model files ({formats_help()}) as BodyInfo."
    )
    add_service_options(parser, name="modelloader")
    add_root_option(parser)
    parser.add_argument("--cache-size", type=int, default=64, help="bodies kept in the cache (default 64)")
    parser.add_argument(
        "--load-workers", type=int, default=DEFAULT_WORKERS, help=f"loads read at once (default {DEFAULT_WORKERS})"
    )
    parser.add_argument(
        "--load-timeout",
        type=float,
        default=DEFAULT_TIMEOUT_S,
        metavar="S",
        help=f"seconds one load may take (default {DEFAULT_TIMEOUT_S:g})",
    )
    parser.add_argument(
        "--load-memory",
        type=int,
        default=DEFAULT_MEMORY_MB,
        metavar="MB",
        help=f"memory one load may take beyond the reading process's own (default {DEFAULT_MEMORY_MB})",
    )
    args = parser.parse_args(argv)
    if args.load_workers < 1 or not args.load_timeout > 0 or args.load_memory < 64:
        parser.error("--load-workers must be at least 1, --load-timeout above 0, --load-memory at least 64")
    setup_logging("modelloader")
    try:
        service = ModelLoaderService(
            args.name,
            bind=args.bind,
            nameserver=args.nameserver,
            cache_size=args.cache_size,
            roots=model_roots(args.model_root),
            workers=args.load_workers,
            limits=LoadLimits(timeout=args.load_timeout, memory_mb=args.load_memory),
        )
        print(f"modelloader {args.name!r} bound to {service.endpoint}", flush=True)
        service.serve_forever()
    except HrpsimError as exc:  # cannot bind, or the nameserver cannot be reached to register
        log.error("modelloader %r cannot run: %s", args.name, exc)
        return 1
    return 0
