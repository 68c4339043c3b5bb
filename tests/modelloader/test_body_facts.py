"""Every Choreonoid body file of the corpus (models/choreonoid-body) against its facts in
tests/data/model_facts.json: links, dof, total mass, root and sensors of those that load; file,
line and element of the refusal for those that need what hrpsim cannot simulate."""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from modelloader_helpers import HRPSIM, MODEL_FACTS, MODELS, REPO

from hrpsim.errors import ModelError
from hrpsim.modelloader import load_body


def body_facts() -> dict[str, dict[str, Any]]:
    models = json.loads(MODEL_FACTS.read_text())["models"]
    return {rel: facts for rel, facts in models.items() if rel.endswith(".body")}


FACTS = body_facts()
LOADING = sorted(rel for rel, facts in FACTS.items() if "refusals" not in facts)
REFUSED = sorted(rel for rel, facts in FACTS.items() if "refusals" in facts)
CLI_CASES = ["choreonoid-body/GR001/GR001.body", "choreonoid-body/Tank/Tank.body", "choreonoid-body/SR1/SR1.body"]


def test_every_body_file_of_the_corpus_has_facts() -> None:
    on_disk = sorted(str(p.relative_to(MODELS)) for p in (MODELS / "choreonoid-body").rglob("*.body"))
    assert on_disk == sorted(FACTS)
    assert len(LOADING) > 40 and REFUSED


def test_corpus_files_are_the_unmodified_copies_the_facts_describe() -> None:
    listed = {
        f["path"]: f for f in json.loads(MODEL_FACTS.read_text())["files"] if f["path"].startswith("choreonoid-body/")
    }
    on_disk = {str(p.relative_to(MODELS)) for p in (MODELS / "choreonoid-body").rglob("*") if p.is_file()}
    assert set(listed) == on_disk
    for rel, entry in listed.items():
        data = (MODELS / rel).read_bytes()
        assert (len(data), hashlib.sha256(data).hexdigest()) == (entry["size"], entry["sha256"]), rel


@pytest.mark.parametrize("rel", LOADING)
def test_body_loads_with_its_facts(rel: str) -> None:
    facts = FACTS[rel]
    body = load_body(MODELS / rel)
    assert body.format == "choreonoid"
    assert body.name == facts["model_name"]
    assert body.root.name == facts["root_link"]
    assert [lk.name for lk in body.links] == facts["link_names"]
    assert len(body.links) == facts["num_links"]
    assert body.dof == facts["dof"]
    assert body.total_mass == pytest.approx(facts["total_mass"], rel=1e-6)
    assert [lk.name for lk in body.links if lk.joint_type == "crawler"] == facts["crawler_links"]
    ids = [lk.joint_id for lk in body.links if lk.joint_id >= 0]
    assert len(ids) == len(set(ids))  # a controller column per joint, SubBody offsets included
    assert all(lk.joint_id >= 0 for lk in body.links if lk.joint_type == "crawler")  # every track drivable
    got = [(s.name, s.type, body.links[s.link].name) for s in body.sensors]
    # a device the file leaves unnamed is named after its link and type (docs/models.md)
    named = [(s["name"] or f"{s['parent_link']}/{s['type']}0", s["type"], s["parent_link"]) for s in facts["sensors"]]
    assert got == named
    for sensor_type in {s.type for s in body.sensors}:
        ids = [s.id for s in body.sensors if s.type == sensor_type]
        assert sorted(ids) == list(range(len(ids)))  # numbered per type, without gaps or repeats


@pytest.mark.parametrize("rel", REFUSED)
def test_body_needing_a_simulator_plugin_is_refused_naming_file_line_and_element(rel: str) -> None:
    with pytest.raises(ModelError) as caught:
        load_body(MODELS / rel)
    problems = caught.value.problems
    expected = FACTS[rel]["refusals"]
    assert len(problems) == len(expected)
    for problem, refusal in zip(problems, expected, strict=True):
        assert problem.file == str(MODELS / refusal["file"])
        assert problem.line == refusal["line"]
        assert refusal["element"] in problem


@pytest.mark.parametrize("rel", CLI_CASES)
def test_model_info_json_reports_the_facts(rel: str) -> None:
    facts = FACTS[rel]
    done = subprocess.run(
        [*HRPSIM, "model", "info", "--json", str(MODELS / rel)], cwd=REPO, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    info = json.loads(done.stdout)
    assert (info["name"], info["root"], info["links"]) == (facts["model_name"], facts["root_link"], facts["link_names"])
    assert info["dof"] == facts["dof"]
    assert info["mass"] == pytest.approx(facts["total_mass"], rel=1e-6)
    assert [(s["name"], s["type"], s["link"]) for s in info["sensors"]] == [
        (s["name"], s["type"], s["parent_link"]) for s in facts["sensors"]
    ]
    assert info["files"][0] == str(MODELS / rel)
    assert all(Path(f).is_file() for f in info["files"])


def test_model_info_refusal_names_the_file_line_and_element() -> None:
    rel = "choreonoid-body/misc/mid360.body"
    done = subprocess.run(
        [*HRPSIM, "model", "info", str(MODELS / rel)], cwd=REPO, capture_output=True, text=True, timeout=120
    )
    assert done.returncode != 0
    refusal = FACTS[rel]["refusals"][0]
    assert f"{MODELS / refusal['file']}:{refusal['line']}:" in done.stderr
    assert refusal["element"] in done.stderr
