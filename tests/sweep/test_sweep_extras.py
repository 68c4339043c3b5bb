"""The installs docs/sweeps.md gives work as written, and bring everything the sweep code imports: each
command resolves from the checkout (pip's dry run, offline, against this environment), and every
third-party module ``hrpsim.sweep`` imports comes with hrpsim's own requirements or an extra the page
tells the reader to install."""

from __future__ import annotations

import ast
import re
import shlex
import subprocess
import sys
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
    """The extras of hrpsim a ``pip install -e '.[a,b]'`` command names."""
    target = shlex.split(command)[-1]
    assert target.startswith(".["), f"{command!r} installs something else than this checkout"
    return set(target[2:-1].split(","))


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
    hrpsim_requirements = [Requirement(r) for r in metadata.requires("hrpsim")]
    extras = set().union(*(_extras_of(command) for command in _documented_installs()))
    assert extras >= {"ray"}, "docs/sweeps.md says how to install Ray"
    assert extras <= set(metadata.metadata("hrpsim").get_all("Provides-Extra")), extras
    provided = _distributions(hrpsim_requirements, extras)
    by_module = metadata.packages_distributions()
    for module in sorted(_third_party_imports(REPO / "sweep")):
        owners = {d.lower().replace("_", "-") for d in by_module.get(module, [])}
        assert owners, f"{module!r} is imported by hrpsim.sweep but installed by nothing here"
        assert owners & provided, f"{module!r} ({', '.join(owners)}) is not in hrpsim's requirements or {extras}"


@pytest.mark.parametrize("command", _documented_installs())
def test_a_documented_install_resolves_from_the_checkout(command: str) -> None:
    pytest.importorskip("ray", reason="the ray extra: make install")
    args = shlex.split(command)[2:]  # after "pip install"
    done = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--dry-run", "--no-index", "--no-build-isolation", *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=REPO,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "Would install hrpsim" in done.stdout, f"{command!r} does not install this checkout:\n{done.stdout[-2000:]}"
    assert "does not provide the extra" not in done.stderr, done.stderr
