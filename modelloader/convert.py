"""``hrpsim model convert IN OUT.urdf|OUT.xml``: load a model of any supported format and write it as
URDF, or as MuJoCo's MJCF (with rotor inertia as armature) when MuJoCo is installed."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from hrpsim.bodyinfo import Body
from hrpsim.errors import ConfigError, ModelError
from hrpsim.modelloader import formats_help


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="hrpsim model convert",
        description=f"Convert a model file ({formats_help()}) to URDF (.urdf) or MuJoCo's MJCF (.xml). "
        "URDF: meshes go to a <OUT>_meshes "
        "folder beside the output; gear ratios and rotor inertias go to transmissions; sensors, extra joints and "
        "other motor parameters have no URDF form and are left out. MJCF (needs pip install 'hrpsim[mujoco]'): "
        "one self-contained file with meshes inline, joint ranges and torque limits, rotor inertia x gearRatio^2 "
        "as armature, force, gyro and accelerometer sensors as sites, extra joints as equality constraints, "
        "joint and sensor numbers as <numeric> elements; read back it gives the same BodyInfo (docs/models.md).",
    )
    parser.add_argument("input", help="model file to read")
    parser.add_argument("output", help="file to write: .urdf or .xml (MJCF)")
    parser.add_argument("--lenient", action="store_true", help="let the VRML reader skip what it can")
    parser.add_argument(
        "--file-urls",
        action="store_true",
        help="name mesh files by absolute file:// urls (for ROS tools) instead of relative paths",
    )
    parser.add_argument(
        "--floating-joint",
        action="store_true",
        help="hold a free root to a world link by a floating joint, which MuJoCo needs to leave "
        "it free (PyBullet then fixes it; by default the root is the file's own)",
    )
    args = parser.parse_args(argv)
    output = Path(args.output)
    if output.suffix.lower() not in (".urdf", ".xml"):
        print(f"hrpsim model convert: output {output} must end in .urdf or .xml (MJCF)", file=sys.stderr)
        return 2
    from hrpsim.modelloader import load_body
    from hrpsim.modelloader.urdf_export import write_urdf

    try:
        body = load_body(args.input, lenient=args.lenient)
    except ModelError as exc:
        print(f"hrpsim model convert: {exc}", file=sys.stderr)
        return 1
    if output.suffix.lower() == ".xml":
        return _write_mjcf(body, output)
    try:
        written = write_urdf(body, output, file_urls=args.file_urls, floating_joint=args.floating_joint)
    except OSError as exc:
        print(f"hrpsim model convert: cannot write {output}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    print(f"{written}: {body.name}, {len(body.links)} links, {body.dof} dof, {body.total_mass:g} kg")
    for note in left_out(body):
        print(f"  left out (no URDF form): {note}")
    _print_mujoco_only(body)
    return 0


def _print_mujoco_only(body: Body) -> None:
    """What only an MJCF file's own model holds (tendons, equalities ...): a converted file has none of it."""
    for item in body.metadata.get("mujoco_only", []):
        print(f"  left out (no BodyInfo form): {item}")


def _write_mjcf(body: Body, output: Path) -> int:
    try:
        from hrpsim.engines.mujoco.build import write_mjcf
    except ImportError as exc:
        print(
            f"hrpsim model convert: MJCF needs MuJoCo ({exc}); install it with: pip install 'hrpsim[mujoco]'",
            file=sys.stderr,
        )
        return 1
    try:
        write_mjcf(body, str(output))
    except ConfigError as exc:
        print(f"hrpsim model convert: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:
        print(f"hrpsim model convert: cannot write {output}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    print(f"{output}: {body.name}, {len(body.links)} links, {body.dof} dof, {body.total_mass:g} kg (MJCF)")
    _print_mujoco_only(body)
    return 0


def left_out(body: Body) -> list[str]:
    """What of ``body`` a URDF file cannot hold, for the user to know."""
    notes = []
    if body.sensors:
        notes.append(f"{len(body.sensors)} sensors ({', '.join(s.name for s in body.sensors)})")
    if body.extra_joints:
        notes.append(f"{len(body.extra_joints)} extra joints ({', '.join(j.name for j in body.extra_joints)})")
    crawlers = [lk.name for lk in body.links if lk.joint_type == "crawler"]
    if crawlers:
        notes.append(f"crawler joints written as fixed ({', '.join(crawlers)})")
    motors = [lk.joint_label for lk in body.links if lk.rotor_resistor or lk.torque_const != 1.0]
    if motors:
        notes.append(f"rotor resistance / torque constant of {len(motors)} joints")
    planes = sum(1 for lk in body.links for s in lk.shapes if s.kind == "plane")
    if planes:
        notes.append(f"{planes} infinite planes")
    return notes


if __name__ == "__main__":
    sys.exit(main())
