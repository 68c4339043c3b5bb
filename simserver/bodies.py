"""Getting the project's bodies: from the modelloader service (found through the nameserver),
or in-process when the project says ``services: {loader: local}``."""

from __future__ import annotations

import importlib
from typing import Any

from hrpsim.bodyinfo import Body
from hrpsim.errors import ConfigError, HrpsimError, ModelError, Problem
from hrpsim.project import ModelConfig, Project

LOADER_TIMEOUT = 60.0  # s: a large mesh model takes a while to parse the first time


def load_bodies(project: Project, nameserver: str | None) -> dict[str, Body]:
    """Every model's Body, named by the project's model name. Collects all failures into one error."""
    local = project.services.get("loader") == "local"
    bodies: dict[str, Body] = {}
    problems: list[Problem] = []
    failed: list[str] = []
    for mc in project.models:
        try:
            body = _load_local(mc) if local else _fetch(mc, nameserver)
        except HrpsimError as exc:
            failed.append(mc.name)
            problems.extend(_model_problems(mc, exc))
            continue
        if mc.static:
            body.static = True
        bodies[mc.name] = body
    if failed:
        raise ModelError(f"{project.path}: {len(failed)} model(s) could not be loaded: {', '.join(failed)}", problems)
    return bodies


def _model_problems(mc: ModelConfig, exc: HrpsimError) -> list[Problem]:
    """Each problem of one model's failure, prefixed with the model's name, keeping its place in
    the file (a loader's ModelError lists them; any other error is one problem)."""
    found = exc.problems if isinstance(exc, ModelError) else [Problem(f"{mc.file}: {exc}")]
    return [Problem(f"model {mc.name!r}: {p}", file=p.file or mc.file, line=p.line, column=p.column) for p in found]


def _fetch(mc: ModelConfig, nameserver: str | None) -> Body:
    try:
        models = importlib.import_module("hrpsim.models")
    except ImportError:
        raise ConfigError("this installation has no modelloader client (hrpsim.models); "
                          "set 'services: {loader: local}' in the project to load models in-process") from None
    result: Any = models.fetch_body(mc.file, nameserver=nameserver, options=mc.options or None)
    return result if isinstance(result, Body) else Body.from_wire(result)


def _load_local(mc: ModelConfig) -> Body:
    from hrpsim.modelloader import load_body

    return load_body(mc.file, lenient=bool((mc.options or {}).get("lenient", False)))
