"""OpenHRP3's own GrxUI project files load into the same Project as our YAML files."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from process_helpers import MODEL_FACTS

from hrpsim.errors import ConfigError
from hrpsim.project import load_project


def project_facts() -> dict:
    return json.loads(MODEL_FACTS.read_text())["projects"]


def test_every_grxui_project_of_the_corpus_maps_onto_its_facts(models_dir: Path) -> None:
    for rel, facts in project_facts().items():
        project = load_project(models_dir / rel)
        sim = facts["simulation"]
        assert project.world.timestep == pytest.approx(float(sim["timeStep"])), rel
        assert project.world.end_time == pytest.approx(float(sim["totalTime"])), rel
        assert project.world.gravity == pytest.approx([0, 0, -float(sim["gravity"])]), rel
        assert [m.name for m in project.models] == [m["name"] for m in facts["models"]], rel
        for model, fact in zip(project.models, facts["models"], strict=True):
            assert model.file == str((models_dir / fact["url_resolved"]).resolve()), rel
            assert Path(model.file).is_file() == fact["url_exists"]
            assert model.static == (fact["isRobot"] != "true"), rel
            assert len(model.joints) == fact["num_initial_joint_angles"], (rel, model.name)
            if fact["controller"]:
                assert any(fact["controller"] in note for note in project.notes), rel
        pairs = {frozenset((c.a, c.b)) for c in project.collisions}
        assert len(pairs) == len(project.collisions) <= facts["num_collision_pairs"]
        assert project.collision_pairs() == project.collisions, rel  # exactly the listed pairs, as GrxUI
        assert len(project.extra_joints) == facts["num_extra_joint_items"], rel


def test_pa10_initial_pose_root_pose_and_friction(models_dir: Path) -> None:
    project = load_project(models_dir / "openhrp3/project/PA10Sample.xml")
    pa10, floor, box = (project.model(n) for n in ("pa10", "floor", "box"))
    assert pa10.joints["J7"] == 1.57 and pa10.joints["HAND_L"] == -0.02
    assert pa10.rotation == [0.0, 0.0, 1.0, 0.0] and pa10.position == [0.0, 0.0, 0.0]
    assert floor.static and not box.static
    assert floor.position == pytest.approx([0, 0, -0.1])
    assert box.position == pytest.approx([0.0, -0.9, 0.04])
    pair = next(c for c in project.collisions if {c.a, c.b} == {"floor", "box"})
    assert pair.friction == 0.5 and pair.sliding_friction == 0.5


def test_torque_modes_become_drives_of_joints_not_of_the_root(models_dir: Path) -> None:
    project = load_project(models_dir / "openhrp3/project/closedLink.xml")
    drive = project.models[0].drive
    assert isinstance(drive, dict) and set(drive.values()) == {"torque"} and "J0" in drive
    crawler = load_project(models_dir / "openhrp3/project/SampleCrawler.xml").model("crawler")
    assert crawler.position == [-1.0, 0.0, 0.1]
    assert "BODY" not in (crawler.drive if isinstance(crawler.drive, dict) else {})


def test_a_broken_grxui_file_names_file_and_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.xml"
    bad.write_text(
        '<grxui><mode name="Simulation">\n<item class="x.GrxModelItem" name="r" url="r.wrl">\n'
        '<property name="WAIST.translation" value="0 0"/>\n</item></mode></grxui>\n'
    )
    with pytest.raises(ConfigError, match=rf"{bad}:3: property 'WAIST.translation' needs 3 numbers"):
        load_project(bad)
    (tmp_path / "broken.xml").write_text("<grxui><mode>")
    with pytest.raises(ConfigError, match=r"broken\.xml: not a readable GrxUI project"):
        load_project(tmp_path / "broken.xml")


@pytest.mark.parametrize("name", ["Sample", "PA10Sample", "SampleRobot_inHouse", "closedLink", "SampleCrawler"])
def test_every_grxui_project_of_the_corpus_launches(models_dir: Path, tmp_path: Path, name: str) -> None:
    import subprocess
    import sys

    from process_helpers import REPO

    summary_file = tmp_path / "summary.json"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "hrpsim",
            "launch",
            str(models_dir / f"openhrp3/project/{name}.xml"),
            "--until",
            "0.2",
            "--nameserver",
            "tcp://127.0.0.1:*",
            "--quiet",
            "--run-dir",
            str(tmp_path / "run"),
            "--summary",
            str(summary_file),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    summary = json.loads(summary_file.read_text())
    assert proc.returncode == 0 and summary["error"] is None, proc.stderr
    assert summary["sim_time"] == pytest.approx(0.2)
    project = load_project(models_dir / f"openhrp3/project/{name}.xml")
    # a model static in the project or in its own file (env.wrl) does not move, so it is not reported
    assert set(summary["robots"]) <= {m.name for m in project.models if not m.static}
    for robot in summary["robots"].values():
        assert len(robot["root_end"]) == 3 and all(math.isfinite(v) for v in robot["root_end"])
