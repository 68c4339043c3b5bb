"""Options commands share (--nameserver, --name, --keys) go before or after a subcommand:
``hrpsim sim status --nameserver X`` is ``hrpsim sim --nameserver X status``, and
``hrpsim --nameserver X ns list`` is ``hrpsim ns list --nameserver X``."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from process_helpers import HRPSIM, REPO, spawn, wait_registered


def hrpsim(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*HRPSIM, *args], cwd=REPO, capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("where", ["before", "after"])
def test_ns_list_takes_the_nameserver_on_either_side(nameserver: str, where: str) -> None:
    words = (
        ["ns", "--nameserver", nameserver, "list"] if where == "before" else ["ns", "list", "--nameserver", nameserver]
    )
    done = hrpsim(*words, "--json")
    assert done.returncode == 0, done.stderr  # it reached the nameserver given (nothing registered yet)
    assert json.loads(done.stdout) == []


@pytest.mark.parametrize("where", ["before", "after"])
def test_sim_takes_nameserver_and_name_on_either_side(nameserver: str, where: str) -> None:
    options = ["--nameserver", nameserver, "--name", "no-such-simulator", "--timeout", "5"]
    words = ["sim", *options, "status"] if where == "before" else ["sim", "status", *options]
    done = hrpsim(*words)
    assert "unrecognized arguments" not in done.stderr
    # the nameserver answered (it was found at the given address) that nothing has that name
    assert done.returncode == 1 and "no-such-simulator" in done.stderr and "never connected" not in done.stderr


def test_a_value_after_the_subcommand_wins(nameserver: str) -> None:
    done = hrpsim("sim", "--name", "first", "status", "--name", "second", "--nameserver", nameserver)
    assert done.returncode == 1 and "second" in done.stderr and "'first'" not in done.stderr


def test_run_takes_options_before_the_component(nameserver: str, tmp_path: Path) -> None:
    proc = spawn(["run", "--nameserver", nameserver, "--name", "loader2", "modelloader"], tmp_path / "loader.log")
    try:
        entry = wait_registered(nameserver, "loader2", proc)
        assert entry["kind"] == "modelloader"
    finally:
        proc.stop()


def test_options_before_the_command_word_too(nameserver: str) -> None:
    done = hrpsim("--nameserver", nameserver, "ns", "list", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == []
