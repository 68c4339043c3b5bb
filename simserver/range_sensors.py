"""Range sensor scans: rays from each sensor's pose against every collision shape in the world.

On an engine that casts rays itself (MuJoCo: ``mj_multiRay`` on the running model) the beams go
through the engine, against the world exactly as it simulates it. On the others (ODE, the hardware
stand-in's kinematic engine) they are cast on the bodies' collision shapes as the collision service
holds them (hrpsim.collision.scene), posed from the engine's link states, with the collision
geometry installed (ODE's where it is, else MuJoCo's: hrpsim.collision.geometry). Either way
primitives stay primitives and meshes are hit on their triangles.

A scan follows the OpenHRP format: in the sensor frame the front is -Z and the beams lie in the X-Z
plane; beam angles run from -scanAngle/2 to +scanAngle/2 in multiples of scanStep from 0, in that
order, the beam at angle ``a`` pointing along (-sin a, 0, -cos a). A beam that hits nothing within
maxDistance reads maxDistance. The sensor's own link is not seen (the sensor looks out of it).
A reading is ``{"time": t, "distances": float64 array}``.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from hrpsim.bodyinfo import Body
from hrpsim.collision import queries
from hrpsim.collision.scene import Scene
from hrpsim.engines.base import Engine, LinkStates
from hrpsim.geometry_queries import scan_directions
from hrpsim.sensor_mounts import Mount, RangeSensor, link_frames


class RangeScanner:
    """Every range sensor of the given bodies, and what their rays are cast on: the engine, when it
    casts rays, else a collision scene of all bodies."""

    def __init__(self, bodies: dict[str, Body], sensing: set[str] | None = None, engine: Engine | None = None) -> None:
        """``sensing``: the models whose range sensors scan (default all); ``engine``: the running
        engine, whose own ray casts are used when it has them."""
        self.sensors: dict[str, RangeSensor] = {}
        for name, body in bodies.items():
            if sensing is not None and name not in sensing:
                continue
            for sensor in body.sensors:
                if sensor.type == "range":
                    mount = Mount.of(name, sensor)
                    self.sensors[mount.label] = RangeSensor.of(mount)
        self.engine = engine if engine is not None and engine.casts_rays else None
        self.scene: Scene | None = None
        if self.engine is None:
            self.scene = Scene()
            for name, body in bodies.items():
                self.scene.add_body(name, body)

    def scan(self, labels: list[str], link_states: Callable[[str], LinkStates]) -> dict[str, np.ndarray]:
        """Distances (metres, scan order) of the named sensors, the world posed by ``link_states(model)``."""
        if not labels:
            return {}
        if self.scene is not None:
            for name, entry in self.scene.bodies.items():
                entry.poses = link_frames(link_states(name))
        out = {}
        for label in labels:
            sensor = self.sensors[label]
            mount = sensor.mount
            frames = (
                self.scene.bodies[mount.model].poses
                if self.scene is not None
                else link_frames(link_states(mount.model))
            )
            pose = mount.world_pose(frames)
            out[label] = np.minimum(self._distances(sensor, pose), sensor.max_distance)
        return out

    def _distances(self, sensor: RangeSensor, pose: np.ndarray) -> np.ndarray:
        mount = sensor.mount
        if self.engine is None:
            own_link = {(mount.model, mount.link)}
            scan = queries.scan(
                self.scene, pose, sensor.scan_angle, sensor.scan_step, sensor.max_distance, None, own_link
            )
            return scan["distances"]
        _, local = scan_directions(sensor.scan_angle, sensor.scan_step)
        link = self.engine.body(mount.model).links[mount.link].name
        return self.engine.cast_rays(mount.model, link, pose[:3, 3], local @ pose[:3, :3].T, sensor.max_distance)
