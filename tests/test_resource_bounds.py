"""What a peer can make a service hold: message sizes fitted to each socket, and numbers in a
hello that would overflow a timeout. Real processes and sockets."""

from __future__ import annotations

from pathlib import Path

import pytest
import zmq
from hrpsim.controllers.link import SimulatorLink
from sim_helpers import start_simserver, write_box_drop_project

from hrpsim.client import Client
from hrpsim.codec import CODEC
from hrpsim.errors import RequestError


def test_an_oversized_request_loses_its_connection_and_the_service_goes_on(nameserver: str) -> None:
    ctx = zmq.Context.instance()
    big = ctx.socket(zmq.DEALER)
    big.setsockopt(zmq.LINGER, 0)
    big.connect(nameserver)
    try:
        # 1 MB to the nameserver, whose requests are names and endpoints (64 KB at most)
        big.send(CODEC.request(1, "resolve", {"name": "x" * (1024 * 1024)}))
        with Client(nameserver, peer="nameserver", timeout=10.0) as client:
            assert client.call("ping")["kind"] == "nameserver"
            assert client.call("list") == []
        assert not big.poll(1000), "an oversized request gets no answer: its connection is dropped"
    finally:
        big.close()


@pytest.mark.parametrize("field", ["deadline", "period"])
def test_an_absurd_time_in_a_hello_is_an_error_naming_the_field(tmp_path: Path, nameserver: str, field: str) -> None:
    project = write_box_drop_project(tmp_path, publish_every=5)
    proc, client, entry = start_simserver(tmp_path, nameserver, project)
    link = SimulatorLink(entry["metadata"]["controllers"])
    try:
        args = {"period": None, field: 1e300}
        with pytest.raises(RequestError, match=f"'{field}' must be a positive number of seconds up to 3600"):
            link.attach("absurd", "box", timeout=10.0, **args)
        assert client.call("status")["tick"] == 0
    finally:
        link.close()
        client.close()
        proc.stop()
