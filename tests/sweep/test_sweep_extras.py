"""The installs docs/sweeps.md gives bring everything the sweep code imports: each names extras hrpsim
declares (pyproject.toml, what the wheel's metadata comes from) whose requirements make install's
environment satisfies, and every third-party module ``hrpsim.sweep`` imports comes with hrpsim's own
requirements or an extra the page tells the reader to install."""

from __future__ import annotations

import ast
import re
import shlex
import sys
import tomllib
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from process_helpers import REPO

SWEEPS_PAGE = REPO / "docs" / "sweeps.md"
INSTALL = re.compile(r"`(pip install [^`]+)`")


def _documented_installs() -> list[str]:
    return INSTALL.findall(SWEEPS_PAGE.read_text().replace("\n", " "))


def _extras_of(command: str) -> set[str]:
    """The extras of hrpsim a ``pip install 'hrpsim[a,b]'`` or ``pip install -e '.[a,b]'`` command names."""
    target = shlex.split(command)[-1]
    name, bracket, extras = target.partition("[")
    assert name in ("hrpsim", ".") and bracket and extras.endswith("]"), f"{command!r} installs something else"
    return set(extras[:-1].split(","))


def _distributions(requirements: list[Requirement], extras: set[str] = frozenset()) -> set[str]:
    """The distributions these requirements bring, their own requirements included."""
    found: set[str] = set()
    waiting = [(r, extras) for r in requirements]
    while waiting:
        requirement, chosen = waiting.pop()
        environment = [{"extra": e} for e in chosen or {""}]
        if requirement.marker is not None and not any(requirement.marker.evaluate(env) for env in environment):
            continue
        name = requirement.name.lower().replace("_", "-")
        if name in found:
            continue
        found.add(name)
        try:
            waiting += [(Requirement(r), set(requirement.extras)) for r in metadata.requires(name) or []]
        except metadata.PackageNotFoundError:
            pass  # an optional part not installed here: what it brings cannot be followed
    return found


def _third_party_imports(folder: Path) -> set[str]:
    """The top-level modules the code in ``folder`` imports that are neither the standard library's nor hrpsim's."""
    names = set()
    for path in folder.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names |= {alias.name.partition(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names.add(node.module.partition(".")[0])
    return {n for n in names if n not in sys.stdlib_module_names and n not in ("hrpsim", "__future__")}


def test_what_the_sweep_code_imports_comes_with_the_extras_the_page_names() -> None:
    declared = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    extras = set().union(*(_extras_of(command) for command in _documented_installs()))
    assert extras >= {"ray", "sweep", "plot"}, "docs/sweeps.md says how to install Ray, pyarrow and matplotlib"
    assert extras <= set(declared), extras - set(declared)
    hrpsim_requirements = [Requirement(r) for r in metadata.requires("hrpsim")]
    provided = _distributions(hrpsim_requirements, extras)
    by_module = metadata.packages_distributions()
    for module in sorted(_third_party_imports(REPO / "sweep")):
        owners = {d.lower().replace("_", "-") for d in by_module.get(module, [])}
        assert owners, f"{module!r} is imported by hrpsim.sweep but installed by nothing here"
        assert owners & provided, f"{module!r} ({', '.join(owners)}) is not in hrpsim's requirements or {extras}"


@pytest.mark.parametrize("command", _documented_installs())
def test_a_documented_install_is_what_make_install_gives(command: str) -> None:
    """Every requirement of the extras a documented command names is installed here (make install's
    environment) at a version it accepts, its own extras' requirements included."""
    declared = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    waiting = [(Requirement(r), "") for extra in _extras_of(command) for r in declared[extra]]
    seen = set()
    while waiting:
        requirement, extra = waiting.pop()
        if requirement.marker is not None and not requirement.marker.evaluate({"extra": extra}):
            continue
        if requirement.name == "hrpsim":  # an extra made of others (dev)
            waiting += [(Requirement(r), "") for e in requirement.extras for r in declared[e]]
            continue
        if (requirement.name, extra) in seen:
            continue
        seen.add((requirement.name, extra))
        installed = metadata.version(requirement.name)
        assert requirement.specifier.contains(installed, prereleases=True), f"{requirement} but {installed} here"
        for own in requirement.extras:
            waiting += [(Requirement(r), own) for r in metadata.requires(requirement.name) or []]
