"""Watch a robot's cameras and range sensors: save a PNG from a camera every second and log the
nearest range reading once a second. It sends no joint commands (the robot holds its pose itself).

    hrpsim controller examples/controllers/camera_watch.py --robot robot -o camera=LeftCamera -o out=frames

``camera`` may name several cameras, comma-separated; ``every`` sets the interval in seconds.

Readings arrive in ``state.sensors`` only on the ticks where a sensor produced a new frame: a camera's
is ``{"time", "color", ...}`` (uint8 H x W x 3), a range sensor's ``{"time", "distances"}`` (metres,
scan order; the sensor's maxDistance where a beam hits nothing).
"""

import logging
import sys
from pathlib import Path

import numpy as np

from hrpsim.controllers import Controller, run_main

log = logging.getLogger("camera_watch")


class CameraWatch(Controller):
    def __init__(self, *, camera: str = "", out: str = "camera_frames", every: float = 1.0) -> None:
        super().__init__()
        self.out, self.every = Path(out), float(every)
        self.next_image = {name: 0.0 for name in camera.split(",") if name}
        self.next_scan = 0.0

    def control(self, state):
        for name, reading in state.sensors.items():
            if not isinstance(reading, dict):
                continue  # force, gyro and accelerometer readings are plain arrays
            if "color" in reading and reading["time"] >= self.next_image.get(name, np.inf) - 1e-9:
                self.save(name, reading)
                self.next_image[name] += self.every
            if "distances" in reading and reading["time"] >= self.next_scan - 1e-9:
                nearest = int(np.argmin(reading["distances"]))
                log.info(
                    "%s at t=%.3f: nearest %.3f m (beam %d of %d)",
                    name,
                    reading["time"],
                    reading["distances"][nearest],
                    nearest,
                    len(reading["distances"]),
                )
                self.next_scan += self.every
        return None

    def save(self, name: str, reading: dict) -> None:
        from PIL import Image  # only where a camera is watched: Pillow comes with hrpsim[vision]

        self.out.mkdir(parents=True, exist_ok=True)
        path = self.out / f"{name}-{reading['time']:07.3f}.png"
        Image.fromarray(reading["color"]).save(path)
        log.info("saved %s", path)


if __name__ == "__main__":
    sys.exit(run_main(CameraWatch))
