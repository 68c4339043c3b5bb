"""What the MJCF reader refuses, and what it names as only MuJoCo's to simulate, each with the file,
its line and the element, all at once; run through ``hrpsim model info`` as a real process."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from process_helpers import REPO

from hrpsim.errors import ModelError
from hrpsim.modelloader import load_body

pytest.importorskip("mujoco")

REFUSED = """<mujoco model="unheld">
  <worldbody>
    <body name="a">
      <joint name="j1" type="hinge"/>
      <geom type="sphere" size=".1"/>
    </body>
    <body name="b" pos="1 0 0">
      <freejoint/>
      <geom type="sphere" size=".1"/>
    </body>
    <body name="target" mocap="true"><geom type="box" size=".1 .1 .1"/></body>
  </worldbody>
</mujoco>
"""


def info(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "hrpsim", "model", "info", str(path)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_what_no_engine_can_run_is_refused_at_once_with_its_line(tmp_path: Path) -> None:
    path = tmp_path / "unheld.xml"
    path.write_text(REFUSED)
    done = info(path)
    assert done.returncode == 1
    expected = {7: "free joint is held only by the one body", 11: "a mocap body"}
    for line, words in expected.items():
        assert any(f"{path}:{line}: /mujoco/" in row and words in row for row in done.stderr.splitlines()), (
            line,
            done.stderr,
        )
    assert "2 problems" in done.stderr


MUJOCO_ONLY = """<mujoco model="mujoco_only">
  <worldbody>
    <body name="a">
      <joint name="j1" type="hinge"/>
      <geom type="ellipsoid" size=".1 .2 .3"/>
      <site name="s"/>
      <body name="b" pos="1 0 0">
        <joint name="j2" type="hinge"/>
        <geom type="sphere" size=".1"/>
      </body>
    </body>
  </worldbody>
  <tendon><fixed name="couple"><joint joint="j1" coef="1"/><joint joint="j2" coef="-1"/></fixed></tendon>
  <equality><joint name="same" joint1="j1" joint2="j2"/></equality>
  <actuator><motor name="pull" tendon="couple"/><motor name="at_site" site="s" gear="1 0 0 0 0 0"/></actuator>
</mujoco>
"""


def test_what_only_mujoco_simulates_is_listed_and_refused_by_ode(tmp_path: Path) -> None:
    path = tmp_path / "only.xml"
    path.write_text(MUJOCO_ONLY)
    body = load_body(path)
    expected = {
        5: "an ellipsoid geom",
        13: "a fixed tendon",
        14: "a joint equality",
        15: "an actuator acting on a tendon",
    }
    listed = body.metadata["mujoco_only"]
    assert len(listed) == 5
    for line, words in expected.items():
        assert any(row.startswith(f"{path}:{line}: /mujoco/") and words in row for row in listed), (line, listed)
    assert any("an actuator acting on a site" in row for row in listed)
    assert all(row.endswith("ODE cannot simulate it; use engine: mujoco") for row in listed)
    done = info(path)  # hrpsim model info shows them
    assert done.returncode == 0 and done.stdout.count("mujoco only: ") == 5
    converted = subprocess.run(
        [sys.executable, "-m", "hrpsim", "model", "convert", str(path), str(tmp_path / "only.urdf")],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert converted.returncode == 0 and converted.stdout.count("left out (no BodyInfo form): ") == 5


def test_mujocos_own_compiler_error_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "broken.xml"
    path.write_text('<mujoco>\n<worldbody>\n<body>\n<joint type="hinge" range="1"/>\n</body></worldbody></mujoco>\n')
    with pytest.raises(ModelError, match=r"broken\.xml: MuJoCo cannot compile .*line 4"):
        load_body(path)


def test_an_xml_file_that_is_not_mjcf_is_named_so(tmp_path: Path) -> None:
    path = tmp_path / "robot.xml"
    path.write_text('<robot name="r"><link name="a"/></robot>')
    with pytest.raises(ModelError, match=r"robot\.xml: root element is <robot>, expected <mujoco>"):
        load_body(path)


def test_the_world_option_is_for_mjcf_files_only(models_dir: Path) -> None:
    with pytest.raises(
        ModelError, match=r"world option reads the environment of a \.xml \(MuJoCo's MJCF\) file; this is a \.wrl file"
    ):
        load_body(models_dir / "openhrp3/model/box2.wrl", world=True)


def test_a_file_of_only_an_environment_says_how_to_load_it(tmp_path: Path) -> None:
    path = tmp_path / "ground.xml"
    path.write_text('<mujoco><worldbody><geom type="plane" size="1 1 1"/></worldbody></mujoco>')
    with pytest.raises(ModelError, match="world: true"):
        load_body(path)
    assert load_body(path, world=True).links[0].shapes[0].kind == "plane"


def test_unnamed_elements_are_found_by_their_place_outside_the_defaults(tmp_path: Path) -> None:
    path = tmp_path / "unnamed.xml"
    path.write_text(
        "<mujoco>\n"
        '  <default><geom type="sphere" size=".1"/><motor gear="2"/></default>\n'
        '  <worldbody><body><joint type="hinge"/><geom/><site name="s"/>\n'
        '    <geom type="ellipsoid" size=".1 .2 .3"/>\n'
        "  </body></worldbody>\n"
        '  <actuator><motor site="s" gear="1 0 0 0 0 0"/></actuator>\n'
        "</mujoco>\n"
    )
    listed = sorted(load_body(path).metadata["mujoco_only"])
    assert listed[0].startswith(f"{path}:4: /mujoco/worldbody/body/geom[2]: an ellipsoid geom")
    assert listed[1].startswith(f"{path}:6: /mujoco/actuator/motor: an actuator acting on a site")
