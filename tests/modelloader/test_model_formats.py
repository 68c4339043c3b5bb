"""The model formats are declared once (hrpsim.modelloader.MODEL_FORMATS): the help of every command
that reads model files, the error for an unknown suffix and docs/models.md's table of formats come
from it or agree with it."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from modelloader_helpers import HRPSIM, REPO

from hrpsim.errors import ModelError
from hrpsim.modelloader import FORMATS, MODEL_FORMATS, formats_help, load_body


def _flat(text: str) -> str:
    return " ".join(text.split())  # argparse wraps a description at the terminal's width


@pytest.mark.parametrize("command", [["model", "info"], ["model", "convert"], ["run", "modelloader"]])
def test_every_help_lists_the_declared_formats(command: list[str]) -> None:
    done = subprocess.run([*HRPSIM, *command, "--help"], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert f"({formats_help()})" in _flat(done.stdout)
    for model_format in MODEL_FORMATS:
        assert model_format.name in formats_help() and all(s in formats_help() for s in model_format.suffixes)


def test_an_unknown_suffix_is_an_error_listing_every_format(tmp_path: Path) -> None:
    path = tmp_path / "robot.obj"
    path.write_text("o robot\n")
    with pytest.raises(ModelError) as caught:
        load_body(path)
    assert str(caught.value) == f"{path}: unknown model format '.obj'; known: {formats_help()}"


def test_every_suffix_has_its_reader() -> None:
    assert sorted(FORMATS) == sorted(s for f in MODEL_FORMATS for s in f.suffixes)
    for suffix, (module, function, lenient) in FORMATS.items():
        (model_format,) = [f for f in MODEL_FORMATS if suffix in f.suffixes]
        assert f"{module}:{function}" == model_format.reader and lenient == model_format.lenient


def test_the_docs_table_of_formats_is_the_declared_one() -> None:
    text = (REPO / "docs" / "models.md").read_text()
    table = text[text.index("| suffix | format |") :].split("\n\n")[0].splitlines()[2:]
    rows = [[cell.strip() for cell in row.strip("|").split("|")] for row in table]
    assert len(rows) == len(MODEL_FORMATS)
    for (suffixes, name, _, reader), model_format in zip(rows, MODEL_FORMATS, strict=True):
        assert re.findall(r"`([^`]+)`", suffixes) == list(model_format.suffixes)
        assert name.startswith(model_format.name)
        assert f"`{model_format.module.removeprefix('hrpsim.')}`" in reader


def test_the_readme_names_every_format_with_its_suffixes() -> None:
    text = (REPO / "README.md").read_text()
    paragraph = _flat(text[text.index("formats load to the same BodyInfo") :].split("\n\n")[0])
    for model_format in MODEL_FORMATS:
        suffixes = "/".join(f"`{s}`" for s in model_format.suffixes)
        assert f"{model_format.name} {suffixes}" in paragraph
