"""bench/run's report: one reading per figure as a value, repeated readings as median and spread."""

import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))

import harness  # noqa: E402


def test_repeated_readings_are_reported_as_median_and_spread() -> None:
    text = harness.section("demo", "What it measures.", {"ratio": [1.3, 1.1, 1.9]}, "bench/run demo --repeat 3")
    assert "| `demo.ratio` | 1.3 | 1.1 - 1.9 | 3 |" in text
    assert "| figure | median | min - max | runs |" in text


def test_a_single_reading_is_reported_as_its_value() -> None:
    text = harness.section("demo", "What it measures.", {"ratio": [1.25]}, "bench/run demo")
    assert "| `demo.ratio` | 1.25 |" in text
    assert "median" not in text


@pytest.mark.parametrize("repeat", ["0", "-2"])
def test_a_repeat_below_one_is_refused(repeat: str) -> None:
    done = subprocess.run(
        [sys.executable, str(BENCH / "harness.py"), "codec", "--repeat", repeat, "--no-record"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert "--repeat takes a whole number of at least 1" in done.stderr
