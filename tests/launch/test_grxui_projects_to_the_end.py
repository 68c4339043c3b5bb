"""Every OpenHRP3 GrxUI project in models/ runs through ``hrpsim launch`` to its end, with the
notes that say what did not carry over (the OpenHRP controllers hrpsim cannot start first)."""

from __future__ import annotations

from pathlib import Path

import pytest
from process_helpers import MODELS, launch_summary

from hrpsim.project import load_project

PROJECTS = sorted(MODELS.glob("*/project/*.xml"))


def test_the_corpus_has_the_spring_joint_sample() -> None:
    assert MODELS / "openhrp3/project/SpringJoint.xml" in PROJECTS


@pytest.mark.parametrize("path", PROJECTS, ids=[p.stem for p in PROJECTS])
def test_a_grxui_project_runs_to_its_end(path: Path, tmp_path: Path) -> None:
    project = load_project(path)
    run = launch_summary(path, tmp_path, timeout=900)
    assert run.summary["error"] is None, run.stderr
    assert run.summary["sim_time"] == pytest.approx(project.world.end_time)
    for note in project.notes:
        assert f"launch: note: {note}" in run.stderr


def test_a_controller_hrpsim_cannot_start_is_named_with_what_the_run_does_without_it() -> None:
    notes = load_project(MODELS / "openhrp3/project/PA10Sample.xml").notes
    (note,) = [n for n in notes if "PA10Controller" in n]
    assert "cannot start; the run goes on without it" in note and "Torque" in note


def test_a_joint_without_a_joint_id_takes_its_angle_and_mode() -> None:
    """springJoint.wrl's SPRING_JOINT is a slide joint without jointId: simulated, outside the
    controller's arrays (as in OpenHRP); its Torque mode is what an uncommanded joint does."""
    project = load_project(MODELS / "openhrp3/project/SpringJoint.xml")
    model = project.model("springJoint")
    assert model.joints == {"SPRING_JOINT": 0.0}
    assert "SPRING_JOINT" not in (model.drive if isinstance(model.drive, dict) else {})
    assert any("springConstant/damperConstant" in note and "CP#floor_#springJoint_" in note for note in project.notes)
