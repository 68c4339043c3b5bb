"""The content-checked body cache, and EXTERNPROTO files counting among the files a load read."""

from __future__ import annotations

from pathlib import Path

from modelloader_helpers import write_model

from hrpsim.modelloader import load_body
from hrpsim.modelloader.cache import BodyCache, file_sha256


def test_entries_live_while_every_file_keeps_its_content(tmp_path: Path) -> None:
    main, part = tmp_path / "a.wrl", tmp_path / "b.wrl"
    main.write_text("one")
    part.write_text("two")
    cache = BodyCache(capacity=4)
    key = (str(main), ())
    cache.put(key, {"name": "a"}, {str(main): file_sha256(str(main)), str(part): file_sha256(str(part))})
    assert cache.get(key) == {"name": "a"}
    part.write_text("TWO")  # same size, new content
    assert cache.get(key) is None and len(cache) == 0
    cache.put(key, {"name": "a"}, {str(main): file_sha256(str(main)), str(part): file_sha256(str(part))})
    part.unlink()
    assert cache.get(key) is None
    assert (cache.hits, cache.misses) == (1, 2)


def test_least_recently_used_entries_go_first(tmp_path: Path) -> None:
    cache = BodyCache(capacity=2)
    for name in "abc":
        if name == "c":
            assert cache.get(("a", ())) is not None  # a is now more recent than b
        cache.put((name, ()), {"name": name}, {})
    assert cache.get(("b", ())) is None
    assert cache.get(("a", ())) == {"name": "a"} and cache.get(("c", ())) == {"name": "c"}
    assert cache.clear() == 2


def test_externproto_definitions_are_read_from_their_file(tmp_path: Path) -> None:
    (tmp_path / "protos.wrl").write_text(
        "#VRML V2.0 utf8\nPROTO Wheel [ field SFFloat radius 0.1 ] { Shape { geometry Sphere { radius IS radius } } }\n"
    )
    path = write_model(
        tmp_path,
        """
EXTERNPROTO Wheel [ field SFFloat radius ] "protos.wrl#Wheel"
DEF R Humanoid { humanoidBody DEF ROOT Joint { jointType "free" children [ Segment { mass 1 children [
  Wheel { radius 0.25 } Wheel { } ] } ] } }
""",
    )
    body = load_body(path)
    assert [s.radius for s in body.root.shapes] == [0.25, 0.1]
    assert body.metadata["files"] == [str(path), str(tmp_path / "protos.wrl")]
    assert set(body.metadata["file_sha256"]) == set(body.metadata["files"])
