"""URDF and COLLADA models through the real modelloader process: the same Body as a local load,
and a broken file is an error reply naming file and line while the service goes on."""

from __future__ import annotations

from pathlib import Path

import pytest
from modelloader_helpers import modelloader_process
from urdf_helpers import PUMA, SR1, WAM

from hrpsim.bodyinfo import Body, bodies_equal
from hrpsim.client import Client
from hrpsim.errors import ModelError
from hrpsim.modelloader import load_body


@pytest.fixture
def client(nameserver: str, tmp_path: Path):
    with modelloader_process(nameserver, tmp_path) as proc, Client(proc.address, peer="modelloader", timeout=60.0) as c:
        yield c


def test_urdf_and_collada_bodies_cross_the_wire_unchanged(client):
    for path in (SR1, PUMA, WAM):
        remote = Body.from_wire(client.call("load", path=str(path)))
        assert bodies_equal(remote, load_body(path)), path
        assert remote.metadata["files"] == [str(path)]


def test_a_broken_urdf_is_an_error_reply_and_the_service_goes_on(client, tmp_path: Path):
    broken = tmp_path / "broken.urdf"
    broken.write_text('<robot name="b">\n<link name="a"><inertial><mass value="-2"/></inertial></link>\n</robot>\n')
    with pytest.raises(ModelError) as caught:
        client.call("load", path=str(broken))
    assert f"{broken}:2:" in str(caught.value) and "mass -2.0 is negative" in str(caught.value)
    assert Body.from_wire(client.call("load", path=str(PUMA))).dof == 6


def test_warnings_of_a_tolerated_urdf_reach_the_reply_and_model_info(client, tmp_path: Path):
    import subprocess
    import sys

    odd = tmp_path / "odd.urdf"
    odd.write_text(
        '<robot name="o">\n<link name="a"><inertial><mass value="0"/>\n'
        '<inertia ixx="0" ixy="0" ixz="0" iyy="0" iyz="0" izz="0"/></inertial></link>\n</robot>\n'
    )
    wire = client.call("load", path=str(odd))
    (warning,) = wire["metadata"]["warnings"]
    assert warning.startswith(f"{odd}:2: ") and "mass 0: a massless link" in warning
    info = subprocess.run(
        [sys.executable, "-m", "hrpsim", "model", "info", str(odd)], capture_output=True, text=True, timeout=60
    )
    assert info.returncode == 0 and f"warning: {warning}" in info.stdout.splitlines()
