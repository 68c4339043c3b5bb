"""A served modelloader outlives any body file: a few lines of aliases, SubBodies that include the
next twice, thousands of levels of nesting are errors naming the file; a load past its deadline
or its memory bound is an error while the service answers on; and it answers ``ping`` while a
load runs. Each through a real ``hrpsim run modelloader``; the files are written by the tests."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from modelloader_helpers import modelloader_process

from hrpsim.client import Client
from hrpsim.errors import HrpsimError, ModelError

HEADER = "format: ChoreonoidBody\nformatVersion: 2.0\nname: probe\n"
SMALL = HEADER + "links:\n  - name: base\n    mass: 1\n"


def alias_bomb(folder: Path) -> Path:
    """40 lines of aliases, each naming the one before twice: 2^40 elements once expanded."""
    lines = [HEADER + "x0: &x0 {type: Transform}"]
    lines += [f"x{k}: &x{k} {{type: Transform, elements: [*x{k - 1}, *x{k - 1}]}}" for k in range(1, 40)]
    path = folder / "aliases.body"
    path.write_text("\n".join(lines) + "\nlinks:\n  - name: base\n    elements: [*x39]\n")
    return path


def sub_body_bomb(folder: Path, depth: int = 16) -> Path:
    """``depth`` body files, each including the next twice: 2^depth SubBodies once expanded."""
    for k in range(depth):
        subs = "".join(
            f"  - {{type: SubBody, uri: n{k + 1}.body, parent: base, prefix: {side}{k}_}}\n"
            for side in ("a", "b")
            if k + 1 < depth
        )
        (folder / f"n{k}.body").write_text(HEADER + "links:\n  - name: base\n" + subs)
    return folder / "n0.body"


def deeply_nested(folder: Path, opening: str, closing: str, levels: int = 10_000) -> Path:
    path = folder / "nested.body"
    path.write_text(SMALL + "    extra: " + opening * levels + "1" + closing * levels + "\n")
    return path


def long_array(folder: Path, megabytes: int = 16) -> Path:
    """One link with a flow list of numbers ``megabytes`` long: slow to read, and large in memory."""
    path = folder / "array.body"
    count = megabytes * 1024 * 1024 // 6
    path.write_text(SMALL + "    extra: [" + ", ".join(["0.25"] * count) + "]\n")
    return path


def load_error(client: Client, path: Path) -> HrpsimError:
    with pytest.raises(HrpsimError) as refused:
        client.call("load", path=str(path))
    return refused.value


@pytest.mark.parametrize(
    "write, expected",
    [
        (alias_bomb, "aliases are expanded"),
        (sub_body_bomb, "SubBodies in all"),
        (lambda folder: deeply_nested(folder, "{a: ", "}"), "nested more than 100 levels"),
        (lambda folder: deeply_nested(folder, "[", "]"), "nested more than 100 levels"),
        (lambda folder: deeply_nested(folder, "{type: Transform, elements: ", "}"), "nested more than 100 levels"),
    ],
    ids=["aliases", "SubBodies", "maps", "lists", "elements"],
)
def test_expansion_and_nesting_past_the_bounds_are_errors_naming_the_file(
    nameserver: str, tmp_path: Path, write, expected: str
) -> None:
    path = write(tmp_path)
    with (
        modelloader_process(nameserver, tmp_path) as proc,
        Client(proc.address, peer="modelloader", timeout=120) as client,
    ):
        error = load_error(client, path)
        assert isinstance(error, ModelError) and expected in error.message, error
        assert str(tmp_path) in error.message
        assert client.call("ping")["kind"] == "modelloader"


def test_the_service_answers_while_a_load_runs(nameserver: str, tmp_path: Path) -> None:
    big = long_array(tmp_path)
    outcome: list[object] = []
    with modelloader_process(nameserver, tmp_path, args=("--load-timeout", "600")) as proc:

        def load() -> None:
            with Client(proc.address, peer="modelloader", timeout=900) as loader:
                try:
                    outcome.append(loader.call("load", path=str(big)))
                except HrpsimError as exc:  # the service stopped under it
                    outcome.append(exc)

        running = threading.Thread(target=load, daemon=True)
        running.start()
        with Client(proc.address, peer="modelloader", timeout=60) as client:
            assert client.call("ping")["kind"] == "modelloader"
            answered_while_loading = not outcome
            small = tmp_path / "small.body"
            small.write_text(SMALL)
            assert client.call("load", path=str(small))["name"] == "probe"  # a second worker reads it
        assert answered_while_loading, outcome
    running.join(60)


@pytest.mark.parametrize(
    "bound, megabytes, expected",
    [
        (("--load-timeout", "1"), 16, "{big}: reading took longer than 1 s"),  # a minute's reading, at least
        (("--load-memory", "128", "--load-timeout", "600"), 2, "{big}: not enough memory"),  # it takes 300 MB
    ],
    ids=["deadline", "memory"],
)
def test_a_load_past_its_bound_is_an_error_and_the_service_goes_on(
    nameserver: str, tmp_path: Path, bound: tuple[str, ...], megabytes: int, expected: str
) -> None:
    big = long_array(tmp_path, megabytes)
    with (
        modelloader_process(nameserver, tmp_path, args=bound) as proc,
        Client(proc.address, peer="modelloader", timeout=300) as client,
    ):
        error = load_error(client, big)
        assert isinstance(error, ModelError) and expected.format(big=big) in error.message, error
        (tmp_path / "small.body").write_text(SMALL)
        assert client.call("load", path=str(tmp_path / "small.body"))["name"] == "probe"
        assert client.call("ping")["kind"] == "modelloader"
