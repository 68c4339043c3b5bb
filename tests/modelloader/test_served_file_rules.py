"""A modelloader served with one model root reads nothing else for a peer: not the files an MJCF
model includes, attaches or takes meshes from, nor a body file's meshes, when they lie outside;
a FIFO is refused without blocking; and no refusal tells whether an outside file exists or what
it holds. Hostile files are written into the test's own folder."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from modelloader_helpers import modelloader_process

from hrpsim.client import Client
from hrpsim.errors import AccessDenied, HrpsimError

pytest.importorskip("mujoco")
trimesh = pytest.importorskip("trimesh")

SECRET_BODY = "outsider_secret"
SECRET_XML = f'<mujoco><worldbody><body name="{SECRET_BODY}"><geom size=".1"/></body></worldbody></mujoco>\n'
BAD_SCHEMA_XML = "<mujoco><db>outsider_table</db></mujoco>\n"


def mjcf(inside: str = "", assets: str = "", compiler: str = "") -> str:
    return (
        f'<mujoco model="probe">\n  {compiler}\n  {inside}\n  <asset>{assets}</asset>\n'
        '  <worldbody><body name="base"><geom size=".1"/></body></worldbody>\n</mujoco>\n'
    )


@pytest.fixture
def served(nameserver: str, tmp_path: Path) -> Iterator[tuple[Client, Path, Path]]:
    """(a client of a modelloader reading only ``models``, that folder, a folder outside it)."""
    root, outside = tmp_path / "models", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (outside / "x.xml").write_text(SECRET_XML)
    (outside / "bad.xml").write_text(BAD_SCHEMA_XML)
    trimesh.creation.box(extents=(1.0, 2.0, 3.0)).export(outside / "part.stl")
    with (
        modelloader_process(nameserver, tmp_path, roots=[root]) as proc,
        Client(proc.address, peer="modelloader", timeout=60.0) as client,
    ):
        yield client, root, outside


def refusal(client: Client, path: Path) -> HrpsimError:
    with pytest.raises(HrpsimError) as refused:
        client.call("load", path=str(path))
    return refused.value


def assert_refused_outside(error: HrpsimError, *leaks: str) -> None:
    assert isinstance(error, AccessDenied) and "outside the folders" in error.message, error
    for leak in (SECRET_BODY, "outsider_table", *leaks):
        assert leak not in error.message, error.message


@pytest.mark.parametrize(
    "model",
    [
        mjcf(inside='<include file="../outside/x.xml"/>'),
        mjcf(inside='<include file="OUTSIDE/x.xml"/>'),  # an absolute path
        mjcf(inside='<include file="../outside/bad.xml"/>'),
        mjcf(compiler='<compiler meshdir="../outside"/>', assets='<mesh name="m" file="part.stl"/>'),
        mjcf(compiler='<compiler assetdir="OUTSIDE"/>', assets='<mesh name="m" file="part.stl"/>'),
        mjcf(assets='<mesh name="m" file="OUTSIDE/part.stl"/>'),
        mjcf(assets='<hfield name="h" file="../outside/part.stl" size="1 1 1 .1"/>'),
        mjcf(assets='<model name="kid" file="../outside/x.xml"/>'),
    ],
    ids=["include", "absolute include", "include of a non-MJCF", "meshdir", "assetdir", "mesh", "hfield", "model"],
)
def test_mjcf_files_outside_the_root_are_refused_unread(served, model: str) -> None:
    client, root, outside = served
    path = root / "probe.xml"
    path.write_text(model.replace("OUTSIDE", str(outside)))
    error = refusal(client, path)
    assert_refused_outside(error)
    assert str(path) in error.message  # the file that names it, and where


def test_an_include_tree_inside_the_root_still_loads_with_its_meshes_and_models(served) -> None:
    client, root, _ = served
    (root / "parts" / "meshes").mkdir(parents=True)
    trimesh.creation.box(extents=(1.0, 2.0, 3.0)).export(root / "parts" / "meshes" / "box.stl")
    (root / "parts" / "assets.xml").write_text('<mujoco><include file="parts/more.xml"/></mujoco>\n')
    (root / "parts" / "more.xml").write_text('<mujoco><asset><mesh name="box" file="box.stl"/></asset></mujoco>\n')
    (root / "parts" / "arm.xml").write_text(
        '<mujoco model="arm"><worldbody><body name="hand"><geom size=".05"/></body></worldbody></mujoco>\n'
    )
    (root / "robot.xml").write_text(
        '<mujoco model="robot">\n  <compiler meshdir="parts/meshes"/>\n  <include file="parts/assets.xml"/>\n'
        '  <asset><model name="arm" file="parts/arm.xml"/></asset>\n'
        '  <worldbody><body name="base"><geom type="mesh" mesh="box"/>\n'
        '    <attach model="arm" body="hand" prefix="arm_"/></body></worldbody>\n</mujoco>\n'
    )
    body = client.call("load", path=str(root / "robot.xml"))
    assert [link["name"] for link in body["links"]] == ["base", "arm_hand"]
    assert body["links"][0]["shapes"][0]["kind"] == "mesh"


def test_a_mesh_linked_out_of_the_root_is_refused_naming_the_link_only(served) -> None:
    client, root, outside = served
    (root / "part.stl").symlink_to(outside / "part.stl")
    (root / "probe.xml").write_text(mjcf(assets='<mesh name="m" file="part.stl"/>'))
    error = refusal(client, root / "probe.xml")
    assert_refused_outside(error, str(outside))
    assert str(root / "part.stl") in error.message


@pytest.mark.parametrize("reference", ['<include file="fifo.xml"/>', '<asset><mesh name="m" file="fifo.stl"/></asset>'])
def test_a_fifo_an_mjcf_names_is_refused_and_the_service_answers_on(served, reference: str) -> None:
    client, root, _ = served
    fifo = root / ("fifo.xml" if "include" in reference else "fifo.stl")
    os.mkfifo(fifo)
    (root / "probe.xml").write_text(mjcf(inside=reference))
    error = refusal(client, root / "probe.xml")
    assert isinstance(error, AccessDenied) and "not a regular file (a FIFO)" in error.message, error
    assert client.call("ping")["kind"] == "modelloader"


def test_a_body_mesh_outside_the_root_is_refused_alike_whether_or_not_it_exists(served) -> None:
    client, root, outside = served
    messages = []
    for name in ("part.stl", "missing.stl"):
        (root / "probe.body").write_text(
            "format: ChoreonoidBody\nformatVersion: 2.0\nname: probe\nlinks:\n  - name: base\n"
            f"    elements:\n      - {{ type: Resource, uri: {outside / name} }}\n"
        )
        error = refusal(client, root / "probe.body")
        messages.append(error.message.replace(name, "NAME"))
        assert "outside the folders" in error.message and "no such file" not in error.message, error.message
    assert messages[0] == messages[1]


def test_a_urdf_mesh_search_does_not_look_outside_the_root(served) -> None:
    """A relative mesh path is looked for in the folders above the file too: never above the root."""
    client, root, _ = served
    messages = []
    for name in ("part.stl", "missing.stl"):
        (root / "probe.urdf").write_text(
            f'<robot name="probe"><link name="base"><collision><geometry><mesh filename="outside/{name}"/>'
            "</geometry></collision></link></robot>\n"
        )
        error = refusal(client, root / "probe.urdf")
        messages.append(error.message.replace(name, "NAME"))
        assert "not found" in error.message and "outside the folders" not in error.message, error.message
    assert messages[0] == messages[1]
