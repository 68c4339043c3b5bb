"""Vision sensor images: the bodies' shapes rendered headless from each camera's pose.

OpenGL 3.3 through moderngl on an EGL context draws the scene; Mesa's software renderer (llvmpipe)
does it with no GPU and no display (Debian: libegl1 libegl-mesa0 libgl1-mesa-dri;
``pip install 'hrpsim[vision]'``). Each link's visual shapes (its collision shapes where it has none)
are flat-shaded triangles in the link's frame (simserver/render_meshes.py) in their appearance's
diffuse colour, lit by a light at the camera plus ambient light; the links are posed from any
engine's link states. One sample per pixel, at the pixel's centre, so a depth pixel is the exact
depth of the surface through that centre; depth is written as a float, not read back from a
24-bit depth buffer. Textures and transparency are not drawn (a fully transparent shape is left out).

The camera follows the OpenHRP format: it looks along its frame's -Z with +Y up; ``fieldOfView``
is the angle across the image's shorter side (the vertical one for a landscape image); images have
their top row first. By ``type``: COLOR gives ``color`` (H, W, 3) uint8, MONO gives ``mono`` (H, W)
uint8, DEPTH gives ``depth`` (H, W) float32 metres along the line of sight (the distance to the
image plane through the point, as the near/far clip planes measure it; ``backClipDistance`` where
nothing lies between the clip planes), COLOR_DEPTH and MONO_DEPTH both; NONE renders nothing.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from hrpsim.bodyinfo import Body, Shape
from hrpsim.engines.base import LinkStates
from hrpsim.errors import ConfigError
from hrpsim.sensor_mounts import Mount, link_frames
from hrpsim.simserver.render_meshes import shape_triangles

IMAGE_TYPES = {
    "COLOR": ("color",),
    "MONO": ("mono",),
    "DEPTH": ("depth",),
    "COLOR_DEPTH": ("color", "depth"),
    "MONO_DEPTH": ("mono", "depth"),
    "NONE": (),
}
# The format's defaults (VisionSensor PROTO)
DEFAULTS = {
    "width": 320,
    "height": 240,
    "fieldOfView": 0.785398,
    "frontClipDistance": 0.01,
    "backClipDistance": 10.0,
    "frameRate": 30.0,
}
AMBIENT = 0.3  # share of a colour seen on a surface edge-on to the camera's light
# Luma weights of ITU-R BT.601, for a MONO camera
_LUMA = np.array([0.299, 0.587, 0.114])


@dataclass
class Camera:
    mount: Mount
    outputs: tuple[str, ...]
    width: int
    height: int
    yfov: float
    near: float
    far: float
    rate: float

    @classmethod
    def of(cls, mount: Mount) -> Camera:
        where = f"model {mount.model!r} vision sensor {mount.label!r}"
        kind = str(mount.param("imageType", mount.param("type", "NONE"))).upper()
        if kind not in IMAGE_TYPES:
            raise ConfigError(f"{where}: type {kind!r} is not one of {', '.join(IMAGE_TYPES)}; fix the model file")
        v = {key: mount.param(key, default) for key, default in DEFAULTS.items()}
        for key in ("width", "height"):
            if not isinstance(v[key], int) or not 0 < v[key] <= 8192:
                raise ConfigError(f"{where}: {key} must be a whole number of pixels in 1..8192, got {v[key]!r}")
        fov, near, far, rate = (
            float(v[k]) for k in ("fieldOfView", "frontClipDistance", "backClipDistance", "frameRate")
        )
        if not 0 < fov < math.pi:
            raise ConfigError(f"{where}: fieldOfView must be in (0, pi) rad, got {fov!r}")
        if not 0 < near < far:
            raise ConfigError(
                f"{where}: frontClipDistance must be > 0 and below backClipDistance, got {near!r} and {far!r}"
            )
        if not rate > 0:
            raise ConfigError(f"{where}: frameRate must be > 0, got {rate!r}")
        width, height = v["width"], v["height"]
        # fieldOfView spans the shorter side; the projection wants the vertical angle
        yfov = fov if height <= width else 2 * math.atan(math.tan(fov / 2) * height / width)
        return cls(mount, IMAGE_TYPES[kind], width, height, yfov, near, far, rate)

    @property
    def focal_length(self) -> float:
        """In pixels: the pinhole model's f (u = W/2 + f x / d, v = H/2 - f y / d)."""
        return self.height / 2 / math.tan(self.yfov / 2)


def cameras_of(bodies: dict[str, Body], sensing: set[str] | None = None) -> dict[str, Camera]:
    """Every vision sensor that renders something of the bodies (those named in ``sensing``), by label."""
    out = {}
    for name, body in bodies.items():
        if sensing is not None and name not in sensing:
            continue
        for sensor in body.sensors:
            if sensor.type == "vision":
                camera = Camera.of(Mount.of(name, sensor))
                if camera.outputs:
                    out[camera.mount.label] = camera
    return out


VERTEX_SHADER = """
#version 330
uniform mat4 view_model;
uniform mat4 projection;
in vec3 in_position;
in vec3 in_normal;
in vec3 in_color;
out vec3 v_normal;
out vec3 v_color;
out float v_depth;
void main() {
    vec4 eye = view_model * vec4(in_position, 1.0);
    v_normal = mat3(view_model) * in_normal;
    v_color = in_color;
    v_depth = -eye.z;
    gl_Position = projection * eye;
}
"""
FRAGMENT_SHADER = """
#version 330
uniform float ambient;
in vec3 v_normal;
in vec3 v_color;
in float v_depth;
layout(location = 0) out vec4 f_color;
layout(location = 1) out float f_depth;
void main() {
    float facing = abs(normalize(v_normal).z);  // the light shines from the camera
    f_color = vec4(v_color * (ambient + (1.0 - ambient) * facing), 1.0);
    f_depth = v_depth;
}
"""


