"""The layout's promises, checked on the source and on the installed package: ODE lives behind the
engine boundary, one tick loop drives every engine, and an install adds only the hrpsim namespace."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

from process_helpers import REPO

PACKAGES = ["hrpsim", "nameserver", "modelloader", "simserver", "collision", "controllers", "engines", "hil"]


def _sources() -> list[Path]:
    return sorted(p for folder in PACKAGES for p in (REPO / folder).rglob("*.py"))


def _imports(tree: ast.AST) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


def test_only_the_ode_engine_package_imports_ode_or_loads_libode():
    offenders = []
    for path in _sources():
        relative = path.relative_to(REPO)
        if relative.parts[:2] == ("engines", "ode"):
            continue
        text = path.read_text()
        imports = _imports(ast.parse(text))
        if "ode" in imports or "ctypes" in imports or "libode" in text:
            offenders.append(str(relative))
    assert offenders == []


def test_only_the_tick_loop_advances_an_engine():
    callers = []
    for path in _sources():
        relative = path.relative_to(REPO)
        if relative.parts[0] == "engines":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "integrate":
                callers.append(str(relative))
    assert sorted(set(callers)) == ["simserver/loop.py"]


def test_the_install_adds_only_the_hrpsim_namespace(tmp_path):
    probe = (
        "import importlib.util as u; "
        "print([n for n in ('controllers', 'collision', 'simserver', 'modelloader', 'nameserver', 'engines', "
        "'hil') if u.find_spec(n) is not None]); "
        "from hrpsim.controllers import Controller; from hrpsim.engines.base import Engine; print('ok')"
    )
    result = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["[]", "ok"]


def test_engines_stand_on_the_kernel_and_the_simulator_on_the_boundary():
    """engines/ imports no simulator code; simserver/ knows engines only through engines/base.py."""
    wrong = []
    for path in _sources():
        relative = path.relative_to(REPO)
        imports = _imports(ast.parse(path.read_text()))
        if relative.parts[0] == "engines" and any(i.startswith("hrpsim.simserver") for i in imports):
            wrong.append(str(relative))
        if relative.parts[0] == "simserver" and any(
            i.startswith("hrpsim.engines.") and i != "hrpsim.engines.base" for i in imports
        ):
            wrong.append(str(relative))
    assert wrong == []
