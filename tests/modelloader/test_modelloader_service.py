"""The modelloader service as a real process behind a real nameserver."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest
from modelloader_helpers import MODELS, modelloader_process
from process_helpers import start_nameserver

from hrpsim.bodyinfo import bodies_equal
from hrpsim.client import Client
from hrpsim.errors import ModelError, NotFound, RequestError
from hrpsim.modelloader import load_body
from hrpsim.models import fetch_body


@pytest.fixture
def loader(nameserver: str, tmp_path: Path):
    """A modelloader process of the test's own (its cache counts from zero)."""
    with (
        modelloader_process(nameserver, tmp_path) as proc,
        Client(proc.address, peer="modelloader", timeout=60.0) as client,
    ):
        yield nameserver, client


@pytest.fixture(scope="module")
def shared_loader(tmp_path_factory: pytest.TempPathFactory):
    """One modelloader process (and its nameserver) for the tests that do not count its cache's
    hits and misses: (nameserver, client, a folder it may read)."""
    folder = tmp_path_factory.mktemp("shared-loader")
    nameserver = start_nameserver(folder)
    try:
        with (
            modelloader_process(nameserver.address, folder) as proc,
            Client(proc.address, peer="modelloader", timeout=60.0) as client,
        ):
            yield nameserver.address, client, folder
    finally:
        nameserver.stop()


@pytest.fixture
def shared(shared_loader) -> tuple[str, Client, Path]:
    """The shared modelloader, and a folder of the test's own that it may read."""
    nameserver, client, folder = shared_loader
    return nameserver, client, Path(tempfile.mkdtemp(dir=folder))


@pytest.mark.parametrize(
    "rel",
    [
        "openhrp3/model/sample1.wrl",
        "openhrp3/model/PA10/pa10.main.wrl",
        "openhrp3/model/closed-link-sample.wrl",
        "openhrp3/model/house/house.main.wrl",
    ],
)
def test_body_through_the_service_equals_the_local_load(shared, rel: str) -> None:
    nameserver, _, _ = shared
    remote = fetch_body(MODELS / rel, nameserver=nameserver)
    assert bodies_equal(remote, load_body(MODELS / rel))
    again = fetch_body(MODELS / rel, nameserver=nameserver)  # from the cache this time
    assert bodies_equal(again, remote)


def test_cache_hits_and_file_urls(loader) -> None:
    _, client = loader
    path = MODELS / "openhrp3/model/box.wrl"
    first = client.call("load", path=str(path))
    second = client.call("load", path=path.as_uri())
    assert first["name"] == second["name"] == "box"
    assert client.call("stats") == {"bodies": 1, "hits": 1, "misses": 1}
    assert client.call("clear") == 1
    client.call("load", path=str(path))
    assert client.call("stats")["misses"] == 2


def test_a_changed_inline_is_noticed(loader, tmp_path: Path) -> None:
    nameserver, client = loader
    model = tmp_path / "PA10"
    shutil.copytree(MODELS / "openhrp3/model/PA10", model)
    before = fetch_body(model / "pa10.main.wrl", nameserver=nameserver)
    inline = model / "hand_l.wrl"
    text = inline.read_text()
    assert "Transform {" in text
    inline.write_text(text.replace("Transform {", "Transform { scale 2 2 2", 1))
    after = fetch_body(model / "pa10.main.wrl", nameserver=nameserver)
    hand = after.link_index("HAND_L")
    assert not bodies_equal(before, after)
    grown = after.links[hand].shapes[0].vertices
    assert abs(grown).max() == pytest.approx(2 * abs(before.links[hand].shapes[0].vertices).max())
    assert client.call("stats")["misses"] == 2


def test_a_broken_model_is_an_error_reply_and_the_service_goes_on(shared) -> None:
    nameserver, client, folder = shared
    broken = folder / "broken.wrl"
    broken.write_text("#VRML V2.0 utf8\nDEF X Transform {\n  children [ Shape { geometry Box { size 1 1 } ]\n")
    with pytest.raises(ModelError) as caught:
        fetch_body(broken, nameserver=nameserver)
    assert str(broken) in str(caught.value)
    with pytest.raises(ModelError, match="no such file"):
        client.call("load", path=str(folder / "missing.wrl"))
    with pytest.raises(RequestError, match="unknown option"):
        client.call("load", path=str(broken), options={"strict": True})
    with pytest.raises(RequestError, match="path must be"):
        client.call("load", path=42)
    assert client.call("ping")["kind"] == "modelloader"
    assert fetch_body(MODELS / "openhrp3/model/floor.wrl", nameserver=nameserver).name == "floor"


def test_a_model_error_crosses_the_wire_with_every_problem_and_its_place(shared) -> None:
    _, client, folder = shared
    broken = folder / "two_problems.urdf"
    broken.write_text(
        '<robot name="r">\n  <link name="a"/>\n  <link name="b"/>\n'
        '  <joint name="j" type="revolving">\n    <parent link="a"/><child link="b"/>\n  </joint>\n'
        '  <joint name="k" type="fixed">\n    <parent link="a"/><child link="ghost"/>\n  </joint>\n'
        "</robot>\n"
    )
    with pytest.raises(ModelError) as local:
        load_body(broken)
    with pytest.raises(ModelError) as remote:
        client.call("load", path=str(broken))
    assert len(remote.value.problems) == len(local.value.problems) >= 2
    for theirs, ours in zip(remote.value.problems, local.value.problems, strict=True):
        assert (theirs, theirs.file, theirs.line, theirs.column) == (ours, ours.file, ours.line, ours.column)
        assert theirs.file == str(broken) and theirs.line is not None
    assert {4, 8} <= {p.line for p in remote.value.problems}  # the bad type, the unknown child
    assert "modelloader" in str(remote.value)  # names the peer that failed


def test_lenient_option_reaches_the_loader(shared) -> None:
    _, client, folder = shared
    odd = folder / "odd.wrl"
    odd.write_text((MODELS / "openhrp3/model/box2.wrl").read_text().replace('jointType "free"', 'jointType "hover"'))
    with pytest.raises(ModelError, match="unknown jointType 'hover'"):
        client.call("load", path=str(odd))
    wire = client.call("load", path=str(odd), options={"lenient": True})
    assert wire["links"][0]["joint_type"] == "free"
    assert any("hover" in w for w in wire["metadata"]["warnings"])


def test_fetch_body_names_a_missing_service(nameserver: str) -> None:
    with pytest.raises(NotFound, match=r"'no-such-loader'.*waited 0\.3 s"):
        fetch_body(MODELS / "openhrp3/model/box.wrl", nameserver=nameserver, service="no-such-loader", wait=0.3)


def test_fetch_body_waits_for_a_loader_that_registers_late(tmp_path, nameserver: str) -> None:
    import threading

    from modelloader_helpers import modelloader_process

    box = MODELS / "openhrp3/model/box.wrl"
    result = {}
    fetcher = threading.Thread(target=lambda: result.update(body=fetch_body(box, nameserver=nameserver, wait=60)))
    fetcher.start()  # asks before any modelloader exists
    with modelloader_process(nameserver, tmp_path):
        fetcher.join(60)
    assert result["body"].name == "box"
