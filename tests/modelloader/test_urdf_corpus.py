"""The URDF regression corpus: every robot description shipped by two well-kept PyPI packages
(example-robot-data, and pybullet's pybullet_data) loads with as many links and joints as its
file declares. The few files that use what only one tool has, or lack files, fail with the error
recorded here. docs/formats-urdf-collada.md lists the corpus and its counts."""

from __future__ import annotations

import importlib.metadata
from pathlib import Path

import pytest

from hrpsim.errors import ModelError
from hrpsim.modelloader.urdf import load_urdf
from hrpsim.modelloader.urdf_xml import parse_xml

MOVABLE = ("revolute", "continuous", "prismatic")
# file (relative to its package's folder) -> the error it gives, and why no other tool would do better
EXPECTED_ERRORS = {
    "ur_description/urdf/ur3.urdf": "the robot has no links",  # an empty stub: urdfdom refuses it too
    "humanoid/humanoid.urdf": "unknown joint type 'spherical'",  # PyBullet's own joint type
    "spherical_joint_limit.urdf": "unknown joint type 'spherical'",
    "kuka_iiwa/model_for_sdf.urdf": "meshes/coarse/link_0.stl' not found",  # not shipped in the package
    "torus_deform.urdf": "the robot has no links",  # a PyBullet deformable, not a rigid body
    "toys/concave_box.urdf": "found cdf",  # PyBullet's signed-distance-field geometry
    "random_urdfs/168/168.urdf": "non-finite vertex coordinates",  # a broken mesh in the package
}


def _package_folder(distribution: str, inside: str) -> Path | None:
    try:
        folder = Path(str(importlib.metadata.distribution(distribution).locate_file(inside)))
    except importlib.metadata.PackageNotFoundError:
        return None
    return folder if folder.is_dir() else None


PACKAGES = {
    "example-robot-data": _package_folder("example-robot-data", "cmeel.prefix/share/example-robot-data/robots"),
    "pybullet": _package_folder("pybullet", "pybullet_data"),
}


def _corpus(*, generated: bool) -> list[tuple[str, Path, Path]]:
    files = []
    for package, folder in PACKAGES.items():
        for path in sorted((folder or Path("/nonexistent")).rglob("*.urdf")):
            if ("random_urdfs" in path.parts) == generated:
                files.append((package, folder, path))
    return files


def _declared(path: Path) -> tuple[list[str], int]:
    """(link names, movable joints) as the file declares them."""
    robot = parse_xml(path.read_bytes(), path, "URDF")
    links = [link.get("name") for link in robot.findall("link")]
    return links, sum(1 for joint in robot.findall("joint") if joint.get("type") in MOVABLE)


def _check(folder: Path, path: Path) -> None:
    relative = str(path.relative_to(folder))
    if relative in EXPECTED_ERRORS:
        with pytest.raises(ModelError, match=EXPECTED_ERRORS[relative]):
            load_urdf(path)
        return
    body = load_urdf(path)
    links, movable = _declared(path)
    ground = "world" in links and body.root.name != "world"  # a world link holding the root is the ground
    assert len(body.links) == len(links) - ground, relative
    mimics = sum(1 for link in body.links if link.mimic is not None)
    assert len(body.joints) + mimics == movable, relative
    assert all(warning.startswith(f"{path}:") for warning in body.metadata.get("warnings", []))


@pytest.mark.parametrize(
    ("folder", "path"),
    [
        pytest.param(folder, path, id=f"{package}:{path.relative_to(folder)}")
        for package, folder, path in _corpus(generated=False)
    ],
)
def test_each_robot_description_loads_with_its_links_and_joints(folder: Path, path: Path):
    _check(folder, path)


def test_every_generated_object_of_pybullet_data_loads():
    generated = _corpus(generated=True)
    if not generated:
        pytest.skip("pybullet is not installed (pip install -e .[dev])")
    for _package, folder, path in generated:
        _check(folder, path)


def test_the_corpus_is_there():
    missing = [name for name, folder in PACKAGES.items() if folder is None]
    if missing:
        pytest.skip(f"not installed: {', '.join(missing)} (pip install -e .[dev])")
    assert len(_corpus(generated=False)) >= 150
