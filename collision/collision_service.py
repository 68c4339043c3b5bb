"""The collision process: ``hrpsim run collision [--nameserver ADDR] [--bind ADDR] [--name NAME]``.

OpenHRP's CollisionDetector as an hrpsim service (kind ``collision``): bodies come in as BodyInfo
(wire form) or as a model file read by the modelloader; pairs are defined once; every query may
carry new link poses (``{body: (n_links, 4, 4)}``, kept for later queries). docs/collision.md
lists the operations and their replies.
"""

from __future__ import annotations

import argparse
import logging
from typing import Any

from hrpsim.bodyinfo import Body
from hrpsim.cli_options import add_service_options
from hrpsim.collision import checks, queries
from hrpsim.collision.geometry import LIBRARIES, collision_geometry
from hrpsim.collision.scene import LinkPair, Scene
from hrpsim.errors import HrpsimError, RequestError
from hrpsim.logs import setup_logging
from hrpsim.models import fetch_body
from hrpsim.rpc import Operation, Service

DEFAULT_NAME = "collision"
DEFAULT_MAX_DISTANCE = 100.0  # m, for rays and scans that do not say
MAX_BEAMS = 10_000  # a scan answers within a second or two; real range sensors have ~1000

log = logging.getLogger("hrpsim.collision")


