"""Range sensor scans: rays from each sensor's pose against every collision shape in the world.

The rays are cast on the bodies' collision shapes as the collision service holds them
(hrpsim.collision.scene), posed from any engine's link states, so the scans do not depend on the
engine: primitives stay primitives (an exact ray against a plane, box, sphere, cylinder or capsule)
and meshes are hit on their triangles (the collision service's scan, hrpsim.collision.queries).

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
from hrpsim.engines.base import LinkStates
from hrpsim.sensor_mounts import Mount, RangeSensor, link_frames


class RangeScanner:
    """Every range sensor of the given bodies, and a collision scene of all bodies to cast against."""

    def __init__(self, bodies: dict[str, Body], sensing: set[str] | None = None) -> None:
        """``sensing``: the models whose range sensors scan (default all)."""
        self.scene = Scene()
        for name, body in bodies.items():
            self.scene.add_body(name, body)
        self.sensors: dict[str, RangeSensor] = {}
        for name, body in bodies.items():
            if sensing is not None and name not in sensing:
                continue
            for sensor in body.sensors:
                if sensor.type == "range":
                    mount = Mount.of(name, sensor)
                    self.sensors[mount.label] = RangeSensor.of(mount)

    def scan(self, labels: list[str], link_states: Callable[[str], LinkStates]) -> dict[str, np.ndarray]:
        """Distances (metres, scan order) of the named sensors, the world posed by ``link_states(model)``."""
        if not labels:
            return {}
        for name, entry in self.scene.bodies.items():
            entry.poses = link_frames(link_states(name))
        out = {}
        for label in labels:
            sensor = self.sensors[label]
            frames = self.scene.bodies[sensor.mount.model].poses
            pose = sensor.mount.world_pose(frames)
            own_link = {(sensor.mount.model, sensor.mount.link)}
            scan = queries.scan(
                self.scene, pose, sensor.scan_angle, sensor.scan_step, sensor.max_distance, None, own_link
            )
            out[label] = np.minimum(scan["distances"], sensor.max_distance)
        return out
