"""Each record profile the project file and ``--record-profile`` accept (hrpsim.project.RECORD_PROFILES)
is one implementation in recording/profiles.py, and the mains' help names each one."""

from __future__ import annotations

from pathlib import Path

import pytest

from hrpsim.errors import RecordingError
from hrpsim.project import RECORD_PROFILES, record_profiles_help
from hrpsim.recording.profiles import PROFILES
from hrpsim.recording.writer import Recorder


def test_every_profile_the_kernel_names_is_implemented_once():
    assert list(PROFILES) == list(RECORD_PROFILES)
    assert all(profile.name == name for name, profile in PROFILES.items())


def test_the_help_names_each_profile_and_what_it_writes():
    for name, what in RECORD_PROFILES.items():
        assert f"{name}: {what}" in record_profiles_help()


def test_a_profile_without_an_implementation_is_refused_naming_the_profiles(tmp_path: Path):
    with pytest.raises(RecordingError, match="no record profile 'csv' \\(profiles: hrpsim, ros2\\)"):
        Recorder(tmp_path / "run.mcap", profile="csv")


def test_the_default_profile_writes_nothing_beside_the_file(tmp_path: Path):
    profile = PROFILES["hrpsim"]
    assert profile.place(tmp_path / "run.mcap") is None
    output = profile.open(None, {}, [])
    assert not output.wants("/robots/box/state")
