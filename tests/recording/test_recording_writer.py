"""The recorder's writer process from the Python API: one per run, gone when the run ends, and a
simulation that goes on when its writer dies. Real processes, real files."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest
import zstandard
from mcap.reader import make_reader
from mcap.records import Chunk
from mcap.stream_reader import StreamReader
from process_helpers import REPO

import hrpsim
from hrpsim.errors import RecordingError
from hrpsim.recording import schemas
from hrpsim.recording.handoff import HOLD_FRAMES
from hrpsim.recording.mcap_file import ZSTD_LEVEL
from hrpsim.recording.reader import open_recording
from hrpsim.recording.writer import Recorder

STAND = REPO / "examples" / "sample_stand.yaml"  # no controller: the robot holds its pose


def _writers() -> list[psutil.Process]:
    """This process's recording writers."""
    return [
        child
        for child in psutil.Process().children()
        if any("hrpsim.recording.writer_process" in part for part in child.cmdline())
    ]


def _states(path: Path) -> list[dict]:
    with path.open("rb") as stream:
        reader = make_reader(stream)
        return [json.loads(m.data) for _, _, m in reader.iter_messages(topics=[schemas.state_topic("robot")])]


def _wait_for_ticks(path: Path, timeout: float = 60.0) -> None:
    """Until the writer has put a chunk of ticks into the file (it writes on its own time)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            open_recording(path)
            return
        except RecordingError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def test_each_run_has_its_writer_and_none_outlives_the_simulation(tmp_path: Path) -> None:
    out = tmp_path / "api.mcap"
    assert _writers() == []
    with hrpsim.Simulation(STAND, observers=[Recorder(out)]) as sim:
        first = _writers()
        assert len(first) == 1
        sim.step(20)
        sim.reset()  # the first run's writer finishes api.mcap on its own; the next goes to api.1.mcap
        second = [w for w in _writers() if w.pid != first[0].pid]
        assert len(second) == 1
        sim.step(30)
    assert _writers() == []
    assert not first[0].is_running() and not second[0].is_running()
    assert [s["tick"] for s in _states(out)] == list(range(20))  # the reset came before a final state was read
    assert [s["tick"] for s in _states(out.with_suffix(".1.mcap"))] == list(range(31))  # and the final state
    second = open_recording(out.with_suffix(".1.mcap"))
    assert second.complete and second.metadata[schemas.META_SUMMARY]  # Simulation.close ends the run


def test_a_reset_does_not_wait_for_the_last_runs_writer(tmp_path: Path) -> None:
    """The last run's writer is stopped (SIGSTOP) when the simulation resets: the reset returns and
    the next run steps while that writer cannot write a byte; continued, it finishes its file whole,
    and closing the simulation waits for it. (A short run: all of it fits in the pipe.)"""
    out = tmp_path / "held.mcap"
    with hrpsim.Simulation(STAND, observers=[Recorder(out)]) as sim:
        sim.step(20)
        (first,) = _writers()
        first.suspend()
        try:
            sim.reset()
            sim.step(50)
            assert first.status() == psutil.STATUS_STOPPED  # the reset went on without it
        finally:
            first.resume()
    assert not first.is_running() and _writers() == []
    held = open_recording(out)
    assert held.complete and [s["tick"] for s in _states(out)] == list(range(20))
    assert [s["tick"] for s in _states(out.with_suffix(".1.mcap"))] == list(range(51))


def test_a_simulation_goes_on_when_its_writer_dies(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    out = tmp_path / "lost.mcap"
    with hrpsim.Simulation(STAND, observers=[Recorder(out, flush_every_s=0.05)]) as sim:
        sim.step(200)
        _wait_for_ticks(out)
        (writer,) = _writers()
        writer.kill()
        writer.wait(30)
        with caplog.at_level(logging.ERROR, logger="hrpsim.recording"):
            sim.step(200)  # the first tick after the death finds the pipe closed
        assert sim.tick == 400
    assert any("writer process is gone" in r.getMessage() for r in caplog.records)
    rec = open_recording(out)  # what the writer had written before it died reads back
    assert not rec.complete and rec.cut_note
    assert rec.series("robot").time[0] == 0.0


def test_chunks_are_compressed_at_the_writers_zstd_level(tmp_path: Path) -> None:
    """mcap's writer takes no zstd level; the writer process hands it one (ZSTD_LEVEL, faster and
    smaller than the library's level 3). Each chunk of the file is exactly that level's output."""
    out = tmp_path / "level.mcap"
    with hrpsim.Simulation(STAND, observers=[Recorder(out)]) as sim:
        sim.step(300)
    with out.open("rb") as stream:
        chunks = [r for r in StreamReader(stream, emit_chunks=True).records if isinstance(r, Chunk)]
    assert chunks and all(c.compression == "zstd" for c in chunks)
    for chunk in chunks:
        data = zstandard.ZstdDecompressor().decompress(chunk.data, max_output_size=chunk.uncompressed_size)
        assert zstandard.ZstdCompressor(level=ZSTD_LEVEL).compress(data) == chunk.data
    assert ZSTD_LEVEL != 3  # the library's own level would make this test pass without the substitution


SCRIPT = """
import sys, time
import hrpsim
from hrpsim.recording.writer import Recorder
with hrpsim.Simulation(sys.argv[1], observers=[Recorder(sys.argv[2])]) as sim:
    sim.run(until=0.5)
    print("ran", sim.tick, flush=True)
    time.sleep(120)
"""


def test_simulation_run_hands_every_tick_over_before_it_returns(tmp_path: Path) -> None:
    """A script killed after ``Simulation.run`` returned: its file has every tick the run made
    (the recorder holds up to 16 ticks between pipe writes; ``run`` hands them over)."""
    out = tmp_path / "script.mcap"
    script = subprocess.Popen(
        [sys.executable, "-c", SCRIPT, str(STAND), str(out)],
        stdout=subprocess.PIPE,
        text=True,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    try:
        line = script.stdout.readline().split()
        writers = psutil.Process(script.pid).children()
    finally:
        script.kill()
        script.wait(30)
    assert line[0] == "ran" and int(line[1]) % HOLD_FRAMES != 0  # some ticks were held
    _, alive = psutil.wait_procs(writers, timeout=60)
    assert not alive
    assert [s["tick"] for s in _states(out)] == list(range(int(line[1])))
