"""``hrpsim view``: every model of a run in 3D in the browser (viser), from a recording or live.

    hrpsim view run.mcap [--port 8080] [--at T]   play, pause, a time slider and a speed choice
    hrpsim view --live [--nameserver ADDR]         follow a running simulator's world-state stream
    ... --foxglove [HOST:PORT]                     serve Foxglove's WebSocket protocol instead (foxglove_live.py)

viser serves the page and its web client itself (no build step, no internet) and sends scene
updates over a websocket, which is all a 3D view of link poses needs.
"""

from __future__ import annotations

import argparse
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from hrpsim.cli_options import NAMESERVER
from hrpsim.errors import ConfigError, HrpsimError, RecordingError
from hrpsim.security import check_web_bind
from hrpsim.viewer.foxglove_live import DEFAULT_ADDRESS, parse_address
from hrpsim.viewer.scene import ModelNodes, build_scene

FRAME_S = 1 / 30  # how often the view moves while playing
SLIDER_STEPS = 1000
POSE_INTERVAL_S = 0.01  # simulated seconds between the poses the view keeps (ticks are finer than a screen needs)
SPEEDS = ("0.1", "0.25", "0.5", "1", "2", "4")
LIVE_RESOLVE_TIMEOUT_S = 10.0
LIVE_IDLE_NOTE_S = 5.0  # say so when the stream has been quiet this long
STOP_POLL_MS = 200  # how soon a worker reading the stream notices it is asked to stop
# Once asked to stop, the process ends within this many seconds whatever the web servers' own
# threads do: their stop() can wait on a thread that wants the interpreter lock the caller holds.
STOP_GRACE_S = 15


class ViewerError(HrpsimError):
    """The viewer cannot start: the message names the port, the file or the simulator."""


def check_port(host: str, port: int) -> None:
    """Fail now, with the port's number, if it is taken (viser would quietly move to the next one)."""
    if port == 0:
        return
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        try:
            probe.bind((host, port))
        except OSError as exc:
            raise ViewerError(f"port {port} on {host} is in use ({exc.strerror}); pick another with --port") from None


def start_server(host: str, port: int) -> Any:
    import viser

    check_port(host, port)
    return viser.ViserServer(host=host, port=port, verbose=False)


def aim_camera(server: Any, centre: np.ndarray) -> None:
    server.initial_camera.look_at = tuple(float(v) for v in centre)
    server.initial_camera.position = tuple(float(v) for v in centre + np.array([1.5, -2.3, 0.7]))
    server.initial_camera.up = (0.0, 0.0, 1.0)


class Playback:
    """A recording's link poses on a timeline, driven by the panel's controls."""

    def __init__(
        self,
        server: Any,
        nodes: dict[str, ModelNodes],
        times: np.ndarray,
        poses: dict[str, dict[str, np.ndarray]],
        *,
        at: float | None,
        speed: str,
    ) -> None:
        self.nodes, self.times, self.poses = nodes, times, poses
        self.playing = at is None
        tick = float(np.median(np.diff(times))) if len(times) > 1 else 0.001
        step = max(tick, round((times[-1] - times[0]) / SLIDER_STEPS, 3))  # a finer slider stalls the page
        self.play = server.gui.add_button("Pause" if self.playing else "Play")
        self.slider = server.gui.add_slider(
            "time (s)",
            min=float(times[0]),
            max=float(times[-1]),
            step=step,
            initial_value=float(times[0] if at is None else np.clip(at, times[0], times[-1])),
        )
        self.speed = server.gui.add_dropdown("speed", SPEEDS, initial_value=speed)
        self.play.on_click(lambda _event: self.toggle())
        self.slider.on_update(lambda _event: self.show(self.slider.value))
        self.show(self.slider.value)

    def toggle(self) -> None:
        self.playing = not self.playing
        self.play.label = "Pause" if self.playing else "Play"

    def show(self, t: float) -> None:
        k = int(np.clip(np.searchsorted(self.times, t, side="right") - 1, 0, len(self.times) - 1))
        for model, links in self.poses.items():
            node = self.nodes.get(model)
            if node is not None:
                for link, track in links.items():
                    node.pose(link, track[k])

    def run(self, stop: threading.Event) -> None:
        while not stop.wait(FRAME_S):
            if not self.playing:
                continue
            t = self.slider.value + FRAME_S * float(self.speed.value)
            if t >= self.times[-1]:
                t = float(self.times[0])  # loop
            self.slider.value = t