class CollisionService(Service):
    kind = "collision"
    max_request_bytes = 64 * 1024 * 1024  # add_body carries a body's meshes

    def __init__(self, name: str = DEFAULT_NAME, *, geometry: str | None = None, **kwargs: Any) -> None:
        """``geometry``: ``ode`` or ``mujoco``, the library that answers (default: ODE where installed)."""
        self.geometry = collision_geometry(geometry)
        self.scene = Scene(self.geometry)
        self._nameserver = kwargs.get("nameserver")
        super().__init__(name, **kwargs)

    def operations(self) -> dict[str, Operation]:
        return {
            "add_body": self.add_body,
            "remove_body": self.remove_body,
            "bodies": self.bodies,
            "set_poses": self.set_poses,
            "add_pair": self.add_pair,
            "remove_pair": self.remove_pair,
            "pairs": self.pairs,
            "clear": self.clear,
            "contacts": self.contacts,
            "intersect": self.intersect,
            "distance": self.distance,
            "ray": self.ray,
            "scan": self.scan,
        }

    def roles(self) -> dict[str, str]:  # changing the scene needs admin (the default)
        return dict.fromkeys(["bodies", "pairs", "contacts", "intersect", "distance", "ray", "scan"], "observer")

    # --- bodies and pairs ---

    def add_body(
        self,
        name: str,
        body: dict[str, Any] | None = None,
        file: str | None = None,
        options: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Add a body by BodyInfo (wire form) or by model file (through the modelloader)."""
        if (body is None) == (file is None):
            raise RequestError("add_body: give exactly one of 'body' (BodyInfo wire form) or 'file' (a model path)")
        info = self._body_from_wire(name, body) if body is not None else self._body_from_file(file, options)
        checks.check_body(info)
        entry = self.scene.add_body(name, info)
        try:
            self.geometry.prepare(entry)
        except HrpsimError:
            self.scene.remove_body(name)
            raise
        log.info("added body %r (%d links) from %s", name, len(info.links), file or "BodyInfo")
        return self._describe_body(name)

    @staticmethod
    def _body_from_wire(name: str, data: Any) -> Body:
        if not isinstance(data, dict):
            raise RequestError(f"add_body {name!r}: 'body' must be a BodyInfo wire map, got {type(data).__name__}")
        try:
            return Body.from_wire(data)
        except (TypeError, ValueError, KeyError, AttributeError) as exc:
            raise RequestError(f"add_body {name!r}: 'body' is not a BodyInfo wire map: {exc}") from None

    def _body_from_file(self, file: Any, options: Any) -> Body:
        if not isinstance(file, str) or not file:
            raise RequestError(f"add_body: 'file' must be a model file path, got {file!r}")
        return fetch_body(file, nameserver=self._nameserver, options=options or {})

    def remove_body(self, name: str) -> dict[str, Any]:
        return {"name": name, "pairs_removed": self.scene.remove_body(name)}

    def bodies(self) -> list[dict[str, Any]]:
        return [self._describe_body(name) for name in self.scene.bodies]

    def _describe_body(self, name: str) -> dict[str, Any]:
        entry = self.scene.body(name)
        return {"name": name, "model": entry.body.name, "links": entry.link_names, "static": entry.body.static}

    def set_poses(self, poses: dict[str, Any]) -> int:
        if not isinstance(poses, dict):
            raise RequestError(f"set_poses: 'poses' must be a map body name -> (n_links, 4, 4) array, got {poses!r}")
        self.scene.set_poses(poses)
        return len(poses)

    def add_pair(
        self, body1: str, body2: str, link1: str | None = "", link2: str | None = "", tolerance: float = 0.0
    ) -> dict[str, Any]:
        added = self.scene.add_pair(body1, link1, body2, link2, tolerance)
        return {"added": len(added), "total": len(self.scene.pairs)}

    def remove_pair(self, body1: str, body2: str, link1: str | None = "", link2: str | None = "") -> dict[str, Any]:
        return {"removed": self.scene.remove_pair(body1, link1, body2, link2), "total": len(self.scene.pairs)}

    def pairs(self) -> list[dict[str, Any]]:
        return [{**self.scene.describe(p), "tolerance": tol} for p, tol in self.scene.pairs.items()]

    def clear(self) -> bool:
        self.scene = Scene(self.geometry)
        return True

    # --- queries ---

    def _prepare(self, poses: Any, pairs: Any) -> dict[LinkPair, float]:
        chosen = self.scene.pairs_for(pairs)  # checked before any pose is stored
        self.scene.set_poses(poses)
        return chosen

    def contacts(
        self, poses: dict[str, Any] | None = None, pairs: list[dict[str, Any]] | None = None, max_contacts: int = 0
    ) -> list[dict[str, Any]]:
        """Contact points of the defined (or given) pairs; ``max_contacts`` caps each geom pair (0: ODE's)."""
        if isinstance(max_contacts, bool) or not isinstance(max_contacts, int) or max_contacts < 0:
            raise RequestError(f"max_contacts must be an integer >= 0, got {max_contacts!r}")
        return queries.contacts(self.scene, self._prepare(poses, pairs), max_contacts)

    def intersect(
        self, poses: dict[str, Any] | None = None, pairs: list[dict[str, Any]] | None = None
    ) -> list[dict[str, Any]]:
        return queries.intersecting(self.scene, self._prepare(poses, pairs))

    def distance(
        self, poses: dict[str, Any] | None = None, pairs: list[dict[str, Any]] | None = None
    ) -> list[dict[str, Any]]:
        return queries.distances(self.scene, self._prepare(poses, pairs))

    def ray(
        self,
        origin: Any,
        direction: Any,
        max_distance: float = DEFAULT_MAX_DISTANCE,
        bodies: list[str] | None = None,
        poses: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        start = checks.array("origin", origin, (3,))
        unit = checks.unit_vector("direction", direction)
        limit = checks.number("max_distance", max_distance, positive=True)
        targets = self._targets(bodies)
        self.scene.set_poses(poses)
        return queries.ray(self.scene, start, unit, limit, targets)

    def scan(
        self,
        pose: Any,
        angle_range: float,
        step: float,
        max_distance: float = DEFAULT_MAX_DISTANCE,
        bodies: list[str] | None = None,
        poses: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        frame = checks.rigid_pose("pose", pose)
        span = checks.number("angle_range", angle_range, minimum=0.0)
        pitch = checks.number("step", step, positive=True)
        if span / pitch > MAX_BEAMS:
            raise RequestError(f"a scan of {span:g} rad in steps of {pitch:g} rad has too many beams (max {MAX_BEAMS})")
        limit = checks.number("max_distance", max_distance, positive=True)
        targets = self._targets(bodies)
        self.scene.set_poses(poses)
        return queries.scan(self.scene, frame, span, pitch, limit, targets)

    def _targets(self, bodies: Any) -> list[str] | None:
        targets = checks.names("bodies", bodies)
        for name in targets or []:
            self.scene.body(name)
        return targets


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="hrpsim run collision", description="Run the collision detector service (contacts, distance, rays)."
    )
    add_service_options(parser, name=DEFAULT_NAME)
    parser.add_argument(
        "--geometry",
        choices=LIBRARIES,
        help="the library that answers the queries (default: ode where installed, else mujoco)",
    )
    args = parser.parse_args(argv)
    setup_logging("collision")
    try:
        service = CollisionService(args.name, geometry=args.geometry, bind=args.bind, nameserver=args.nameserver)
        print(f"collision {args.name!r} serving at {service.endpoint} ({service.geometry.name})", flush=True)
        service.serve_forever()
    except HrpsimError as exc:  # cannot bind, or no nameserver to register with
        log.error("collision %r cannot run: %s", args.name, exc)
        return 1
    return 0
