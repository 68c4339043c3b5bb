"""Values a body (or an hrpsim-written MJCF) file must not hold: NaN and infinite numbers, negative
or not positive semi-definite inertias, ids that are not whole numbers or repeat, lists where maps
belong, thousands of levels of nesting, binary files. Each is an error naming the file, the line
and the field, through ``hrpsim model info`` (a real process, no traceback) and through a served
modelloader (an error reply naming the file)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from modelloader_helpers import modelloader_process
from process_helpers import HRPSIM, REPO

from hrpsim.client import Client
from hrpsim.errors import ModelError

HEADER = "format: ChoreonoidBody\nformatVersion: 2.0\nname: probe\nlinks:\n"  # links start on line 5
BASE = HEADER + "  - name: base\n"  # its keys start on line 6
TWO_JOINTS = BASE + "  - {name: a, parent: base, jointType: revolute, jointId: 0}\n"
DEEP = 10_000
SUB_BODY = "  - {type: SubBody, uri: sub.body, parent: base, jointIdOffset: .nan}\n"
RIGID_BODY = "    elements: {type: RigidBody, mass: 1, inertia: [1, 0, 0, 0, -1, 0, 0, 0, 1]}\n"
NESTED_ELEMENTS = "    elements: " + "{type: Transform, elements: " * DEEP + "{type: Group}" + "}" * DEEP
SECOND_JOINT_0 = "  - {name: b, parent: base, jointType: revolute, jointId: 0}\n"
NAMESAKES = "  - {name: b, parent: base}\n  - {name: b, parent: b}\n"  # once looped for ever
NAN_RANGE = "  - {name: b, parent: a, jointType: revolute, jointId: 1, jointRange: [.nan, 1]}\n"

# name -> (file text, the line of the fault, what the message says)
CASES: dict[str, tuple[str, int, str]] = {
    "jointId NaN": (BASE + "    jointId: .nan\n", 6, "jointId must be a finite number"),
    "jointId 1e30": (BASE + "    jointId: 1e30\n", 6, "jointId must be a whole number"),
    "jointId 2e9": (BASE + "    jointId: 2e9\n", 6, "jointId 2000000000 is beyond"),
    "jointId repeated": (TWO_JOINTS + SECOND_JOINT_0, 7, "is that of"),
    "jointIdOffset NaN": (BASE + SUB_BODY, 6, "jointIdOffset must be a finite number"),
    "device id NaN": (BASE + "    elements: {type: ForceSensor, name: f, id: .nan}\n", 6, "id must be a finite number"),
    "extraJoints a number": (BASE + "extraJoints: 5\n", 6, "extraJoints: must be a list"),
    "extraJoints of lists": (BASE + "extraJoints: [[1]]\n", 6, "must be a mapping"),
    "link names repeated": (BASE + "  - {name: base, parent: base}\n", 6, "a second link of this name"),
    "a link under its namesake": (BASE + NAMESAKES, 7, "a second link of this name"),
    "maps 10,000 deep": (BASE + "    x: " + "{a: " * DEEP + "1" + "}" * DEEP + "\n", 6, "nested"),
    "lists 10,000 deep": (BASE + "    x: " + "[" * DEEP + "1" + "]" * DEEP + "\n", 6, "nested"),
    "elements 10,000 deep": (BASE + NESTED_ELEMENTS, 6, "nested"),
    "mass NaN": (BASE + "    mass: .nan\n", 6, "mass must be a finite number"),
    "mass infinite": (BASE + "    mass: .inf\n", 6, "mass must be a finite number"),
    "inertia NaN": (BASE + "    mass: 1\n    inertia: [1, 0, 0, 0, 1, 0, 0, 0, .nan]\n", 7, "inertia holds nan"),
    "inertia negative": (BASE + "    mass: 1\n    inertia: [-1, 0, 0, 0, 1, 0, 0, 0, 1]\n", 7, "not positive semi"),
    "inertia indefinite": (BASE + "    mass: 1\n    inertia: [1, 5, 0, 5, 1, 0, 0, 0, 1]\n", 7, "not positive semi"),
    "RigidBody inertia negative": (BASE + RIGID_BODY, 6, "not positive semi-definite"),
    "translation NaN": (BASE + "    translation: [0, .nan, 0]\n", 6, "translation holds nan"),
    "jointRange NaN": (TWO_JOINTS + NAN_RANGE, 7, "jointRange holds nan"),
}
MJCF_JOINT_ID = """<mujoco model="m">
  <custom><numeric name="m/joint_id/j" data="{value}"/><numeric name="m/joint_id/k" data="1"/></custom>
  <worldbody><body name="m/a"><joint name="m/j" type="hinge"/><geom size=".1"/>
    <body name="m/b"><joint name="m/k" type="hinge"/><geom size=".1"/></body></body></worldbody>
</mujoco>
"""


def write_cases(folder: Path) -> dict[str, tuple[Path, int, str]]:
    """Every case as a file in ``folder``: name -> (its path, the line of the fault, what the message says)."""
    (folder / "sub.body").write_text(HEADER + "  - name: arm\n")
    written = {}
    for number, (name, (text, line, expected)) in enumerate(CASES.items()):
        path = folder / f"case{number}.body"
        path.write_text(text)
        written[name] = (path, line, expected)
    binary = folder / "binary.body"
    binary.write_bytes(b"\x7fELF\x02\x01\x01\x00" + bytes(range(32)) * 4)  # control characters, valid UTF-8
    written["binary"] = (binary, 0, "not a YAML text file")
    for value in ("nan", "inf"):
        path = folder / f"joint_id_{value}.xml"
        path.write_text(MJCF_JOINT_ID.format(value=value))
        written[f"MJCF joint_id {value}"] = (path, 2, f"joint_id {value} is not a whole number")
    return written


def located(message: str, path: Path, line: int) -> bool:
    return f"{path}:{line}:" in message if line else f"{path}:" in message


@pytest.mark.parametrize("case", [*CASES, "binary", "MJCF joint_id nan", "MJCF joint_id inf"])
def test_model_info_refuses_at_the_line_without_a_traceback(tmp_path: Path, case: str) -> None:
    if case.startswith("MJCF"):
        pytest.importorskip("mujoco")
    path, line, expected = write_cases(tmp_path)[case]
    done = subprocess.run([*HRPSIM, "model", "info", str(path)], capture_output=True, text=True, timeout=300, cwd=REPO)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr[-2000:]
    assert expected in done.stderr and located(done.stderr, path, line), done.stderr[-2000:]


def test_the_service_refuses_each_naming_the_file_and_serves_on(nameserver: str, tmp_path: Path) -> None:
    pytest.importorskip("mujoco")
    cases = write_cases(tmp_path)
    with (
        modelloader_process(nameserver, tmp_path) as proc,
        Client(proc.address, peer="modelloader", timeout=120) as client,
    ):
        for path, line, expected in cases.values():
            with pytest.raises(ModelError) as refused:
                client.call("load", path=str(path))
            message = str(refused.value)
            assert expected in message and located(message, path, line), message
        assert client.call("load", path=str(tmp_path / "sub.body"))["name"] == "probe"
