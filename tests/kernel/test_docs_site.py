"""The documentation site builds from docs/ as ``make docs`` builds it (MkDocs, strict: a warning
fails it), with the pages made from README.md, CHANGELOG.md and bench/RESULTS.md, the getting-started
pages and an API reference read from the docstrings; and a broken link does fail it."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from process_helpers import REPO

MKDOCS = [sys.executable, "-m", "mkdocs", "build", "--strict"]


def build(config: Path, site: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*MKDOCS, "--config-file", str(config), "--site-dir", str(site)],
        cwd=REPO,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},  # Material's notice about a future MkDocs
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    done = build(REPO / "mkdocs.yml", out)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "WARNING -" not in done.stderr, done.stderr
    return out


def text_of(page: Path) -> str:
    """A built page's words, without its markup."""
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page.read_text()))


def test_every_page_of_docs_is_on_the_site_and_in_its_navigation(site: Path) -> None:
    nav = yaml.safe_load((REPO / "mkdocs.yml").read_text())["nav"]
    listed = set(re.findall(r"[\w/-]+\.md", str(nav)))
    for page in (REPO / "docs").rglob("*.md"):
        relative = page.relative_to(REPO / "docs").as_posix()
        assert relative in listed, f"docs/{relative} is not in mkdocs.yml's nav"
        assert (site / relative.replace(".md", ".html")).exists(), relative


def test_the_home_changelog_and_benchmarks_pages_are_the_repositorys_files(site: Path) -> None:
    home = text_of(site / "index.html")
    assert "The two commands" in home and "A tour" in home
    assert 'href="getting-started/mujoco.html"' in (site / "index.html").read_text()  # README's docs/ links
    assert "## " not in text_of(site / "changelog.html")
    assert re.search(r"\b0\.\d+\.\d+\b", text_of(site / "changelog.html"))
    assert "Benchmark results" in text_of(site / "benchmarks.html")


def test_the_api_reference_covers_the_python_api_the_sdk_and_the_toolkit(site: Path) -> None:
    simulation = text_of(site / "reference" / "simulation.html")
    assert all(call in simulation for call in ("hrpsim.simulation.Simulation", "step", "command", "reset"))
    sdk = text_of(site / "reference" / "controllers.html")
    assert all(name in sdk for name in ("hrpsim.controllers.Controller", "control", "run_main", "State"))
    toolkit = text_of(site / "reference" / "toolkit.html")
    assert all(name in toolkit for name in ("RobotModel", "jacobian", "solve_ik", "sensor_zmp"))
    assert "Centre of mass of the whole robot" in toolkit  # a docstring, read from the source


def test_the_site_has_a_search_index(site: Path) -> None:
    index = (site / "search" / "search_index.json").read_text()
    assert "getting-started/mujoco.html" in index and "mj_multiRay" in index


def test_a_broken_link_fails_the_build(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    subprocess.run(["cp", "-r", str(REPO / "docs"), str(docs)], check=True)
    page = docs / "getting-started" / "mujoco.md"
    page.write_text(page.read_text() + "\nSee [the missing page](no-such-page.md).\n")
    config = yaml.safe_load((REPO / "mkdocs.yml").read_text())
    config.update(docs_dir=str(docs), hooks=[str(REPO / "scripts" / "mkdocs_hooks.py")])
    del config["watch"]
    (tmp_path / "mkdocs.yml").write_text(yaml.safe_dump(config))
    done = build(tmp_path / "mkdocs.yml", tmp_path / "site")
    assert done.returncode != 0
    assert "no-such-page.md" in done.stderr
