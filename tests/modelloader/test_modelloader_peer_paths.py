"""What a modelloader tells a peer about paths it gave: the folders are checked first, only the
peer's own path is named, ``~`` means nothing, and bad paths are refused naming the field."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from modelloader_helpers import wait_registered
from process_helpers import HRPSIM, spawn

from hrpsim.client import Client
from hrpsim.errors import AccessDenied, HrpsimError, RequestError

SECRET_URDF = '<robot name="sekrit"><link name="base"/></robot>\n'


@pytest.fixture
def loader(nameserver: str, tmp_path: Path) -> Iterator[tuple[Client, Path, Path]]:
    root, outside = tmp_path / "models", tmp_path / "elsewhere"
    root.mkdir()
    outside.mkdir()
    proc = spawn(
        ["run", "modelloader", "--nameserver", nameserver, "--model-root", str(root)],
        tmp_path / "modelloader.log",
        env={"HRPSIM_MODEL_ROOTS": ""},  # the one folder given, not the test's whole folder
    )
    try:
        with Client(wait_registered(nameserver, "modelloader", proc), peer="modelloader", timeout=30.0) as client:
            yield client, root, outside
    finally:
        proc.stop()


def _refusal(client: Client, path: str) -> HrpsimError:
    with pytest.raises(HrpsimError) as refused:
        client.call("load", path=path)
    return refused.value


def test_a_link_leading_out_of_the_folders_is_refused_naming_only_the_link(loader) -> None:
    client, root, outside = loader
    for suffix in (".urdf", ".dae", ".wrl"):
        target = outside / f"secret{suffix}"
        target.write_text(SECRET_URDF)
        (root / f"link{suffix}").symlink_to(target)
        error = _refusal(client, str(root / f"link{suffix}"))
        assert isinstance(error, AccessDenied), error
        assert str(root / f"link{suffix}") in error.message and "outside the folders" in error.message
        assert str(outside) not in error.message, error.message


def test_a_path_outside_the_folders_is_refused_before_its_format_is_looked_at(loader) -> None:
    client, _, outside = loader
    (outside / "notes.txt").write_text("not a model")
    for path in ("/etc/passwd", str(outside / "notes.txt"), str(outside / "missing.wrl")):
        error = _refusal(client, path)
        assert isinstance(error, AccessDenied) and "outside the folders" in error.message, error
        assert "format" not in error.message and "no such file" not in error.message


def test_a_tilde_is_not_expanded(loader) -> None:
    client, _, _ = loader
    error = _refusal(client, "~/robot.wrl")
    assert isinstance(error, AccessDenied) and "'load': ~/robot.wrl: model file outside" in error.message, error
    assert f"{Path.home()}/robot.wrl" not in error.message


def test_a_path_with_a_nul_character_is_refused_naming_the_field(loader) -> None:
    client, root, _ = loader
    with pytest.raises(RequestError, match="NUL") as refused:
        client.call("load", path=f"{root}/a\0b.wrl")
    assert refused.value.field == "path"


def test_a_folder_given_as_a_model_is_refused_and_the_service_goes_on(loader) -> None:
    client, root, _ = loader
    (root / "folder.wrl").mkdir()
    error = _refusal(client, str(root / "folder.wrl"))
    assert isinstance(error, AccessDenied) and "is a folder" in error.message, error
    (root / "ok.urdf").write_text(SECRET_URDF)
    assert client.call("load", path=str(root / "ok.urdf"))["name"] == "sekrit"


def test_model_info_of_a_folder_is_an_error_not_a_traceback(tmp_path: Path) -> None:
    (tmp_path / "robot.wrl").mkdir()
    done = subprocess.run(
        [*HRPSIM, "model", "info", str(tmp_path / "robot.wrl")], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 1
    assert "Traceback" not in done.stderr and "is a folder" in done.stderr, done.stderr