def view_recording(args: argparse.Namespace) -> int:
    from hrpsim.recording.reader import open_recording

    rec = open_recording(args.recording)
    if rec.cut_note:
        print(f"hrpsim view: note: {rec.cut_note}", file=sys.stderr)
    if args.foxglove:
        return serve_foxglove_recording(rec, args)
    times, poses = rec.link_poses(every_s=POSE_INTERVAL_S)
    if len(times) == 0:
        raise RecordingError(f"{args.recording}: no link poses recorded")
    bodies = rec.bodies()
    server = start_server(args.host, args.port)
    nodes = build_scene(server, bodies)
    robots = [m for m in rec.robots if m in poses]
    centre = poses[robots[0]][next(iter(poses[robots[0]]))][:, :3].mean(axis=0) if robots else np.zeros(3)
    aim_camera(server, centre)
    playback = Playback(server, nodes, times, poses, at=args.at, speed=args.speed)
    return serve(server, playback.run, args)


def view_live(args: argparse.Namespace) -> int:
    from hrpsim.naming import NameClient, nameserver_address
    from hrpsim.project import load_project
    from hrpsim.simserver.bodies import load_bodies

    address = nameserver_address(args.nameserver)
    with NameClient(address, timeout=LIVE_RESOLVE_TIMEOUT_S) as ns:
        entry = ns.resolve(args.simserver)
    meta = entry.get("metadata") or {}
    if "state" not in meta or "project" not in meta:
        raise ViewerError(f"{args.simserver!r} at {address} advertises no world-state stream; is it a simulator?")
    project = load_project(meta["project"])
    bodies = load_bodies(project, address)
    if args.foxglove:
        return serve_foxglove_live(bodies, [m.name for m in project.models if not m.static], meta["state"], args)
    server = start_server(args.host, args.port)
    nodes = build_scene(server, bodies)
    aim_camera(server, np.array(project.models[0].position if project.models else (0.0, 0.0, 0.0)))
    status = server.gui.add_markdown("waiting for the simulation ...")
    frames = 0

    def take(frame: dict[str, Any]) -> None:
        nonlocal frames
        frames += 1
        if frames == 1:
            print(f"hrpsim view: following {args.simserver} from t={frame.get('time', 0.0):.3f} s", flush=True)
        for model, entry in frame.get("bodies", {}).items():
            node = nodes.get(model)
            if node is not None:
                node.poses(np.asarray(entry["poses"]))
        status.content = f"t = {frame.get('time', 0.0):.3f} s, tick {frame.get('tick', 0)}"

    def quiet() -> None:
        status.content = "no frames from the simulator (paused, finished or gone)"

    return serve(server, follow_stream(meta["state"], take, quiet), args)


def follow_stream(
    endpoint: str, take: Callable[[dict[str, Any]], None], quiet: Callable[[], None] = lambda: None
) -> Callable[[threading.Event], None]:
    """A worker that hands each frame of a simulator's world-state stream to ``take`` until stopped,
    and calls ``quiet`` while none comes (every LIVE_IDLE_NOTE_S). The stream's socket is made, read and
    closed in the worker's own thread: a zmq socket used from two threads, or closed while another
    polls it, aborts the process (libzmq's signaler assertion)."""

    def follow(stop: threading.Event) -> None:
        import zmq

        from hrpsim.codec import CODEC
        from hrpsim.simserver.publisher import subscribe

        sub = subscribe(zmq.Context.instance(), endpoint)
        try:
            heard = time.monotonic()
            while not stop.is_set():
                if sub.poll(STOP_POLL_MS):
                    _topic, payload = sub.recv_multipart()
                    take(CODEC.decode(payload))
                    heard = time.monotonic()
                elif time.monotonic() - heard >= LIVE_IDLE_NOTE_S:
                    quiet()
                    heard = time.monotonic()
        finally:
            sub.close(linger=0)

    return follow


