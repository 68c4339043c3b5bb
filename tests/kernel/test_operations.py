"""Operations declared once (hrpsim/operations.py): the dispatch, the command lines and
docs/protocol.md's tables come from the declarations, and adding an operation to the simulator is
one declaration plus the World method it names."""

from __future__ import annotations

import ast
import contextlib
import inspect
import io
import re
import threading
from pathlib import Path

import pytest
from controller_helpers import SR1_URDF
from process_helpers import REPO

from hrpsim.client import Client
from hrpsim.errors import RequestError
from hrpsim.nameserver.name_service import NameServer
from hrpsim.nameserver.operations import NAMESERVER
from hrpsim.operations import REQUIRED, Op, replace_table, request, table
from hrpsim.project import parse_project
from hrpsim.simserver import control_cli
from hrpsim.simserver.operations import SIMULATOR
from hrpsim.simserver.sim_service import SimServer

PROTOCOL = REPO / "docs" / "protocol.md"
TABLES = {"nameserver": table(NAMESERVER), "simserver": table(SIMULATOR, within_tick=True)}


def _kinematic_project(folder: Path):
    data = {
        "world": {"engine": "kinematic", "timestep": 0.001},
        "services": {"loader": "local"},
        "models": [{"name": "robot", "file": str(SR1_URDF)}],
    }
    return parse_project(data, str(folder / "project.yaml"))


@pytest.mark.parametrize("service", sorted(TABLES))
def test_docs_protocol_shows_each_services_operations_as_declared(service):
    page = PROTOCOL.read_text()
    assert replace_table(page, service, TABLES[service]) == page, (
        f"docs/protocol.md's table of the {service}'s operations is not its declarations'; "
        f"between <!-- operations: {service} --> and <!-- end operations --> it should read:\n{TABLES[service]}"
    )


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """A real simulator (kinematic world) and nameserver, not registered: their operations' methods."""
    folder = tmp_path_factory.mktemp("operations")
    sim = SimServer(_kinematic_project(folder), register=False)
    names = NameServer(bind="tcp://127.0.0.1:*")
    try:
        yield {"simserver": (sim, SIMULATOR), "nameserver": (names, NAMESERVER)}
    finally:
        sim.close()
        names.close()


@pytest.mark.parametrize("service", ["simserver", "nameserver"])
def test_each_declared_operation_is_served_by_a_method_taking_its_arguments(served, service):
    server, declared = served[service]
    wrong = []
    for op in declared:
        parameters = inspect.signature(op.serving(server)).parameters.values()
        taken = [(p.name, p.default is inspect.Parameter.empty) for p in parameters if p.kind != p.VAR_KEYWORD]
        declared_args = [(a.name, a.default is REQUIRED) for a in op.args]
        if taken != declared_args:
            wrong.append(f"{op.name}: declared {declared_args}, served by {op.method or op.name} taking {taken}")
        for name in op.names:
            if server._roles[name] != op.role:
                wrong.append(f"{name}: role {server._roles[name]}, declared {op.role}")
    assert wrong == []


# A test operation: one declaration naming a World method that no operation served yet.
WAITING = Op(
    "waiting_for",
    "what the run waits for: the project's controllers before a start, or what a tick waits for",
    result="a list of names",
    role="observer",
    within_tick=True,
    cli="waiting",
    method="world.waiting_for",
)


class _Extended(SimServer):
    declared = (*SIMULATOR, WAITING)


def test_an_operation_is_one_declaration_and_its_world_method(tmp_path, shared_nameserver):
    server = _Extended(_kinematic_project(tmp_path), nameserver=shared_nameserver, name="extended")
    thread = threading.Thread(target=server.serve_forever, kwargs={"install_signals": False}, daemon=True)
    thread.start()
    try:
        with Client(server.endpoint, peer="extended", timeout=10.0) as client:
            assert client.call("waiting_for") == []  # served, over a real socket
            with pytest.raises(RequestError, match="waiting_for: unknown argument"):
                client.call("waiting_for", robot="robot")  # its arguments are the World method's
        assert server._roles["waiting_for"] == "observer" and "waiting_for" in server._served_within_tick
        out = io.StringIO()
        with contextlib.redirect_stdout(out):  # the command line has it too
            status = control_cli.main(
                ["waiting", "--name", "extended", "--nameserver", shared_nameserver], ops=_Extended.declared
            )
        assert status == 0 and out.getvalue().strip() == "[]"
        assert f"| `waiting_for` |  | {WAITING.doc} |" in table(_Extended.declared, within_tick=True)
    finally:
        server.stop()
        thread.join(30)
    assert not thread.is_alive()


COMMON_OPTIONS = ('"--nameserver"', '"--bind"', '"--keys"', '"--key"', '"--insecure"')


def test_no_main_defines_the_common_options_itself():
    """--nameserver, --bind and the keys are declared once, in hrpsim/cli_options.py."""
    sources = [
        p
        for folder in (
            "hrpsim",
            "simserver",
            "nameserver",
            "modelloader",
            "collision",
            "controllers",
            "hil",
            "viewer",
            "sweep",
            "recording",
            "examples",
        )
        for p in (REPO / folder).rglob("*.py")
    ]
    offenders = []
    for path in sources:
        if path.relative_to(REPO).as_posix() == "hrpsim/cli_options.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "add_argument":
                flags = [ast.unparse(arg) for arg in node.args]
                offenders += [f"{path.relative_to(REPO)}: {flag}" for flag in flags if flag in COMMON_OPTIONS]
    assert offenders == []


def test_the_simulators_command_line_is_its_declared_operations():
    parser, words = control_cli.parser()
    assert words == {op.cli: op for op in SIMULATOR if op.cli}
    args = parser.parse_args(["snapshot", "landing", "--name", "sim2"])  # an argument and an option both "name"
    assert request(words["snapshot"], args) == {"name": "landing"} and args.name == "sim2"
    args = parser.parse_args(["push", "robot", "WAIST", "-800", "0", "0", "--duration", "0.1", "--at", "2"])
    assert request(words["push"], args) == {
        "robot": "robot",
        "link": "WAIST",
        "force": [-800.0, 0.0, 0.0],
        "duration": 0.1,
        "time": 2.0,
        "point": None,
        "torque": None,
    }
    help_ = parser.format_help()
    assert re.search(r"stop\s+end the simulator process", help_)
