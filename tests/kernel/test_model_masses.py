"""A project's ``mass_scale`` and ``masses`` change a model's links as loaded, inertia with mass."""

from __future__ import annotations

import numpy as np
import pytest
from process_helpers import MODELS

from hrpsim.errors import ModelError
from hrpsim.modelloader import load_body
from hrpsim.project import parse_project
from hrpsim.simserver.bodies import load_bodies

SAMPLE1 = MODELS / "openhrp3" / "model" / "sample1.wrl"


def _bodies(tmp_path, **model):
    data = {"models": [{"name": "robot", "file": str(SAMPLE1), **model}], "services": {"loader": "local"}}
    return load_bodies(parse_project(data, str(tmp_path / "p.yaml")), None)


def test_mass_scale_and_masses_change_the_links_and_their_inertia(tmp_path):
    plain = load_body(SAMPLE1)
    scaled = _bodies(tmp_path, mass_scale=1.1, masses={"WAIST": 30.0})["robot"]
    for before, after in zip(plain.links, scaled.links, strict=True):
        factor = 30.0 / before.mass if before.name == "WAIST" else 1.1
        assert after.mass == pytest.approx(before.mass * factor, rel=1e-12)
        np.testing.assert_allclose(after.inertia, before.inertia * factor, rtol=1e-12)
    assert scaled.total_mass == pytest.approx(1.1 * (plain.total_mass - plain.links[0].mass) + 30.0)


def test_a_mass_for_a_link_the_model_lacks_is_an_error_naming_it(tmp_path):
    with pytest.raises(ModelError) as caught:
        _bodies(tmp_path, masses={"TAIL": 1.0})
    assert "TAIL" in str(caught.value.problems) + str(caught.value)


def test_a_mass_scale_that_is_not_positive_is_refused_naming_the_key(tmp_path):
    with pytest.raises(Exception, match=r"models\[0\]\.mass_scale"):
        _bodies(tmp_path, mass_scale=-1)
