"""README's hardware-in-the-loop commands, as written: the stand-in in one terminal, the
controller in another, with no nameserver started first (the stand-in serves one when none
answers) and with one already running (the stand-in joins it)."""

from __future__ import annotations

import os
import re
import shlex
import socket
import subprocess
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest
from process_helpers import HRPSIM, REPO, ManagedProcess, spawn, start_nameserver, wait_registered

from hrpsim.naming import NameClient


def readme_hil_commands() -> tuple[list[str], list[str]]:
    """The stand-in's and the controller's argument lists from README's block that runs them."""
    blocks = re.findall(r"```sh\n(.*?)```", (REPO / "README.md").read_text(), re.S)
    (block,) = [b for b in blocks if "hrpsim run hil" in b]
    lines = [shlex.split(line) for line in block.replace("\\\n", " ").splitlines() if line.strip()]
    stand_in = next(words for words in lines if words[:3] == ["hrpsim", "run", "hil"])
    controller = next(words for words in lines if words[:2] == ["hrpsim", "controller"])
    return stand_in[1:], controller[1:]


def free_address() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"tcp://127.0.0.1:{sock.getsockname()[1]}"


def run_bench(address: str, tmp_path: Path) -> str:
    """Both README commands against the nameserver address ``address``; the stand-in's log."""
    stand_in_args, controller_args = readme_hil_commands()
    env = {"HRPSIM_NAMESERVER": address}
    stand_in = spawn(stand_in_args, tmp_path / "hil.log", env=env)
    try:
        wait_registered(address, "hil", stand_in, timeout=60)
        done = subprocess.run(
            [*HRPSIM, *controller_args],
            cwd=REPO,
            env={**os.environ, **env},
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr
        assert "the run reached its end" in done.stderr
    finally:
        stand_in.stop()
    return stand_in.log_text()


@dataclass
class Benches:
    """The two runs of README's bench, each the stand-in's log once its run is over."""

    alone: Future[str]  # no nameserver started first
    joined: Future[str]  # with one already running
    nameserver: ManagedProcess  # the one the second joined, still running


@pytest.fixture(scope="module")
def benches(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Benches]:
    """Both benches at once: each is paced by the wall clock (the project's 9.8 s) and mostly waits,
    so the two runs overlap instead of one waiting for the other. They share nothing: each has its
    own nameserver address."""
    nameserver = start_nameserver(tmp_path_factory.mktemp("nameserver"))
    try:
        with ThreadPoolExecutor(max_workers=2) as pool:
            yield Benches(
                alone=pool.submit(run_bench, free_address(), tmp_path_factory.mktemp("alone")),
                joined=pool.submit(run_bench, nameserver.address, tmp_path_factory.mktemp("joined")),
                nameserver=nameserver,
            )
    finally:
        nameserver.stop()


def test_the_readme_bench_runs_with_no_nameserver_started(benches: Benches) -> None:
    log = benches.alone.result()
    assert "no nameserver answered" in log and "serving one in this process" in log


def test_the_stand_in_joins_a_running_nameserver(benches: Benches) -> None:
    log = benches.joined.result()
    assert "no nameserver answered" not in log
    with NameClient(benches.nameserver.address, timeout=5.0) as ns:
        assert ns.list() == []  # the stand-in unregistered from the nameserver it joined
