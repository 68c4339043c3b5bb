"""Which ticks carry a new range or vision frame: the sensor's rate, exactly, from tick 0."""

from __future__ import annotations

import pytest

from hrpsim.errors import ConfigError, NotFound
from hrpsim.simserver.sensor_schedule import SensorSchedule


def _ticks(schedule: SensorSchedule, name: str, ticks: int) -> list[int]:
    return [k for k in range(ticks) if name in schedule.due(k)]


def test_a_30_fps_camera_at_1_ms_gives_30_frames_a_second_from_tick_0() -> None:
    schedule = SensorSchedule(0.001, {"camera": 30.0, "laser": 10.0})
    camera = _ticks(schedule, "camera", 3000)
    assert camera[:4] == [0, 34, 67, 100]
    assert len(camera) == 90
    assert _ticks(schedule, "laser", 3000) == list(range(0, 3000, 100))


def test_a_rate_above_the_tick_rate_gives_a_frame_every_tick() -> None:
    schedule = SensorSchedule(0.005, {"fast": 1000.0})
    assert _ticks(schedule, "fast", 50) == list(range(50))


def test_a_switched_off_sensor_produces_nothing_until_switched_on() -> None:
    schedule = SensorSchedule(0.001, {"camera": 30.0})
    schedule.switch("camera", on=False)
    assert _ticks(schedule, "camera", 1000) == []
    schedule.switch("camera", on=True)
    assert _ticks(schedule, "camera", 101) == [0, 34, 67, 100]
    with pytest.raises(NotFound, match="no range or vision sensor named 'nose'"):
        schedule.switch("nose", on=False)


def test_a_rate_that_is_not_positive_names_the_sensor() -> None:
    with pytest.raises(ConfigError, match="sensor 'camera'"):
        SensorSchedule(0.001, {"camera": 0.0})
