"""Choreonoid body files through the modelloader service (a real process behind a real
nameserver): the same BodyInfo as a local load, and a bad file's problems with their places."""

from __future__ import annotations

from pathlib import Path

import pytest
from modelloader_helpers import MODELS, modelloader_process

from hrpsim.bodyinfo import bodies_equal
from hrpsim.client import Client
from hrpsim.errors import ModelError
from hrpsim.modelloader import load_body
from hrpsim.models import fetch_body


@pytest.fixture
def loader(nameserver: str, tmp_path: Path):
    with (
        modelloader_process(nameserver, tmp_path) as proc,
        Client(proc.address, peer="modelloader", timeout=60.0) as client,
    ):
        yield nameserver, client


def test_bodies_cross_the_wire_unchanged_and_a_bad_one_keeps_its_problems(loader, tmp_path: Path) -> None:
    nameserver, client = loader
    for rel in ("choreonoid-body/GR001/GR001.body", "choreonoid-body/Tank/Tank.body"):
        remote = fetch_body(MODELS / rel, nameserver=nameserver)
        assert bodies_equal(remote, load_body(MODELS / rel)), rel
    broken = tmp_path / "bad.body"
    broken.write_text(
        "format: ChoreonoidBody\nformatVersion: 1.0\nlinks:\n  - { name: A, jointType: free }\n"
        "  - { name: B, parent: A, jointType: bent }\n  - { name: C, parent: Z }\n"
    )
    with pytest.raises(ModelError) as local:
        load_body(broken)
    with pytest.raises(ModelError) as remote:
        client.call("load", path=str(broken))
    assert [(p.file, p.line) for p in remote.value.problems] == [(p.file, p.line) for p in local.value.problems]
    assert [p.line for p in remote.value.problems] == [5, 6]
    assert client.call("ping")["kind"] == "modelloader"  # the service goes on
