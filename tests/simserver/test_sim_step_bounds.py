"""A long ``step`` keeps the simulator answering: bounded, and ended early by ``pause`` or ``quit``."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from process_helpers import start_nameserver
from sim_helpers import start_simserver, write_box_drop_project

from hrpsim.client import Client
from hrpsim.errors import RequestError
from hrpsim.simserver.sim_service import MAX_STEP_TICKS

DEADLINE_S = 60.0


@contextmanager
def _served_box_drop(folder: Path, nameserver: str) -> Iterator[tuple]:
    project = write_box_drop_project(folder, end_time=5000.0)
    proc, client, entry = start_simserver(folder, nameserver, project)
    try:
        yield proc, client, entry
    finally:
        client.close()
        proc.stop()


@pytest.fixture
def sim(tmp_path: Path, nameserver: str) -> Iterator[tuple]:
    """A simulator of its own, for a test that steps it or stops it."""
    with _served_box_drop(tmp_path, nameserver) as served:
        yield served


@pytest.fixture(scope="module")
def refusing_sim(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Client]:
    """One simulator for the tests whose every request is refused: none of them steps it."""
    folder = tmp_path_factory.mktemp("step_bounds")
    nameserver = start_nameserver(folder)
    try:
        with _served_box_drop(folder, nameserver.address) as (_, client, _):
            yield client
    finally:
        nameserver.stop()


def _step_in_background(endpoint: str, n: int) -> tuple[threading.Thread, dict[str, Any]]:
    """Send ``step(n)`` from a thread of its own (its own client); the reply or error lands in the dict."""
    out: dict[str, Any] = {}

    def call() -> None:
        with Client(endpoint, peer="simserver", timeout=DEADLINE_S * 4) as client:
            try:
                out["reply"] = client.call("step", n=n)
            except Exception as exc:  # the test asserts on what came back
                out["error"] = exc

    thread = threading.Thread(target=call, daemon=True)
    thread.start()
    return thread, out


def _wait_for_tick_past(client: Client, tick: int) -> dict[str, Any]:
    deadline = time.monotonic() + DEADLINE_S
    while time.monotonic() < deadline:
        status = client.call("status")
        if status["tick"] > tick:
            return status
        time.sleep(0.05)
    raise AssertionError(f"the step never got past tick {tick}")


@pytest.mark.parametrize("n", [MAX_STEP_TICKS + 1, 2**63, 100_000_000])
def test_a_step_beyond_the_bound_is_refused_naming_n(refusing_sim: Client, n: int) -> None:
    client = refusing_sim
    with pytest.raises(RequestError, match=f"step: n must be an integer from 1 to {MAX_STEP_TICKS}") as refused:
        client.call("step", n=n)
    assert refused.value.field == "n"
    assert client.call("status")["tick"] == 0  # nothing was stepped


@pytest.mark.parametrize("n", [0, -3, True, 2.5, "7"])
def test_a_step_of_a_non_count_is_refused_naming_n(refusing_sim: Client, n: Any) -> None:
    client = refusing_sim
    with pytest.raises(RequestError, match="step: n must be") as refused:
        client.call("step", n=n)
    assert refused.value.field == "n"


def test_the_simulator_answers_during_a_long_step_and_pause_ends_it(sim: tuple) -> None:
    _, client, entry = sim
    thread, out = _step_in_background(entry["endpoint"], MAX_STEP_TICKS)
    status = _wait_for_tick_past(client, 10)  # status answered in the middle of the step
    assert status["running"] is False
    with pytest.raises(RequestError, match="making a step of"):
        client.call("set_link_data", robot="box", root_position=[0.0, 0.0, 2.0])
    paused = client.call("pause")
    thread.join(DEADLINE_S)
    assert not thread.is_alive(), "pause did not end the step"
    assert "error" not in out, out
    assert paused["tick"] <= out["reply"]["tick"] < MAX_STEP_TICKS
    assert client.call("step", n=5)["tick"] == out["reply"]["tick"] + 5  # stepping works again


def test_quit_ends_a_long_step_and_the_process(sim: tuple) -> None:
    proc, client, entry = sim
    thread, out = _step_in_background(entry["endpoint"], MAX_STEP_TICKS)
    _wait_for_tick_past(client, 10)
    assert client.call("quit") is True
    assert proc.popen.wait(DEADLINE_S) == 0, proc.log_text()
    thread.join(DEADLINE_S)
    assert "reply" in out or "error" in out
