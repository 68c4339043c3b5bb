"""The files a service reads for a peer: regular files only, under its allowed folders, bounded
in size, and never echoed back in an error. Real modelloader and simulator processes."""

from __future__ import annotations

import os
import shutil
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from modelloader_helpers import MODELS, modelloader_process
from process_helpers import spawn, start_nameserver, wait_registered

from hrpsim.client import Client
from hrpsim.errors import AccessDenied, ModelError
from hrpsim.files import MAX_UNPACKED_BYTES, ReadPolicy, read_model, reading_under

SECRET = "correct-horse-battery-staple"
# A deadline far above what an answer takes: hitting it means the service hung, not that it was slow.
HANG = 20.0


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Client, Path]]:
    """A modelloader whose only allowed folder (besides the corpus and the repository) is ``folder``."""
    folder = tmp_path_factory.mktemp("served")
    ns = start_nameserver(folder)
    try:
        with (
            modelloader_process(ns.address, folder) as proc,
            Client(proc.address, peer="modelloader", timeout=HANG) as client,
        ):
            yield client, folder
    finally:
        ns.stop()


def refused(client: Client, path: Path, error: type[Exception]) -> str:
    """The error message of loading ``path``; the service must still answer afterwards."""
    with pytest.raises(error) as caught:
        client.call("load", path=str(path))
    assert client.call("ping")["kind"] == "modelloader"
    return str(caught.value)


def test_a_fifo_is_refused_without_blocking(served) -> None:
    client, folder = served
    fifo = folder / "pipe.wrl"
    os.mkfifo(fifo)
    assert "FIFO" in refused(client, fifo, AccessDenied)


def test_a_link_to_a_device_is_refused(served) -> None:
    client, folder = served
    device = folder / "zero.wrl"
    device.symlink_to("/dev/zero")
    assert "outside the folders" in refused(client, device, AccessDenied)


def test_a_device_is_refused_even_inside_the_roots() -> None:
    with reading_under(ReadPolicy(roots=(Path("/dev"),))), pytest.raises(AccessDenied, match="character device"):
        read_model("/dev/zero", "model file")


def test_a_path_outside_the_roots_is_refused_without_saying_whether_it_exists(
    served, tmp_path_factory: pytest.TempPathFactory
) -> None:
    client, _ = served
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    present = elsewhere / "box.wrl"
    shutil.copy(MODELS / "openhrp3/model/box.wrl", present)
    absent = elsewhere / "nothing.wrl"
    said_present = refused(client, present, AccessDenied)
    said_absent = refused(client, absent, AccessDenied)
    assert "outside the folders" in said_present
    assert said_present.replace(str(present), "P") == said_absent.replace(str(absent), "P")


def test_a_link_out_of_the_roots_is_refused(served, tmp_path_factory: pytest.TempPathFactory) -> None:
    client, folder = served
    outside = tmp_path_factory.mktemp("outside") / "box.wrl"
    shutil.copy(MODELS / "openhrp3/model/box.wrl", outside)
    link = folder / "link.wrl"
    link.symlink_to(outside)
    assert "outside the folders" in refused(client, link, AccessDenied)


def test_an_inline_of_another_file_does_not_echo_its_contents(served) -> None:
    client, folder = served
    (folder / "secret.wrl").write_text(f"#VRML V2.0 utf8\n{SECRET} {SECRET}\n")
    model = folder / "includes.wrl"
    model.write_text('#VRML V2.0 utf8\nInline { url "secret.wrl" }\n')
    message = refused(client, model, ModelError)
    assert "secret.wrl:2" in message and SECRET not in message


def test_a_zip_bomb_is_refused_at_the_unpacked_limit(served) -> None:
    client, folder = served
    bomb = folder / "bomb.zae"
    chunk = bytes(16 * 1024 * 1024)
    with (
        zipfile.ZipFile(bomb, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as archive,
        archive.open("robot.dae", "w", force_zip64=True) as member,
    ):
        for _ in range(MAX_UNPACKED_BYTES // len(chunk) + 1):
            member.write(chunk)
    assert bomb.stat().st_size < MAX_UNPACKED_BYTES // 100  # small on disk, huge unpacked
    assert "unpacks to more than" in refused(client, bomb, ModelError)


def test_a_doctype_in_a_zae_manifest_is_a_named_error(served) -> None:
    client, folder = served
    archive_path = folder / "entities.zae"
    manifest = (
        '<?xml version="1.0"?>\n<!DOCTYPE dae_root [<!ENTITY a "aaaaaaaaaa">'
        '<!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]>\n<dae_root>&b;</dae_root>\n'
    )
    with zipfile.ZipFile(archive_path, "w") as archive:
        archive.writestr("manifest.xml", manifest)
        archive.writestr("robot.dae", "<COLLADA/>")
    assert "DOCTYPE" in refused(client, archive_path, ModelError)


def test_init_reads_projects_only_from_the_allowed_folders(tmp_path: Path, nameserver: str) -> None:
    shutil.copy(MODELS / "openhrp3/model/box.wrl", tmp_path / "box.wrl")
    project = tmp_path / "project.yaml"
    project.write_text(
        "world: {end_time: 1.0}\nmodels:\n  - {name: box, file: box.wrl, static: true}\nservices: {loader: local}\n"
    )
    secret = tmp_path.parent / f"{tmp_path.name}-secret.yaml"
    secret.write_text(f"{SECRET}: [\n")
    sim = spawn(
        ["run", "simserver", "--project", str(project), "--nameserver", nameserver],
        tmp_path / "simserver.log",
        env={"HRPSIM_MODEL_ROOTS": ""},
    )
    try:
        endpoint = wait_registered(nameserver, "simserver", sim)["endpoint"]
        with Client(endpoint, peer="simserver", timeout=HANG) as client:
            for path in (secret, Path("/dev/null"), Path("/etc/passwd")):
                with pytest.raises(AccessDenied) as caught:
                    client.call("init", project=str(path))
                assert SECRET not in str(caught.value) and "root:" not in str(caught.value)
            fifo = tmp_path / "pipe.yaml"
            os.mkfifo(fifo)
            with pytest.raises(AccessDenied, match="FIFO"):
                client.call("init", project=str(fifo))
            assert client.call("init")["time"] == 0.0  # its own project still loads
    finally:
        sim.stop()
        secret.unlink()
