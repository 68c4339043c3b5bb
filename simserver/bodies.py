"""Getting the project's bodies: from the modelloader service (found through the nameserver),
or in-process when the project says ``services: {loader: local}``."""

from __future__ import annotations

from hrpsim.bodyinfo import Body
from hrpsim.errors import HrpsimError, ModelError
from hrpsim.models import fetch_body
from hrpsim.project import ModelConfig, Project


def load_bodies(project: Project, nameserver: str | None) -> dict[str, Body]:
    """Every model's Body, named by the project's model name. Collects all failures into one error."""
    local = project.services.get("loader") == "local"
    bodies: dict[str, Body] = {}
    problems: list[str] = []
    for mc in project.models:
        try:
            body = _load_local(mc) if local else _fetch(mc, nameserver)
        except HrpsimError as exc:
            problems.append(f"model {mc.name!r} ({mc.file}): {exc}")
            continue
        if mc.static:
            body.static = True
        bodies[mc.name] = body
    if problems:
        raise ModelError(f"{project.path}: {len(problems)} model(s) could not be loaded", problems)
    return bodies


def _fetch(mc: ModelConfig, nameserver: str | None) -> Body:
    return fetch_body(mc.file, nameserver=nameserver, options=mc.options or None)


def _load_local(mc: ModelConfig) -> Body:
    from hrpsim.modelloader import load_body

    return load_body(mc.file, lenient=bool((mc.options or {}).get("lenient", False)))
