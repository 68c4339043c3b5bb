"""``hrpsim export ros2 RUN.mcap OUT_BAG/``: a recording as a ROS 2 bag, each model's URDF beside it.

hrpsim export ros2 runs/walk.mcap runs/walk_bag/
ros2 bag play runs/walk_bag/          (docs/recording.md: with robot_state_publisher and RViz)
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from hrpsim.bodyinfo import Body
from hrpsim.errors import HrpsimError, RecordingError
from hrpsim.recording.reader import open_recording


def write_urdfs(bodies: dict[str, Body], folder: Path) -> list[Path]:
    """``MODEL.urdf`` for each model (meshes as STL in ``MODEL_meshes/``, named by file:// url,
    as ROS tools want): the links and joints of the bag's frames and joint states."""
    from hrpsim.modelloader.urdf_export import write_urdf

    return [write_urdf(body, folder / f"{name}.urdf", file_urls=True) for name, body in bodies.items()]


def export_ros2(recording_path: str | Path, bag: str | Path) -> tuple[Path, int]:
    """Write the bag and the URDFs; return the bag's folder and how many messages it holds."""
    try:
        from hrpsim.recording.ros2_bag import Ros2Bag, iter_recorded
    except ImportError as exc:
        raise RecordingError(f"ROS 2 bags need the rosbags library ({exc}): pip install 'hrpsim[ros2]'") from None
    rec = open_recording(recording_path)
    if rec.cut_note:
        print(f"hrpsim export: note: {rec.cut_note}", file=sys.stderr)
    bodies = rec.bodies()
    writer = Ros2Bag(bag, bodies, rec.robots)
    try:
        for topic, log_time, message in iter_recorded(rec):
            writer.take(topic, log_time, message)
    finally:
        writer.close()
    write_urdfs(bodies, writer.path)
    return writer.path, writer.messages


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="hrpsim export", description="Convert a recording for other tools.")
    sub = parser.add_subparsers(dest="format", required=True)
    ros2 = sub.add_parser("ros2", help="a ROS 2 bag (MCAP storage, CDR) with each model's URDF")
    ros2.add_argument("recording", help="the recording (.mcap)")
    ros2.add_argument("bag", help="the bag folder to write (must not exist)")
    args = parser.parse_args(argv)
    try:
        path, count = export_ros2(args.recording, args.bag)
    except HrpsimError as exc:
        print(f"hrpsim export: {exc}", file=sys.stderr)
        return 2
    print(f"hrpsim export: {count} messages to {path} (play with: ros2 bag play {path})")
    return 0
