"""A process that runs many runs reads each model file once (simserver.bodies.BodyCache): each project
gets a body of its own (its masses scaled without touching the next project's), and a model file that
changed since it was read, or a file it includes, is read again."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from process_helpers import MODELS

from hrpsim.project import parse_project
from hrpsim.simserver.bodies import BodyCache, load_bodies

MODEL_DIR = MODELS / "openhrp3" / "model"


def _project(tmp_path: Path, file: Path, **model):
    data = {"models": [{"name": "robot", "file": str(file), **model}], "services": {"loader": "local"}}
    return parse_project(data, str(tmp_path / "p.yaml"))


def test_each_project_gets_its_own_copy_of_a_cached_body(tmp_path: Path) -> None:
    cache = BodyCache()
    sample1 = MODEL_DIR / "sample1.wrl"
    plain = load_bodies(_project(tmp_path, sample1), None, cache=cache)["robot"]
    heavy = load_bodies(_project(tmp_path, sample1, mass_scale=2.0), None, cache=cache)["robot"]
    again = load_bodies(_project(tmp_path, sample1), None, cache=cache)["robot"]
    assert heavy.total_mass == pytest.approx(2.0 * plain.total_mass)
    assert again.total_mass == plain.total_mass and again is not plain
    assert all(a.inertia is not b.inertia for a, b in zip(again.links, plain.links, strict=True))


def test_a_changed_model_file_is_read_again(tmp_path: Path) -> None:
    cache = BodyCache()
    model = tmp_path / "box.wrl"
    shutil.copy(MODEL_DIR / "box2.wrl", model)
    first = load_bodies(_project(tmp_path, model), None, cache=cache)["robot"]
    model.write_text(model.read_text().replace("12.8", "25.6"))
    stamp = model.stat().st_mtime_ns + 10**9  # a second later, whatever the file system's clock grain
    os.utime(model, ns=(stamp, stamp))
    second = load_bodies(_project(tmp_path, model), None, cache=cache)["robot"]
    assert first.total_mass == pytest.approx(12.8) and second.total_mass == pytest.approx(25.6)
