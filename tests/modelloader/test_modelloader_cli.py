"""``hrpsim model``: its sub-commands and their exit statuses, run as real processes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path

from modelloader_helpers import HRPSIM, MODELS, REPO


def hrpsim(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*HRPSIM, *args], cwd=REPO, capture_output=True, text=True, timeout=120)


def test_model_without_a_command_prints_usage_and_fails() -> None:
    done = hrpsim("model")
    assert done.returncode == 2 and "info" in done.stdout and "convert" in done.stdout


def test_unknown_model_command_is_named() -> None:
    done = hrpsim("model", "explode", "x.wrl")
    assert done.returncode == 2 and "unknown command 'explode'" in done.stderr


def test_convert_is_dispatched_to_the_converter(tmp_path: Path) -> None:
    out = tmp_path / "box.urdf"
    done = hrpsim("model", "convert", str(MODELS / "openhrp3/model/box2.wrl"), str(out))
    assert done.returncode == 0, done.stderr
    assert out.is_file() and "<robot" in out.read_text()


def test_info_of_other_formats_goes_through_the_same_dispatch() -> None:
    done = hrpsim("model", "info", "--json", str(MODELS / "choreonoid/model/SR1/SR1.urdf"))
    assert done.returncode == 0, done.stderr
    info = json.loads(done.stdout)
    assert info["name"] == "SR1" and info["dof"] == 29 and info["format"] == "urdf"


def test_info_of_a_missing_file_names_it() -> None:
    done = hrpsim("model", "info", "/nonexistent/robot.wrl")
    assert done.returncode == 1 and "/nonexistent/robot.wrl: no such file" in done.stderr


def test_a_reader_that_stops_early_ends_the_command_without_a_traceback() -> None:
    # As `hrpsim model info X | head`: the read end closes before the command writes anything.
    reader, writer = os.pipe()
    os.close(reader)
    try:
        done = subprocess.run(
            [*HRPSIM, "model", "info", str(MODELS / "openhrp3/model/sample1.wrl")],
            cwd=REPO,
            stdout=writer,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
        )
    finally:
        os.close(writer)
    assert "Traceback" not in done.stderr and "BrokenPipeError" not in done.stderr, done.stderr
    assert done.returncode == 128 + signal.SIGPIPE