def serve_foxglove_recording(rec: Any, args: argparse.Namespace) -> int:
    from hrpsim.viewer.foxglove_live import FoxgloveServer, play_recording

    server = FoxgloveServer(*parse_address(args.foxglove))
    return serve(server, play_recording(server, rec, speed=float(args.speed)), args, url=foxglove_url(server))


def serve_foxglove_live(bodies: dict[str, Any], robots: list[str], endpoint: str, args: argparse.Namespace) -> int:
    from hrpsim.viewer.foxglove_live import FoxgloveServer, LiveFrames

    server = FoxgloveServer(*parse_address(args.foxglove))
    frames = LiveFrames(server, bodies, robots)
    return serve(server, follow_stream(endpoint, frames.take), args, url=foxglove_url(server))


def foxglove_url(server: Any) -> str:
    return f"ws://{server.host}:{server.port}/ (Foxglove: Open connection, Foxglove WebSocket)"


def serve(server: Any, worker: Any, args: argparse.Namespace, *, url: str | None = None) -> int:
    started = time.monotonic()
    stop = threading.Event()
    _stop_on_signals(stop)
    thread = threading.Thread(target=worker, args=(stop,), name="viewer", daemon=True)
    thread.start()
    url = url or f"http://{args.host}:{server.get_port()}/"
    print(f"hrpsim view: open {url} (Ctrl-C stops)", flush=True)
    try:
        while thread.is_alive() and (args.duration is None or time.monotonic() - started < args.duration):
            if stop.wait(0.2):
                break
    except KeyboardInterrupt:
        pass
    finally:
        # SIGALRM's default action ends the process from the kernel, with no Python code (or lock)
        # needed: the bound holds even if a server's stop() never returns.
        signal.alarm(STOP_GRACE_S)
        stop.set()
        thread.join(STOP_GRACE_S / 2)  # the worker closes what it opened before the server goes
        server.stop()
    return 0


def _stop_on_signals(stop: threading.Event) -> None:
    """Ctrl-C and SIGTERM stop serving, the way the end of --duration does. Set here rather than left
    to Python's default: a process started in the background of a script inherits SIGINT ignored,
    and a server that Ctrl-C cannot reach through its process group would serve on."""
    if threading.current_thread() is not threading.main_thread():
        return
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stop.set())


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="hrpsim view", description="A 3D view of a run in the browser.")
    parser.add_argument("recording", nargs="?", help="a recording (.mcap) to play")
    parser.add_argument("--live", action="store_true", help="follow a running simulator instead")
    NAMESERVER.add(parser)
    parser.add_argument(
        "--simserver", default="simserver", help="with --live: the simulator's name (default %(default)s)"
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to serve on (default %(default)s)")
    parser.add_argument("--port", type=int, default=8080, help="port to serve on (default %(default)s; 0 picks one)")
    parser.add_argument("--at", type=float, help="open paused at this simulated time")
    parser.add_argument("--speed", default="1", choices=SPEEDS, help="playback speed (default %(default)s)")
    parser.add_argument("--duration", type=float, help="stop serving after this many seconds")
    parser.add_argument(
        "--foxglove",
        nargs="?",
        const=DEFAULT_ADDRESS,
        metavar="HOST:PORT",
        help=f"serve Foxglove's WebSocket protocol instead of the browser view (default {DEFAULT_ADDRESS})",
    )
    args = parser.parse_args(argv)
    if args.foxglove and args.foxglove.endswith(".mcap") and not args.recording:  # view --foxglove RUN.mcap
        args.recording, args.foxglove = args.foxglove, DEFAULT_ADDRESS
    if bool(args.recording) == bool(args.live):
        parser.error("give a recording to play, or --live to follow a running simulator")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        if not args.foxglove:  # the Foxglove server checks its own address
            check_web_bind(args.host, args.port, "the 3D view (--host)")
        return view_live(args) if args.live else view_recording(args)
    except (HrpsimError, ConfigError) as exc:
        print(f"hrpsim view: {exc}", file=sys.stderr)
        return 2
