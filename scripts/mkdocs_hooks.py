"""MkDocs hooks of the documentation site (mkdocs.yml): pages made from files outside docs/, and
the package layout the API reference reads.

The API reference (mkdocstrings) reads the sources without importing them, and finds modules by
their folders; but hrpsim's folders install under one namespace (pyproject.toml's package-dir maps
``controllers/`` to ``hrpsim.controllers``). So the build first lays the package out as an install
would, as symlinks under build/api-layout/PID/ (``hrpsim/controllers`` -> ``controllers/``), one
folder per build so that builds at the same time do not pull it from under each other, and the
reference reads it there.

The site's home is README.md, its changelog CHANGELOG.md and its benchmarks page bench/RESULTS.md,
each read where it lives (so there is one copy of each) and added as a generated page. Their links
are written for the repository (README's ``docs/physics.md``, a docs page's ``../bench/RESULTS.md``):
every relative link of every page is resolved in the repository and pointed at the site page made
from its target. A link to any other file outside docs/ is left as it is, and MkDocs' strict build
fails on it.
"""

from __future__ import annotations

import os
import posixpath
import re
import shutil
import tomllib
from pathlib import Path
from typing import Any

from mkdocs.plugins import event_priority
from mkdocs.structure.files import File, Files
from mkdocs.structure.pages import Page

REPO = Path(__file__).resolve().parents[1]
DOCS = "docs"
API_LAYOUTS = REPO / "build" / "api-layout"  # a build's own folder in here becomes mkdocstrings' path

# repository file -> the site page made from it
GENERATED = {"README.md": "index.md", "CHANGELOG.md": "changelog.md", "bench/RESULTS.md": "benchmarks.md"}
SOURCE_OF = {page: source for source, page in GENERATED.items()}

# [text](target) and ![alt](target); the target up to whitespace or the closing parenthesis
_LINK = re.compile(r"(!?\[[^\]]*\]\()([^)\s]+)")
_CODE = re.compile(r"(^```.*?^```|`[^`\n]+`)", re.M | re.S)  # fenced blocks and code spans: not links


@event_priority(100)  # before mkdocstrings reads its paths, which it keeps only if they exist
def on_config(config: Any) -> Any:
    layout = API_LAYOUTS / str(os.getpid())
    lay_out_package(layout)
    config.plugins["mkdocstrings"].config.handlers["python"]["paths"] = [str(layout)]
    return config


def on_shutdown() -> None:
    shutil.rmtree(API_LAYOUTS / str(os.getpid()), ignore_errors=True)


def lay_out_package(root: Path) -> None:
    """The installed package's folders under ``root``, as symlinks to the repository's."""
    shutil.rmtree(root, ignore_errors=True)
    folders = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]
    for package, folder in sorted(folders.items()):  # "hrpsim" first: the others go inside it
        target = root.joinpath(*package.split("."))
        if package == "hrpsim":
            target.mkdir(parents=True)
            for entry in (REPO / folder).iterdir():
                (target / entry.name).symlink_to(entry)
        else:
            target.symlink_to(REPO / folder, target_is_directory=True)


def on_files(files: Files, config: Any) -> Files:
    for source, page in GENERATED.items():
        files.append(File.generated(config, page, abs_src_path=str(REPO / source)))
    return files


def on_page_markdown(markdown: str, page: Page, config: Any, files: Files) -> str:
    source = SOURCE_OF.get(page.file.src_uri, f"{DOCS}/{page.file.src_uri}")
    pieces = _CODE.split(markdown)  # odd pieces are code
    return "".join(piece if k % 2 else _relinked(piece, source, page.file.src_uri) for k, piece in enumerate(pieces))


def _relinked(text: str, source: str, page: str) -> str:
    return _LINK.sub(lambda match: match.group(1) + site_target(match.group(2), source, page), text)


def site_target(target: str, source: str, page: str) -> str:
    """``target``, a link in the repository file ``source``, as a link from the site page ``page``."""
    if "://" in target or target.startswith(("#", "/", "mailto:")):
        return target
    path, hash_, anchor = target.partition("#")
    in_repo = posixpath.normpath(posixpath.join(posixpath.dirname(source), path))
    if in_repo in GENERATED:
        on_site = GENERATED[in_repo]
    elif in_repo.startswith(f"{DOCS}/"):
        on_site = in_repo[len(DOCS) + 1 :]
    else:
        return target  # outside docs/ and no page of its own: the strict build reports it
    return posixpath.relpath(on_site, posixpath.dirname(page) or ".") + hash_ + anchor
