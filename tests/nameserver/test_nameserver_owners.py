"""Names belong to whoever registered them: a real nameserver process, a real service registered
with it, and a second client that knows everything ``list`` shows."""

from __future__ import annotations

from pathlib import Path

import pytest
from modelloader_helpers import modelloader_process

from hrpsim.errors import AccessDenied
from hrpsim.naming import NameClient


def test_list_and_resolve_never_show_the_owner_secret(nameserver: str, tmp_path: Path) -> None:
    with NameClient(nameserver) as ns:
        ns.register("mine", "test", "tcp://127.0.0.1:1", owner="s3cret-owner-token")
        shown = repr(ns.list()) + repr(ns.resolve("mine"))
    assert "s3cret-owner-token" not in shown and "owner" not in shown


def test_a_stranger_cannot_replace_refresh_or_remove_a_running_service(nameserver: str, tmp_path: Path) -> None:
    with modelloader_process(nameserver, tmp_path) as loader, NameClient(nameserver) as stranger:
        entry = stranger.resolve("modelloader")
        guesses = [str(v) for v in entry.values()] + [str(v) for v in entry["metadata"].values()]
        for guess in guesses:
            with pytest.raises(AccessDenied):
                stranger.register("modelloader", "modelloader", "tcp://127.0.0.1:9", owner=guess)
            with pytest.raises(AccessDenied):
                stranger.heartbeat("modelloader", owner=guess)
            with pytest.raises(AccessDenied):
                stranger.unregister("modelloader", owner=guess)
        assert stranger.resolve("modelloader")["endpoint"] == loader.address


def test_the_owner_replaces_and_removes_its_own_name(nameserver: str) -> None:
    with NameClient(nameserver) as ns:
        ns.register("mine", "test", "tcp://127.0.0.1:1", owner="first-secret")
        ns.register("mine", "test", "tcp://127.0.0.1:2", owner="first-secret")
        assert ns.resolve("mine")["endpoint"] == "tcp://127.0.0.1:2"
        ns.unregister("mine", owner="first-secret")
        assert all(e["name"] != "mine" for e in ns.list())
