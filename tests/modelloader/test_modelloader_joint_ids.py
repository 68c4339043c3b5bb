"""A jointId far beyond the model's Joints is refused with its file and line, at once: the loader
neither tries to build a table that large nor lets its name registration lapse meanwhile."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from modelloader_helpers import modelloader_process, write_model

from hrpsim.client import Client
from hrpsim.errors import ModelError, NotFound
from hrpsim.modelloader import load_body
from hrpsim.naming import NameClient

HUGE_ID = 2_000_000_000
ARM = """DEF R Humanoid {{ name "arm" humanoidBody [
  DEF BASE Joint {{ jointType "fixed" children [
    DEF SHOULDER Joint {{ jointType "rotate" jointId 0 jointAxis 0 1 0 children [
      DEF ELBOW Joint {{ jointType "rotate" jointId {elbow} jointAxis 0 1 0 }}
    ] }}
  ] }}
] }}
"""


def _arm(folder: Path, elbow: int) -> Path:
    return write_model(folder, ARM.format(elbow=elbow), name="arm.wrl")


def _line_of(path: Path, text: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if text in line)


@pytest.mark.parametrize("elbow", [HUGE_ID, 3])
def test_a_joint_id_beyond_the_joint_count_is_refused_with_its_line(tmp_path: Path, elbow: int) -> None:
    path = _arm(tmp_path, elbow)
    line = _line_of(path, "DEF ELBOW")
    with pytest.raises(ModelError, match=rf"{path}:{line}:\d+: Joint 'ELBOW': jointId {elbow} is beyond"):
        load_body(path)


def test_lenient_loading_drops_the_id_and_keeps_the_joint(tmp_path: Path) -> None:
    body = load_body(_arm(tmp_path, HUGE_ID), lenient=True)
    assert body.joint_names == ["SHOULDER"]  # ELBOW is still a link, outside the controller's arrays
    assert "ELBOW" in [link.name for link in body.links]
    assert any("jointId 2000000000 is beyond" in w for w in body.metadata["warnings"])


def test_the_service_refuses_it_and_stays_registered_throughout(nameserver: str, tmp_path: Path) -> None:
    path = _arm(tmp_path, HUGE_ID)
    lapses: list[str] = []
    done = threading.Event()

    def watch_registration() -> None:
        with NameClient(nameserver, timeout=10.0) as ns:
            while not done.is_set():
                try:
                    ns.resolve("modelloader")
                except NotFound as exc:
                    lapses.append(str(exc))
                time.sleep(0.05)

    with modelloader_process(nameserver, tmp_path) as proc, Client(proc.address, peer="modelloader", timeout=120) as c:
        watcher = threading.Thread(target=watch_registration, daemon=True)
        watcher.start()
        try:
            with pytest.raises(ModelError, match="jointId 2000000000 is beyond this model's 3 Joint"):
                c.call("load", path=str(path))
        finally:
            done.set()
            watcher.join(30)
        assert c.call("ping")["kind"] == "modelloader"
    assert lapses == []
