"""Getting the project's bodies: from the modelloader service (found through the nameserver),
or in-process when the project says ``services: {loader: local}``."""

from __future__ import annotations

import copy
import logging
import os
import time
from pathlib import Path

from hrpsim.bodyinfo import Body
from hrpsim.errors import HrpsimError, ModelError, NotFound, PeerGone, Problem, Timeout
from hrpsim.models import fetch_body
from hrpsim.project import ModelConfig, Project

log = logging.getLogger("hrpsim.simserver")

# At the simulator's start, how long a modelloader (or nameserver) that is not reachable is waited
# for: one that died during startup is restarted by the launcher and registers again within this.
STARTUP_PATIENCE_S = 30.0
RETRY_PAUSE_S = 0.05


def load_bodies(
    project: Project,
    nameserver: str | None,
    *,
    local: bool | None = None,
    patience: float = 0.0,
    cache: BodyCache | None = None,
) -> dict[str, Body]:
    """Every model's Body, named by the project's model name. Collects all failures into one error.
    ``local``: load in this process (default: as the project's ``services: {loader: local}`` says).
    ``patience``: seconds to keep asking again while no modelloader is reachable (0: fail at once).
    ``cache``: where a local load keeps what it read, for the next project of this process."""
    if local is None:
        local = project.services.get("loader") == "local"
    read_local = cache.load if cache is not None else _load_local
    bodies: dict[str, Body] = {}
    problems: list[Problem] = []
    failed: list[str] = []
    for mc in project.models:
        try:
            body = read_local(mc) if local else _fetch_patiently(mc, nameserver, patience)
        except (NotFound, PeerGone, Timeout) as exc:  # no modelloader: the other models would wait as long
            raise ModelError(f"{project.path}: cannot load model {mc.name!r}: {exc}", problems) from None
        except HrpsimError as exc:
            failed.append(mc.name)
            problems.extend(_model_problems(mc, exc))
            continue
        if mc.static:
            body.static = True
        try:
            rescale_masses(body, mc)
        except ModelError as exc:
            failed.append(mc.name)
            problems.extend(_model_problems(mc, exc))
            continue
        bodies[mc.name] = body
    if failed:
        raise ModelError(f"{project.path}: {len(failed)} model(s) could not be loaded: {', '.join(failed)}", problems)
    return bodies


MODELLOADER_WAIT_S = 5.0  # a restarted modelloader registers again within this


def _model_problems(mc: ModelConfig, exc: HrpsimError) -> list[Problem]:
    """Each problem of one model's failure, prefixed with the model's name, keeping its place in
    the file (a loader's ModelError lists them; any other error is one problem)."""
    found = exc.problems if isinstance(exc, ModelError) else [Problem(f"{mc.file}: {exc}")]
    return [Problem(f"model {mc.name!r}: {p}", file=p.file or mc.file, line=p.line, column=p.column) for p in found]


def _fetch_patiently(mc: ModelConfig, nameserver: str | None, patience: float) -> Body:
    """:func:`_fetch`, asking again while no modelloader is reachable, up to ``patience`` seconds
    (saying so once). A modelloader that did not answer at its registered address has died (or
    stalls): the next ask waits for one registered anew (its restart) instead of trying that address
    again at once, and tries it again only if none has come within MODELLOADER_WAIT_S."""
    deadline = time.monotonic() + patience
    dead = ""
    while True:
        try:
            return _fetch(mc, nameserver, dead)
        except (NotFound, PeerGone, Timeout) as exc:
            if time.monotonic() >= deadline:
                raise
            dead = getattr(exc, "endpoint", "")
            if patience:
                log.warning("cannot load model %r yet (%s); asking again for up to %g s", mc.name, exc, patience)
                patience = 0.0  # said once
            if not isinstance(exc, NotFound):  # a timeout or a refusal: a breath before asking again
                time.sleep(RETRY_PAUSE_S)


def _fetch(mc: ModelConfig, nameserver: str | None, dead: str = "") -> Body:
    return fetch_body(mc.file, nameserver=nameserver, options=mc.options or None, wait=MODELLOADER_WAIT_S, exclude=dead)


def _load_local(mc: ModelConfig) -> Body:
    from hrpsim.modelloader import load_body

    options = mc.options or {}
    return load_body(mc.file, lenient=bool(options.get("lenient", False)), world=bool(options.get("world", False)))


class BodyCache:
    """Bodies read in this process, for the next project that names the same file with the same
    options: a process that runs many runs of one study reads each model once. Each load gets a copy
    of its own (a project scales masses in place), and a file that changed since it was read (in
    size or modification time; the model's file or any file it includes) is read again."""

    def __init__(self) -> None:
        self._held: dict[tuple[str, str], tuple[list[tuple[str, int, int]], Body]] = {}

    def load(self, mc: ModelConfig) -> Body:
        key = (os.path.abspath(mc.file), repr(sorted((mc.options or {}).items())))
        held = self._held.get(key)
        if held is not None and held[0] == _stamps(held[0]):
            return copy.deepcopy(held[1])
        body = _load_local(mc)
        files = [key[0], *(str(f) for f in body.metadata.get("files") or [])]
        self._held[key] = (_stamps_of(files), copy.deepcopy(body))
        return body


def _stamps_of(files: list[str]) -> list[tuple[str, int, int]]:
    """(path, size, modification time in ns) of each file; -1s for one that is gone."""
    stamps = []
    for name in dict.fromkeys(files):
        try:
            info = Path(name).stat()
            stamps.append((name, info.st_size, info.st_mtime_ns))
        except OSError:
            stamps.append((name, -1, -1))
    return stamps


def _stamps(kept: list[tuple[str, int, int]]) -> list[tuple[str, int, int]]:
    return _stamps_of([name for name, _, _ in kept])


def rescale_masses(body: Body, mc: ModelConfig) -> None:
    """The project's ``mass_scale`` and ``masses`` on a loaded body: each changed link's inertia scales
    with its mass (the same shape, denser or lighter). ModelError for a link the body lacks."""
    links = {link.name: link for link in body.links}
    unknown = sorted(set(mc.masses) - set(links))
    if unknown:
        raise ModelError(
            f"models[{mc.name}].masses names unknown link(s) {', '.join(unknown)} (links: {', '.join(links)})"
        )
    for link in body.links:
        factor = mc.mass_scale
        if link.name in mc.masses and link.mass > 0:
            factor = mc.masses[link.name] / link.mass
        elif link.name in mc.masses:  # a massless link given a mass: no inertia to scale
            link.mass = mc.masses[link.name]
            continue
        if factor != 1.0:
            link.mass *= factor
            link.inertia = link.inertia * factor
