"""The CDR bytes of the messages a ROS 2 bag gets every tick, written into a template.

A topic's names, frame ids and array lengths stay the same from tick to tick, and so does the
place of every number in its messages' bytes. A message is laid out once (``Layout``); its
template is copied for each message and the stamps and float64 values are written in, for many
messages at a time (``Template.fill``).
Building rosbags message objects and serializing them, message by message, was most of the
writer process's work per tick with a bag (docs/recording.md, "What it costs").

The layout is CDR as rosbags writes it (little endian, XCDR1): a 4-byte encapsulation header,
then every primitive at a multiple of its size counted from the header's end; a string is its
u32 length (the NUL included), its UTF-8 and a NUL; a sequence is its u32 count and its
elements, and a float64 sequence is aligned to 8 only when it holds any.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike

ENCAPSULATION = b"\x00\x01\x00\x00"  # CDR, little endian
TRANSFORM_VALUES = 7  # translation x y z, rotation x y z w
_TIME = np.dtype([("sec", "<i4"), ("nanosec", "<u4")])  # builtin_interfaces/Time


class Template:
    """One message's bytes with its stamps and float64 values left to fill."""

    def __init__(self, data: bytes, stamps: list[int], runs: list[tuple[int, int]]) -> None:
        self.size = len(data)
        self._data = np.frombuffer(data, dtype=np.uint8)
        self._stamps = stamps  # the byte offset of each stamp
        # (where in the message, where in its values' bytes) of each run of float64 values
        self._runs: list[tuple[slice, slice]] = []
        done = 0
        for offset, count in runs:
            self._runs.append((slice(offset, offset + 8 * count), slice(8 * done, 8 * (done + count))))
            done += count
        self.values = done

    def fill(self, stamps_ns: Sequence[int], values: ArrayLike = ()) -> list[bytes]:
        """One message per stamp (every header of it stamped so), each with its row of ``values``
        (rows of ``self.values`` numbers, in field order; a None among them is NaN, as in a
        rosbags message). Many messages at a time: numpy's cost per call is paid per batch."""
        count = len(stamps_ns)
        data = np.tile(self._data, (count, 1))
        stamps = np.empty(count, dtype=_TIME)
        stamps["sec"], stamps["nanosec"] = np.divmod(np.asarray(stamps_ns, dtype=np.int64), 1_000_000_000)
        stamp_bytes = stamps.view(np.uint8).reshape(count, _TIME.itemsize)
        for offset in self._stamps:
            data[:, offset : offset + _TIME.itemsize] = stamp_bytes
        if self.values:
            rows = np.ascontiguousarray(values, dtype="<f8")
            if rows.shape != (count, self.values):  # a row of another length would shift every field after it
                raise ValueError(f"values of shape {rows.shape} for {count} messages of {self.values}")
            value_bytes = rows.view(np.uint8)
            for into, taken in self._runs:
                data[:, into] = value_bytes[:, taken]
        flat = data.tobytes()
        return [flat[k : k + self.size] for k in range(0, count * self.size, self.size)]


class Layout:
    """A message's fields in order, building its Template."""

    def __init__(self) -> None:
        self._data = bytearray(ENCAPSULATION)
        self._stamps: list[int] = []
        self._runs: list[tuple[int, int]] = []  # (byte offset, how many float64s)

    def stamp(self) -> Layout:
        """A builtin_interfaces/Time: int32 sec, uint32 nanosec."""
        self._align(4)
        self._stamps.append(len(self._data))
        self._data += bytes(_TIME.itemsize)
        return self

    def string(self, text: str) -> Layout:
        raw = text.encode() + b"\0"
        self.count(len(raw))
        self._data += raw
        return self

    def count(self, n: int) -> Layout:
        """A uint32: a sequence's length, or a string's."""
        self._align(4)
        self._data += struct.pack("<I", n)
        return self

    def strings(self, texts: Sequence[str]) -> Layout:
        self.count(len(texts))
        for text in texts:
            self.string(text)
        return self

    def float64s(self, n: int) -> Layout:
        """``n`` float64 values to fill: a fixed array's, a nested message's fields, or (after
        its ``count``) a sequence's."""
        if n:
            self._align(8)
            self._runs.append((len(self._data), n))
            self._data += bytes(8 * n)
        return self

    def template(self) -> Template:
        return Template(bytes(self._data), self._stamps, self._runs)

    def _align(self, size: int) -> None:
        self._data += bytes(-(len(self._data) - len(ENCAPSULATION)) % size)


def header(frame_id: str) -> Layout:
    """A layout that starts with a std_msgs/Header."""
    return Layout().stamp().string(frame_id)


def joint_state(names: Sequence[str], lengths: tuple[int, int, int]) -> Template:
    """sensor_msgs/JointState, no frame; values: positions, velocities, efforts."""
    layout = header("").strings(names)
    for n in lengths:
        layout.count(n).float64s(n)
    return layout.template()


def tf_message(frames: Sequence[tuple[str, str]]) -> Template:
    """tf2_msgs/TFMessage of (parent, child) frames; values: TRANSFORM_VALUES per transform."""
    layout = Layout().count(len(frames))
    for parent, child in frames:
        layout.stamp().string(parent).string(child).float64s(TRANSFORM_VALUES)
    return layout.template()


def stamped(frame_id: str, values: int) -> Template:
    """A message of a std_msgs/Header and then ``values`` float64s only, as the readings engines
    measure are carried (hrpsim.sensor_types.Ros2Message: geometry_msgs/WrenchStamped,
    sensor_msgs/Imu ...)."""
    return header(frame_id).float64s(values).template()


def clock() -> Template:
    """rosgraph_msgs/Clock: only a stamp."""
    return Layout().stamp().template()
