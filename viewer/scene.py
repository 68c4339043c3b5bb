"""Models as a viser scene: one node per link, holding the link's shapes with their colours.

Every shape becomes a triangle mesh in its link's frame (boxes, spheres, cylinders, cones,
capsules, planes and meshes alike), so the browser gets one kind of object. Cylinders, cones
and capsules follow VRML and have their axis along the shape's Y (bodyinfo.py).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hrpsim.bodyinfo import Body
from hrpsim.shape_meshes import PLANE_HALF_SIZE, Z_TO_Y, colour, shape_mesh  # noqa: F401 - the viewer's names too


class ModelNodes:
    """The scene nodes of one model: a frame per link, which ``pose`` moves."""

    def __init__(self, server: Any, name: str, body: Body) -> None:
        self.name = name
        self.links = [lk.name for lk in body.links]
        self.frames = {}
        for link in body.links:
            frame = server.scene.add_frame(f"/{name}/{link.name}", show_axes=False)
            self.frames[link.name] = frame
            for i, shape in enumerate(link.visuals or link.shapes):
                mesh = shape_mesh(shape)
                if mesh is None:
                    continue
                opacity = 1.0 - float(shape.appearance.transparency)
                server.scene.add_mesh_simple(
                    f"/{name}/{link.name}/shape{i}",
                    np.asarray(mesh.vertices, dtype=np.float32),
                    np.asarray(mesh.faces, dtype=np.uint32),
                    color=colour(shape),
                    opacity=opacity if opacity < 1.0 else None,
                    flat_shading=shape.kind in ("box", "plane"),
                )

    def pose(self, link: str, pose: np.ndarray) -> None:
        """Place a link: ``pose`` is x y z qw qx qy qz in the world frame."""
        frame = self.frames.get(link)
        if frame is not None and np.all(np.isfinite(pose)):
            frame.position = pose[:3]
            frame.wxyz = pose[3:7]

    def poses(self, table: np.ndarray) -> None:
        """Every link from a (links, 7) table in link order."""
        for link, row in zip(self.links, table, strict=False):
            self.pose(link, row)


def build_scene(server: Any, bodies: dict[str, Body]) -> dict[str, ModelNodes]:
    server.scene.set_up_direction("+z")
    # Lights only, no environment map: the map is fetched after the page loads, so the same
    # moment of a run would look different depending on when one looks (or takes a picture).
    server.scene.configure_environment_map(None)
    server.scene.add_light_ambient("/light/ambient", intensity=1.2)
    server.scene.add_light_hemisphere("/light/sky", intensity=1.0)
    server.scene.add_grid("/grid", width=10.0, height=10.0, cell_size=0.5, position=(0.0, 0.0, 0.0005))
    return {name: ModelNodes(server, name, body) for name, body in bodies.items()}
