"""Names belong to whoever registered them: a real nameserver process, a real service registered
with it, and a second client that knows everything ``list`` shows."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from modelloader_helpers import modelloader_process

from hrpsim.errors import AccessDenied, NotFound
from hrpsim.naming import NameClient, Registration


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


def _wait_until(condition, what: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() >= deadline:
            raise AssertionError(f"{what} did not happen within {timeout} s")
        time.sleep(0.02)


def test_a_registration_waits_for_a_name_another_process_still_holds(nameserver: str) -> None:
    """A controller attached in place of another of the same name: the old one holds the name
    until it stops, and the newcomer takes it then instead of failing."""
    old = Registration("hold", "controller", "tcp://127.0.0.1:1", nameserver=nameserver)
    old.start()
    newcomer = Registration("hold", "controller", "tcp://127.0.0.1:2", nameserver=nameserver)
    with pytest.raises(AccessDenied, match="already registered by another process"):
        newcomer.start()  # by default a taken name is an error, as before
    try:
        newcomer.start(wait_if_taken=True)
        with NameClient(nameserver) as ns:
            assert not newcomer.registered and ns.resolve("hold")["endpoint"] == "tcp://127.0.0.1:1"
            old.stop()
            _wait_until(lambda: newcomer.registered, "the newcomer's registration")
            assert ns.resolve("hold")["endpoint"] == "tcp://127.0.0.1:2"
    finally:
        old.stop()
        newcomer.stop()
    with NameClient(nameserver) as ns, pytest.raises(NotFound):
        ns.resolve("hold")  # the newcomer let go of what it had taken


def test_a_registration_that_never_got_its_name_does_not_remove_the_holder_s(nameserver: str) -> None:
    holder = Registration("held", "controller", "tcp://127.0.0.1:1", nameserver=nameserver)
    holder.start()
    try:
        waiting = Registration("held", "controller", "tcp://127.0.0.1:2", nameserver=nameserver)
        waiting.start(wait_if_taken=True)
        waiting.stop()
        with NameClient(nameserver) as ns:
            assert ns.resolve("held")["endpoint"] == "tcp://127.0.0.1:1"
    finally:
        holder.stop()