class SceneRenderer:
    """The bodies' shapes on the GPU pipeline (software on this machine), one draw per link."""

    def __init__(self, bodies: dict[str, Body], sensing: set[str] | None = None) -> None:
        """Every body is drawn; the cameras are those of the models in ``sensing`` (default all)."""
        self.cameras = cameras_of(bodies, sensing)
        self.ctx = _context()
        self.program = self.ctx.program(vertex_shader=VERTEX_SHADER, fragment_shader=FRAGMENT_SHADER)
        self.program["ambient"].value = AMBIENT
        self.links: dict[str, list[Any]] = {
            name: [self._link_geometry(link.visuals or link.shapes) for link in body.links]
            for name, body in bodies.items()
        }
        self.targets: dict[tuple[int, int], Any] = {}

    def _link_geometry(self, shapes: list[Shape]) -> Any:
        """One vertex array of every drawable shape of a link (position, normal, colour), or None."""
        parts = []
        for shape in shapes:
            triangles = shape_triangles(shape) if shape.appearance.transparency < 1.0 else None
            if triangles is not None:
                positions, normals = triangles
                colour = np.clip(np.asarray(shape.appearance.diffuse, dtype=np.float64), 0.0, 1.0)
                parts.append(np.hstack([positions, normals, np.broadcast_to(colour, positions.shape)]))
        if not parts:
            return None
        buffer = self.ctx.buffer(np.vstack(parts).astype("f4").tobytes())
        return self.ctx.vertex_array(self.program, [(buffer, "3f 3f 3f", "in_position", "in_normal", "in_color")])

    def render(self, labels: list[str], link_states: Callable[[str], LinkStates]) -> dict[str, dict[str, np.ndarray]]:
        """The named cameras' images, the world posed by ``link_states(model)``."""
        if not labels:
            return {}
        return self.render_frames(labels, {name: link_frames(link_states(name)) for name in self.links})

    def render_frames(self, labels: list[str], frames: dict[str, np.ndarray]) -> dict[str, dict[str, np.ndarray]]:
        """The named cameras' images, each model's links posed by ``frames[model]`` ((links, 4, 4))."""
        return {label: self._render_one(self.cameras[label], frames) for label in labels}

    def _render_one(self, camera: Camera, frames: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        target = self._target(camera.width, camera.height)
        target.use()
        target.clear(0.0, 0.0, 0.0, 1.0, depth=1.0)
        view = np.linalg.inv(camera.mount.world_pose(frames[camera.mount.model]))
        self.program["projection"].write(_column_major(_projection(camera)))
        for name, geometries in self.links.items():
            for geometry, frame in zip(geometries, frames[name], strict=True):
                if geometry is not None:
                    self.program["view_model"].write(_column_major(view @ frame))
                    geometry.render()
        out: dict[str, np.ndarray] = {}
        shape = (camera.height, camera.width)
        if "color" in camera.outputs or "mono" in camera.outputs:
            color = np.frombuffer(target.read(components=3, attachment=0), np.uint8).reshape(*shape, 3)[::-1]
            if "color" in camera.outputs:
                out["color"] = np.ascontiguousarray(color)
            if "mono" in camera.outputs:
                out["mono"] = np.rint(color @ _LUMA).astype(np.uint8)
        if "depth" in camera.outputs:
            depth = np.frombuffer(target.read(components=1, attachment=1, dtype="f4"), np.float32).reshape(shape)
            out["depth"] = np.where(depth[::-1] > 0, depth[::-1], np.float32(camera.far))
        return out

    def _target(self, width: int, height: int) -> Any:
        """A single-sample framebuffer: colour (RGBA8), depth as a float, and a depth buffer."""
        target = self.targets.get((width, height))
        if target is None:
            size = (width, height)
            target = self.targets[size] = self.ctx.framebuffer(
                color_attachments=[self.ctx.renderbuffer(size, 4), self.ctx.renderbuffer(size, 1, dtype="f4")],
                depth_attachment=self.ctx.depth_renderbuffer(size),
            )
        return target

    def close(self) -> None:
        self.ctx.release()


def _context() -> Any:
    try:
        import moderngl
    except ImportError as exc:
        raise ConfigError(
            f"vision sensors need moderngl ({exc}); install it with: pip install 'hrpsim[vision]'"
        ) from None
    try:
        ctx = moderngl.create_standalone_context(require=330, backend="egl")
    except Exception as exc:  # moderngl raises plain Exceptions for a missing EGL or driver
        raise ConfigError(
            f"vision sensors need an EGL OpenGL 3.3 context, which failed here ({exc}); on Debian "
            "install libegl1 libegl-mesa0 libgl1-mesa-dri (scripts/bootstrap.sh does)"
        ) from None
    ctx.enable(moderngl.DEPTH_TEST)
    return ctx


def _projection(camera: Camera) -> np.ndarray:
    """OpenGL's perspective projection: eye space (looking along -Z) to clip space."""
    f = 1.0 / math.tan(camera.yfov / 2)
    near, far = camera.near, camera.far
    return np.array(
        [
            [f * camera.height / camera.width, 0.0, 0.0, 0.0],
            [0.0, f, 0.0, 0.0],
            [0.0, 0.0, (far + near) / (near - far), 2 * far * near / (near - far)],
            [0.0, 0.0, -1.0, 0.0],
        ]
    )


def _column_major(matrix: np.ndarray) -> bytes:
    return np.ascontiguousarray(matrix.T, dtype="f4").tobytes()
