"""Every bad value in a request to a real simulator process is refused with the field named, not
with a raw Python exception type; the simulator keeps serving."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from process_helpers import start_nameserver
from sim_helpers import PENDULUM_URDF, start_simserver

from hrpsim.client import Client
from hrpsim.errors import RequestError


@pytest.fixture(scope="module")
def sim(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Client]:
    """One simulator for the module: every request here is refused, so none changes what the next
    test sees (each still checks that nothing moved)."""
    folder = tmp_path_factory.mktemp("request_fields")
    (folder / "pendulum.urdf").write_text(PENDULUM_URDF)
    project = folder / "pendulum.yaml"
    project.write_text(
        "world: {timestep: 0.001, end_time: 1.0}\n"
        "services: {loader: local}\n"
        "models:\n  - {name: pend, file: pendulum.urdf}\n"
    )
    nameserver = start_nameserver(folder)
    try:
        proc, client, _ = start_simserver(folder, nameserver.address, project)
        try:
            yield client
        finally:
            client.close()
            proc.stop()
    finally:
        nameserver.stop()


ZERO_ROTATION = [[0.0, 0.0, 0.0]] * 3
BAD_REQUESTS: list[tuple[str, dict[str, Any], str]] = [
    ("state", {"robot": ["pend"]}, "robot"),
    ("get_link_data", {"robot": "pend", "link": 3}, "link"),
    ("init", {"project": 1}, "project"),
    ("set_link_data", {"robot": "pend", "q": np.array([1j])}, "q"),
    ("set_link_data", {"robot": "pend", "q": np.array([True])}, "q"),
    ("set_link_data", {"robot": "pend", "dq": np.zeros((1, 1))}, "dq"),
    ("set_link_data", {"robot": "pend", "q": [[0.0]]}, "q"),
    ("set_link_data", {"robot": "pend", "root_rotation": ZERO_ROTATION}, "root_rotation"),
    ("forward_kinematics", {"robot": "pend", "root_rotation": ZERO_ROTATION}, "root_rotation"),
    ("forward_kinematics", {"robot": "pend", "q": np.array([True])}, "q"),
    ("forward_kinematics", {"robot": "pend", "root_position": "up"}, "root_position"),
    ("set_external_force", {"robot": "pend", "link": "rod", "force": np.array([1j, 0, 0])}, "force"),
    ("command", {"robot": "pend", "torque": np.zeros((1, 1))}, "torque"),
    ("start", {"until": "soon"}, "until"),
]


@pytest.mark.parametrize(("op", "args", "field"), BAD_REQUESTS, ids=[f"{op}-{field}" for op, _, field in BAD_REQUESTS])
def test_a_bad_value_is_refused_naming_its_field(sim: Client, op: str, args: dict[str, Any], field: str) -> None:
    with pytest.raises(RequestError) as refused:
        sim.call(op, **args)
    assert refused.value.field == field, refused.value
    assert field in str(refused.value)
    assert sim.call("state", robot="pend")["q"].shape == (1,)  # still serving, nothing moved
    assert sim.call("status")["tick"] == 0
