"""``hrpsim model``: what the loader makes of a model file (``info``), and format conversion
(``convert``, in modelloader.convert)."""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from typing import Any

from hrpsim.bodyinfo import Body, Link
from hrpsim.errors import HrpsimError
from hrpsim.modelloader import formats_help

USAGE = "usage: hrpsim model {info,convert} ..."


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(
            f"{USAGE}\n\n  info FILE [--json] [--lenient] [--world]   what the loader reads from a model file\n"
            "  convert ...                               convert a model file (hrpsim model convert --help)"
        )
        return 0 if argv else 2
    command, rest = argv[0], argv[1:]
    if command == "info":
        return info_main(rest)
    if command == "convert":
        return int(importlib.import_module("hrpsim.modelloader.convert").main(rest) or 0)
    print(f"hrpsim model: unknown command {command!r}\n{USAGE}", file=sys.stderr)
    return 2


def info_main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="hrpsim model info",
        description=f"Show what the loader reads from a model file ({formats_help()}), each mapped to one BodyInfo.",
    )
    parser.add_argument("file", help="the model file")
    parser.add_argument(
        "--json",
        action="store_true",
        help="print JSON (name, root, links, joints, dof, mass, sensors, extra_joints, ...)",
    )
    parser.add_argument("--lenient", action="store_true", help="load despite problems, reporting them as warnings")
    parser.add_argument("--world", action="store_true", help="MJCF: read the file's environment (its world geoms)")
    args = parser.parse_args(argv)
    from hrpsim.modelloader import load_body  # the readers are imported only when a file is read

    try:
        body = load_body(args.file, lenient=args.lenient, world=args.world)
    except HrpsimError as exc:
        print(f"hrpsim model info: {exc}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(summary(body), indent=2))
    else:
        print(tree(body))
    return 0


def summary(body: Body) -> dict[str, Any]:
    """The JSON form of ``hrpsim model info``."""
    return {
        "name": body.name,
        "format": body.format,
        "source": body.source,
        "root": body.root.name if body.links else None,
        "links": [lk.name for lk in body.links],
        "joints": body.joint_names,
        "dof": body.dof,
        "mass": body.total_mass,
        "static": body.static,
        "sensors": [
            {"name": s.name, "type": s.type, "id": s.id, "link": body.links[s.link].name} for s in body.sensors
        ],
        "extra_joints": [
            {"name": e.name, "link1": e.link1, "link2": e.link2, "type": e.type} for e in body.extra_joints
        ],
        "files": list(body.metadata.get("files", [])),
        "warnings": list(body.metadata.get("warnings", [])),
        "notes": list(body.metadata.get("notes", [])),
        "mujoco_only": list(body.metadata.get("mujoco_only", [])),
    }


MAX_INDENT = 32  # levels of a tree drawn by indentation; deeper ones say their depth


def _link_line(link: Link, depth: int) -> str:
    joint = link.joint_type
    if link.joint_id >= 0:
        joint += f" id {link.joint_id}"
    if link.joint_type in ("rotate", "slide", "crawler"):
        joint += " axis " + " ".join(f"{v:g}" for v in link.joint_axis)
    shapes = f", {len(link.shapes)} shape{'s' if len(link.shapes) != 1 else ''}" if link.shapes else ""
    indent = "  " * depth if depth <= MAX_INDENT else "  " * MAX_INDENT + f"[depth {depth}] "
    return f"{indent}{link.name}  {joint}  {link.mass:.6g} kg{shapes}"


def tree(body: Body) -> str:
    """A short readable tree: links with joint types, ids and masses; then sensors and extra joints."""
    lines = [
        f"{body.name}  ({body.format}, {len(body.links)} links, {body.dof} dof, "
        f"{body.total_mass:.6g} kg{', static' if body.static else ''})  {body.source}"
    ]

    children: dict[int, list[int]] = {}
    for index, link in enumerate(body.links):
        children.setdefault(link.parent, []).append(index)
    stack = [(index, 1) for index in reversed(children.get(-1, []))]
    while stack:  # depth first, without recursion: a chain of thousands of links is a model too
        index, depth = stack.pop()
        lines.append(_link_line(body.links[index], depth))
        stack.extend((child, depth + 1) for child in reversed(children.get(index, [])))
    if body.sensors:
        lines.append("sensors:")
        lines += [f"  {s.name}  {s.type} id {s.id} on {body.links[s.link].name}" for s in body.sensors]
    if body.extra_joints:
        lines.append("extra joints:")
        lines += [f"  {e.name}  {e.type}  {e.link1} - {e.link2}" for e in body.extra_joints]
    for warning in body.metadata.get("warnings", []):
        lines.append(f"warning: {warning}")
    lines += [f"mujoco only: {item}" for item in body.metadata.get("mujoco_only", [])]
    lines += [f"note: {note}" for note in body.metadata.get("notes", [])]
    return "\n".join(lines)
