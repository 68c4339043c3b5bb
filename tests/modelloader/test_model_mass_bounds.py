"""Masses beyond any robot's (1e308 kg makes the body's total infinite) are refused with the file
and line; a negative inertia is a warning of ``model info``."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from modelloader_helpers import write_model
from process_helpers import HRPSIM

from hrpsim.errors import ModelError
from hrpsim.modelloader import load_body

LINK = (
    '  <link name="{name}">\n'
    '    <inertial><mass value="{mass}"/>\n'
    '      <inertia ixx="{ixx}" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/></inertial>\n'
    "  </link>\n"
)


def _urdf(folder: Path, *, mass: str, ixx: str = "0.1") -> Path:
    path = folder / "heavy.urdf"
    path.write_text(
        '<robot name="heavy">\n'
        + LINK.format(name="base", mass=mass, ixx=ixx)
        + LINK.format(name="tip", mass=mass, ixx=ixx)
        + '  <joint name="j" type="fixed"><parent link="base"/><child link="tip"/></joint>\n'
        "</robot>\n"
    )
    return path


@pytest.mark.parametrize("mass", ["1e308", "2e9"])
def test_a_urdf_mass_beyond_the_bound_is_refused_with_its_line(tmp_path: Path, mass: str) -> None:
    path = _urdf(tmp_path, mass=mass)
    with pytest.raises(ModelError, match=rf"{path}:3: .*link\[1\]\(name='base'\)/inertial/mass: mass .* is beyond"):
        load_body(path)


def test_a_vrml_mass_beyond_the_bound_is_refused_with_its_line(tmp_path: Path) -> None:
    path = write_model(
        tmp_path,
        'DEF R Humanoid { humanoidBody [ DEF J Joint { jointType "free" children [\n'
        "  DEF S Segment { mass 1e308 }\n"
        "] } ] }\n",
    )
    line = path.read_text().splitlines().index("  DEF S Segment { mass 1e308 }") + 1
    with pytest.raises(ModelError, match=rf"{path}:{line}:.*mass 1e\+308 is beyond 1e\+09 kg"):
        load_body(path)


def test_a_heavy_but_possible_mass_loads_with_a_finite_total(tmp_path: Path) -> None:
    body = load_body(_urdf(tmp_path, mass="1e6"))
    assert sum(link.mass for link in body.links) == pytest.approx(2e6)


def test_model_info_warns_of_a_negative_inertia(tmp_path: Path) -> None:
    path = _urdf(tmp_path, mass="1", ixx="-1")
    done = subprocess.run([*HRPSIM, "model", "info", str(path)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert f"warning: {path}:4:" in done.stdout + done.stderr
    assert "inertia is not positive semi-definite" in done.stdout + done.stderr
