"""The joint names a project gives (``models[i].joints`` initial values, ``models[i].drive`` modes)
checked against each model file before anything starts, so that ``hrpsim launch`` says once
which names are wrong and which the model has, instead of the simulator failing at startup."""

from __future__ import annotations

from hrpsim.bodyinfo import Body
from hrpsim.errors import ConfigError, HrpsimError
from hrpsim.project import ModelConfig, Project


def check_joint_names(project: Project) -> None:
    """ConfigError listing every unknown name, per model, with the model's joints. A model that
    cannot be read here is left to the model loader, which reports why."""
    problems: list[str] = []
    for i, model in enumerate(project.models):
        if not model.joints and not isinstance(model.drive, dict):
            continue
        body = _body(model)
        if body is not None:
            problems += _model_problems(f"models[{i}]", model, body)
    if problems:
        raise ConfigError("\n  ".join([f"{project.path}: {len(problems)} problem(s) in the project file:", *problems]))


def _body(model: ModelConfig) -> Body | None:
    from hrpsim.modelloader import load_body

    try:
        return load_body(model.file, lenient=bool(model.options.get("lenient", False)))
    except HrpsimError:
        return None


def _model_problems(key: str, model: ModelConfig, body: Body) -> list[str]:
    numbered = body.joint_names
    moving = [lk.joint_label for lk in body.links if lk.joint_type in ("rotate", "slide")]
    known = {lk.joint_label for lk in body.links} | {lk.name for lk in body.links}
    listing = f"(joints of {model.name!r}: {', '.join(moving) or 'none'})"
    problems = [
        f"{key}.joints.{name}: model {model.name!r} has no joint {name!r} {listing}"
        for name in model.joints
        if name not in known
    ]
    drive = model.drive if isinstance(model.drive, dict) else {}
    for name in drive:
        if name in numbered:
            continue
        if name in known:
            problems.append(
                f"{key}.drive.{name}: joint {name!r} has no jointId, so no controller commands it and it "
                "takes no drive mode (it moves freely); remove it from drive"
            )
        else:
            problems.append(f"{key}.drive.{name}: model {model.name!r} has no joint {name!r} {listing}")
    return problems
