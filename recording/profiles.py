"""Recording profiles: what a recording writes beside its MCAP file, each profile one
:class:`RecordingProfile`. ``hrpsim`` writes the MCAP file only; ``ros2`` also a ROS 2 bag,
``FILE_ros2/`` (recording/ros2_bag.py). The recorder asks its profile, on the simulator's side, whether
it can run here and where its output goes; the writer process opens the profile's
:class:`ProfileOutput` and hands it the messages it wants. The project file's ``record: {profile:}``,
``--record-profile`` and their help read the kernel's names of the profiles
(hrpsim.project.RECORD_PROFILES), each of which is one entry of :data:`PROFILES`.
"""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path
from typing import Any, Protocol

from hrpsim.bodyinfo import Body
from hrpsim.errors import RecordingError


class ProfileOutput(Protocol):
    """A profile's output in the writer process, fed the recording's messages in file order;
    ``what`` names it in the log (``the ROS 2 bag runs/walk_ros2``)."""

    what: str

    def wants(self, topic: str) -> bool:
        """Whether it takes the decoded JSON messages of ``topic``."""
        ...

    def take(self, topic: str, stamp: int, message: dict[str, Any]) -> None: ...

    def take_link_poses(self, stamp: int, poses: list[Any]) -> None:
        """A tick's link poses as the simulator hands them over (recording/writer.py, ``_LinkPoses``)."""
        ...

    def close(self) -> None:
        """The recording ended: complete the output."""
        ...

    def abandon(self) -> None:
        """The output failed: close what it holds; the MCAP file goes on without it."""
        ...


class RecordingProfile(Protocol):
    """A profile: ``name`` as the project file and ``--record-profile`` write it."""

    name: str

    def check(self) -> None:
        """RecordingError saying what to install, if the profile cannot run here."""
        ...

    def place(self, recording: Path) -> str | None:
        """Where the output of ``recording`` goes, made ready (on the simulator's side, at a run's start)."""
        ...

    def open(self, place: str | None, bodies: dict[str, Body], robots: list[str]) -> ProfileOutput:
        """The output, in the writer process."""
        ...


class _Nothing:
    """The output of a profile that writes nothing beside the MCAP file."""

    what = "nothing"

    def wants(self, topic: str) -> bool:
        return False

    def take(self, topic: str, stamp: int, message: dict[str, Any]) -> None:
        pass

    def take_link_poses(self, stamp: int, poses: list[Any]) -> None:
        pass

    def close(self) -> None:
        pass

    def abandon(self) -> None:
        pass


NOTHING = _Nothing()


class McapProfile:
    name = "hrpsim"

    def check(self) -> None:
        pass

    def place(self, recording: Path) -> str | None:
        return None

    def open(self, place: str | None, bodies: dict[str, Body], robots: list[str]) -> ProfileOutput:
        return NOTHING


class _BagOutput:
    """A ROS 2 bag fed the robots' messages and link poses; each model's URDF beside it at the end."""

    def __init__(self, place: str, bodies: dict[str, Body], robots: list[str]) -> None:
        from hrpsim.recording.ros2_bag import Ros2Bag  # rosbags is imported only with this profile

        self.bag = Ros2Bag(place, bodies, robots)
        self.what = f"the ROS 2 bag {self.bag.path}"

    def wants(self, topic: str) -> bool:
        return topic.startswith("/robots/")

    def take(self, topic: str, stamp: int, message: dict[str, Any]) -> None:
        self.bag.take(topic, stamp, message)

    def take_link_poses(self, stamp: int, poses: list[Any]) -> None:
        # the poses as handed over: decoding their FrameTransforms again took the bag longer than
        # all its other work of the tick
        self.bag.take_link_poses(stamp, poses)

    def close(self) -> None:
        from hrpsim.recording.export import write_urdfs

        self.bag.close()
        write_urdfs(self.bag.bodies, self.bag.path)

    def abandon(self) -> None:
        self.bag.close()


class Ros2Profile:
    name = "ros2"

    def check(self) -> None:
        if importlib.util.find_spec("rosbags") is None:
            raise RecordingError("the ros2 record profile needs the rosbags library: pip install 'hrpsim[ros2]'")

    def place(self, recording: Path) -> str | None:
        return str(_fresh_bag_folder(recording))

    def open(self, place: str | None, bodies: dict[str, Body], robots: list[str]) -> ProfileOutput:
        if place is None:
            raise RecordingError("the ros2 record profile was given no bag folder")
        return _BagOutput(place, bodies, robots)


PROFILES: dict[str, RecordingProfile] = {p.name: p for p in (McapProfile(), Ros2Profile())}
DEFAULT_PROFILE = "hrpsim"


def ros2_bag_folder(recording: Path) -> Path:
    """Where the ros2 profile puts the bag of ``walk.mcap``: ``walk_ros2/``."""
    return recording.with_name(recording.stem + "_ros2")


def _fresh_bag_folder(recording: Path) -> Path:
    """The bag folder, emptied when it holds an earlier bag (as the .mcap file is overwritten);
    anything else there is an error, not deleted."""
    folder = ros2_bag_folder(recording)
    if folder.exists():
        if not (folder / "metadata.yaml").is_file():
            raise RecordingError(
                f"{folder}: exists and is not a ROS 2 bag; move it away to record {recording} with the ros2 profile"
            )
        shutil.rmtree(folder)
    return folder
