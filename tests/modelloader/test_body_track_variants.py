"""A Choreonoid body refused for a simulator plugin's track says which body beside it is the same
robot with tracks hrpsim simulates, and what to change: on the real models Choreonoid ships."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from process_helpers import HRPSIM, MODELS, REPO

from hrpsim.errors import ModelError
from hrpsim.modelloader import load_body

BODIES = MODELS / "choreonoid-body"


@pytest.mark.parametrize(
    "refused, variant",
    [
        ("Tank/AgxTank.body", "Tank.body"),
        ("Tank/PxTank.body", "Tank.body"),
        ("AizuSpider/AizuSpiderNA.body", "AizuSpiderNS.body"),
        ("AizuSpider/AizuSpiderSA.body", "AizuSpiderSS.body"),  # its tracks come from a SubBody
        ("AizuSpider/AizuSpiderDA.body", "AizuSpiderDS.body"),
        ("misc/PxCrawler.body", "crawler.body"),
    ],
)
def test_a_body_refused_for_a_plugins_track_names_its_variant(refused: str, variant: str) -> None:
    with pytest.raises(ModelError) as caught:
        load_body(BODIES / refused)
    headline = caught.value.message  # the advice follows the refusal; the problems stay the file's
    assert f"; {variant} beside it is the same robot" in headline and str(BODIES / refused) in headline, headline
    assert "jointType: pseudo_continuous_track" in headline
    load_body(BODIES / Path(refused).parent / variant)  # and it loads


def test_without_a_variant_the_advice_is_what_to_change(tmp_path: Path) -> None:
    path = tmp_path / "agx.body"
    path.write_text(
        "format: ChoreonoidBody\nformatVersion: 2.0\nname: agx\nlinks:\n  - name: base\n"
        "    elements: {type: AGXVehicleContinuousTrackDevice, name: track}\n"
    )
    (tmp_path / "other.body").write_text("format: ChoreonoidBody\nformatVersion: 2.0\nlinks: [{name: b}]\n")
    done = subprocess.run([*HRPSIM, "model", "info", str(path)], capture_output=True, text=True, timeout=120, cwd=REPO)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert f"{path}:6: AGXVehicleContinuousTrackDevice 'track'" in done.stderr, done.stderr
    assert (
        "; hrpsim simulates Choreonoid's simple track model: give each track as a link with "
        "jointType: pseudo_continuous_track instead of the AGXVehicleContinuousTrackDevice" in done.stderr
    ), done.stderr
