"""The toolkit's robot model weighs each link as the engines simulate it: one clean-up of mass and
inertia (hrpsim.conventions.simulated_mass) for ODE, MuJoCo and the toolkit, to the last bit, and
the same refusal, naming model and link, of an inertia that is not finite."""

from __future__ import annotations

import numpy as np
import pytest
from process_helpers import MODELS

from hrpsim.bodyinfo import Link
from hrpsim.conventions import simulated_mass
from hrpsim.errors import ConfigError
from hrpsim.modelloader import load_body
from hrpsim.toolkit.model_build import link_inertia

# models whose links have full inertia tensors and massless links
MODELS_WITH_TENSORS = [
    "choreonoid-body/GR001/GR001.body",
    "choreonoid-body/WAREC1/WAREC1.body",
    "openrave/robots/barrett-wam-sensors.zae",
]


@pytest.mark.parametrize("relative", MODELS_WITH_TENSORS)
def test_every_link_weighs_what_the_engines_simulate(relative: str) -> None:
    body = load_body(MODELS / relative)
    for link in body.links:
        mass, inertia = simulated_mass(link, link.name)
        ours = link_inertia(link, body.name)
        assert ours.mass == mass, link.name
        np.testing.assert_array_equal(ours.inertia, inertia, err_msg=link.name)
        np.testing.assert_array_equal(ours.lever, link.com, err_msg=link.name)


def test_an_inertia_that_is_not_finite_is_refused_naming_model_and_link() -> None:
    link = Link("ARM", mass=1.0, inertia=np.full((3, 3), np.nan))
    with pytest.raises(ConfigError, match=r"model 'robot' link 'ARM': inertia is not finite"):
        link_inertia(link, "robot")
