"""Every ``--help`` of every command and subcommand, and a usage error of each, ends cleanly: help
on stdout with status 0, a usage message on stderr with status 2, never a traceback. They run in one
real ``hrpsim`` interpreter, each through the entry point a shell's command goes through."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest
from process_helpers import REPO

from hrpsim.cli import COMMANDS, COMPONENTS
from hrpsim.nameserver.operations import NAMESERVER
from hrpsim.simserver.operations import SIMULATOR

RUN_EACH = r"""
import contextlib, io, json, sys, traceback
from hrpsim import cli
results = []
for argv in json.loads(sys.stdin.read()):
    out, err = io.StringIO(), io.StringIO()
    crashed = None
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = cli.main(argv)
        except SystemExit as exc:
            code = exc.code
        except BaseException:
            code, crashed = None, traceback.format_exc()
    results.append({"argv": argv, "code": code, "out": out.getvalue(), "err": err.getvalue(), "crashed": crashed})
print(json.dumps(results))
"""
# A subcommand that is not argparse's (read by the command itself), so not listed by its help
NOT_LISTED = [["sweep", "report"]]


def _run_each(argvs: list[list[str]]) -> dict[tuple[str, ...], dict]:
    done = subprocess.run(
        [sys.executable, "-c", RUN_EACH],
        input=json.dumps(argvs),
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return {tuple(r["argv"]): r for r in json.loads(done.stdout)}


def _listed_subcommands(help_text: str) -> list[str]:
    """The subcommands an argparse help lists: ``{a,b}`` in its usage, or under its COMMAND."""
    choices = re.search(r"\{([\w,-]+)\} \.\.\.", help_text.split("\n\n")[0])
    if choices:
        return choices.group(1).split(",")
    section = help_text.split("positional arguments:", 1)[-1].split("\n\n")[0]
    return re.findall(r"^    ([a-z][\w-]*)(?:\s|$)", section, re.M)


@pytest.fixture(scope="module")
def commands() -> list[list[str]]:
    """Every command and subcommand, found from the commands' own help."""
    top = [[word] for word in COMMANDS if word != "run"] + [["run", component] for component in COMPONENTS]
    helps = _run_each([[*argv, "--help"] for argv in top])
    subs = [[*argv, sub] for argv in top for sub in _listed_subcommands(helps[(*argv, "--help")]["out"])]
    return [[], *top, *subs, *(argv for argv in NOT_LISTED if argv not in subs)]


def test_every_command_and_subcommand_is_found(commands):
    found = {tuple(argv) for argv in commands}
    assert {("sim", op.cli) for op in SIMULATOR if op.cli} <= found
    assert {("ns", op.cli) for op in NAMESERVER if op.cli} <= found
    assert {("keys", "new"), ("export", "ros2"), ("model", "info"), ("model", "convert"), ("run", "simserver")} <= found
    assert ("launch", "ros2") not in found  # an option's choices are no subcommands


def test_every_help_ends_cleanly_with_its_usage(commands):
    results = _run_each([[*argv, "--help"] for argv in commands])
    bad = [
        f"hrpsim {' '.join(argv)}: status {r['code']}\n{r['crashed'] or r['err'][-500:]}"
        for argv, r in results.items()
        if r["crashed"] or r["code"] != 0 or "usage" not in r["out"].lower()
    ]
    assert bad == []


def test_every_usage_error_says_so_without_a_traceback(commands):
    wrong_use = [[*argv, "--no-such-option"] for argv in commands]
    wrong_use.append(["sim", "push", "robot", "WAIST", "-inf", "0", "0", "--duration", "1"])  # a negative positional
    results = _run_each(wrong_use)
    bad = [
        f"hrpsim {' '.join(argv)}: status {r['code']}\n{r['crashed'] or r['err'][-500:]}"
        for argv, r in results.items()
        if r["crashed"] or r["code"] != 2 or "Traceback" in r["err"] or not r["err"].strip()
    ]
    assert bad == []


def test_sim_push_help_shows_its_arguments_from_a_shell():
    done = subprocess.run(
        [sys.executable, "-m", "hrpsim", "sim", "push", "--help"], cwd=REPO, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0 and "Traceback" not in done.stderr
    assert "ROBOT LINK F F F" in done.stdout and "--point X Y Z" in done.stdout and "--duration DURATION" in done.stdout
