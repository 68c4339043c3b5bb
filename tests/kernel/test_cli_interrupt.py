"""Ctrl-C that comes while a command is still importing (before it sets up its own handling)
ends ``hrpsim`` with SIGINT's status and one line, not a traceback."""

from __future__ import annotations

import signal
import subprocess
import sys

import pytest
from process_helpers import REPO

# Raises KeyboardInterrupt where Ctrl-C would: inside the import of the command's module.
INTERRUPTED_IMPORT = """
import sys
from importlib.abc import MetaPathFinder

class CtrlC(MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == sys.argv[1]:
            raise KeyboardInterrupt
        return None

sys.meta_path.insert(0, CtrlC())
from hrpsim.cli import main
sys.exit(main(sys.argv[2:]))
"""


@pytest.mark.parametrize(
    ("module", "command"),
    [("hrpsim.launcher", ["launch", "examples/sample_stand.yaml"]), ("hrpsim.nameserver.cli", ["ns", "list"])],
)
def test_ctrl_c_while_a_command_imports_ends_it_with_one_line(module: str, command: list[str]) -> None:
    done = subprocess.run(
        [sys.executable, "-c", INTERRUPTED_IMPORT, module, *command],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "Traceback" not in done.stderr, done.stderr
    assert done.stderr.strip() == "hrpsim: interrupted"
    assert done.returncode == 128 + signal.SIGINT
