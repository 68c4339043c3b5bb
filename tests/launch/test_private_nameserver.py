"""``hrpsim launch`` where OpenHRP's port 2809 is held by another stack: it starts a private
nameserver and prints the ``export HRPSIM_NAMESERVER=...`` line that points ``hrpsim sim`` and
``hrpsim ns`` at it (they would go to the other stack otherwise)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time

from controller_helpers import EXAMPLES
from process_helpers import HRPSIM, REPO

from hrpsim.naming import DEFAULT_NAMESERVER, ENV_NAMESERVER


def _hold_2809(deadline_s: float = 120.0) -> socket.socket | None:
    """A socket on 2809 while the test runs. Another stack (another test's) may hold it now and let it
    go before the launch looks: so wait until this test holds it; None when another stack held it all
    along (then it is in use all the same)."""
    deadline = time.monotonic() + deadline_s
    while True:
        held = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            held.bind(("127.0.0.1", 2809))
            held.listen()
            return held
        except OSError:
            held.close()
            if time.monotonic() > deadline:
                return None
            time.sleep(0.2)


def test_launch_next_to_another_stack_says_how_to_reach_its_own(tmp_path):
    summary = tmp_path / "summary.json"
    env = {k: v for k, v in os.environ.items() if k != ENV_NAMESERVER}
    argv = ["launch", str(EXAMPLES / "nameserver_only.yaml"), "--until", "0.5", "--summary", str(summary)]
    held = _hold_2809()
    try:
        done = subprocess.run(
            [*HRPSIM, *argv, "--run-dir", str(tmp_path / "run")],
            cwd=REPO,
            env=env,
            capture_output=True,
            text=True,
            timeout=180,
        )
    finally:
        if held is not None:
            held.close()
    assert done.returncode == 0, done.stdout + done.stderr
    address = json.loads(summary.read_text())["launch"]["nameserver"]
    assert address.startswith("tcp://127.0.0.1:") and address != DEFAULT_NAMESERVER
    assert f"{DEFAULT_NAMESERVER} is in use; starting a private nameserver" in done.stdout
    assert f"\nexport {ENV_NAMESERVER}={address}\n" in done.stdout
