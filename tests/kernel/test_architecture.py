"""The layout's promises, checked on the source and on the installed package: ODE lives behind the
engine boundary, one tick loop drives every engine, no package imports another that imports it
back, and an install adds only the hrpsim namespace."""

from __future__ import annotations

import ast
import itertools
import subprocess
import sys
from pathlib import Path

from process_helpers import REPO

PACKAGES = [
    "hrpsim",
    "nameserver",
    "modelloader",
    "simserver",
    "collision",
    "controllers",
    "toolkit",
    "engines",
    "hil",
    "recording",
    "viewer",
    "sweep",
    "gym",
]
# The Python API (``hrpsim.Simulation``) stands on every component, as the launcher does through
# processes: it is a front end above the kernel, not part of it.
FRONT_ENDS = {"hrpsim/__init__.py": "hrpsim.Simulation", "hrpsim/simulation.py": "hrpsim.Simulation"}


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


def _runtime_imports(tree: ast.AST) -> set[str]:
    """Modules imported when the code runs (``if TYPE_CHECKING:`` blocks left out: a type named in
    an annotation loads nothing); ``from hrpsim import tick_protocol`` counts as ``hrpsim.tick_protocol``."""
    names: set[str] = set()
    skipped = {
        id(inner)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
        for inner in ast.walk(node)
    }
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.update(
                f"{node.module}.{alias.name}" if node.module == "hrpsim" else node.module for alias in node.names
            )
    return names


def _package_of(relative: Path) -> str:
    return FRONT_ENDS.get(relative.as_posix(), relative.parts[0])


def _imported_package(module: str) -> str | None:
    """The package (or front end) an ``hrpsim...`` module belongs to; None for other libraries."""
    parts = module.split(".")
    if parts[0] != "hrpsim":
        return None
    if len(parts) > 1 and parts[1] in PACKAGES:
        return parts[1]
    path = "/".join(parts) + ".py"
    return FRONT_ENDS.get(path, "hrpsim")


def package_graph() -> dict[str, dict[str, set[str]]]:
    """package -> package it imports -> the files that import it."""
    graph: dict[str, dict[str, set[str]]] = {}
    for path in _sources():
        relative = path.relative_to(REPO)
        source = _package_of(relative)
        edges = graph.setdefault(source, {})
        for module in _runtime_imports(ast.parse(path.read_text())):
            target = _imported_package(module)
            if target is not None and target != source:
                edges.setdefault(target, set()).add(relative.as_posix())
    return graph


def _cycles(graph: dict[str, dict[str, set[str]]]) -> list[list[str]]:
    """Every package that can reach itself, with one path back to it."""
    found = []
    for start in sorted(graph):
        paths = [[start]]
        seen = {start}
        while paths:
            path = paths.pop()
            for nxt in sorted(graph.get(path[-1], {})):
                if nxt == start:
                    found.append([*path, start])
                    paths = []
                    break
                if nxt not in seen:
                    seen.add(nxt)
                    paths.append([*path, nxt])
    return found


def test_every_package_folder_is_checked():
    folders = {p.parent.name for p in REPO.glob("*/__init__.py") if p.parent.name not in ("tests", "bench")}
    assert folders == set(PACKAGES)


def test_no_package_imports_one_that_imports_it_back():
    graph = package_graph()
    described = [
        " -> ".join(f"{a} ({', '.join(sorted(graph[a][b]))})" for a, b in itertools.pairwise(cycle))
        + f" -> {cycle[-1]}"
        for cycle in _cycles(graph)
    ]
    assert described == []


def test_the_cycle_check_finds_a_cycle():
    graph = {"a": {"b": {"a/x.py"}}, "b": {"c": {"b/y.py"}}, "c": {"a": {"c/z.py"}}, "d": {"a": {"d/w.py"}}}
    assert _cycles(graph) == [["a", "b", "c", "a"], ["b", "c", "a", "b"], ["c", "a", "b", "c"]]


def test_only_the_ode_engine_package_imports_ode_or_loads_libode():
    offenders = []
    for path in _sources():
        relative = path.relative_to(REPO)
        if relative.parts[:2] == ("engines", "ode"):
            continue
        text = path.read_text()
        tree = ast.parse(text)
        imports = _imports(tree)
        if "ode" in imports or "libode" in text or ("ctypes" in imports and _loads_a_library(tree)):
            offenders.append(str(relative))
    assert offenders == []


def _loads_a_library(tree: ast.AST) -> bool:
    """Whether the code loads a shared library through ctypes (``CDLL("...")``, ``LoadLibrary``,
    ``find_library``), as opposed to calling into the process's own C library (``CDLL(None)``)."""
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        own = node.args and isinstance(node.args[0], ast.Constant) and node.args[0].value is None
        if name in ("LoadLibrary", "find_library") or (name in ("CDLL", "PyDLL") and not own):
            return True
    return False


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


# The World is the one assembler of the simulator core: anything else builds on it.
CORE_PARTS = ("ControllerHub", "TickLoop")


def _builds_core_parts(source: str) -> list[str]:
    """The core parts a source constructs (a call of the class by name or as an attribute)."""
    built = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            name = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", None)
            if name in CORE_PARTS:
                built.append(name)
    return built


def test_only_the_world_builds_the_hub_and_the_loop():
    """Product code, benchmarks and tests alike stand on World (simserver/world.py)."""
    files = [*_sources(), *sorted((REPO / "bench").rglob("*.py")), *sorted((REPO / "tests").rglob("*.py"))]
    builders = []
    for path in files:
        relative = path.relative_to(REPO)
        if relative.as_posix() == "simserver/world.py":
            continue
        builders += [f"{relative}: {name}" for name in _builds_core_parts(path.read_text())]
    assert builders == []


def test_the_core_check_finds_a_hub_or_a_loop_built_by_hand():
    source = "hub = ControllerHub(engine, project, run)\nloop = loops.TickLoop(engine, hub, run)\nWorld(project)\n"
    assert _builds_core_parts(source) == ["ControllerHub", "TickLoop"]


def test_the_install_adds_only_the_hrpsim_namespace(tmp_path):
    probe = (
        "import importlib.util as u; "
        f"print([n for n in {tuple(PACKAGES[1:])!r} if u.find_spec(n) is not None]); "
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
