"""hrpsim as a user installs it from the wheel: ``python -m build`` makes an sdist and a wheel, and the
wheel with its ``mujoco`` extra goes into a fresh virtual environment without system site-packages
(so without Debian's python3-pyode: ODE cannot be imported there). In it, ``hrpsim --version`` answers,
``hrpsim launch`` runs an MJCF model and sample1.wrl beside a laser range finder on MuJoCo, a project
that names no engine runs on MuJoCo, one that asks for ODE is told how to install it, and the collision
service answers with MuJoCo's geometry.

The wheel is built and installed once for the test session, in a temporary folder; pip's cache keeps the
install to the time it takes to unpack (the first run on a machine downloads MuJoCo and the rest from
the package index). Every process runs from a folder outside the repository, whose top-level
``hrpsim`` folder would otherwise be imported instead of the installed one.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
import yaml
from collision_helpers import box, one_link_body, pose
from process_helpers import HRPSIM, REPO, ManagedProcess, wait_for_file, wait_registered

from hrpsim import __version__
from hrpsim.client import Client

INSTALL_TIMEOUT_S = 900  # a first install downloads MuJoCo and the dependencies
RUN_TIMEOUT_S = 240


@dataclass
class Installed:
    dist: Path
    venv: Path
    folder: Path

    @property
    def hrpsim(self) -> str:
        return str(self.venv / "bin" / "hrpsim")

    def env(self) -> dict[str, str]:
        """The environment of a user of the venv: nothing of the repository or of the test's venv."""
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "HRPSIM_NAMESERVER")}
        env["PATH"] = os.pathsep.join([str(self.venv / "bin"), env.get("PATH", "")])
        return env

    def run(self, *args: str, timeout: float = RUN_TIMEOUT_S) -> subprocess.CompletedProcess:
        return subprocess.run(
            list(args), cwd=self.folder, env=self.env(), capture_output=True, text=True, timeout=timeout
        )


def _checked(done: subprocess.CompletedProcess) -> subprocess.CompletedProcess:
    assert done.returncode == 0, f"{done.args} failed:\n{done.stdout}\n{done.stderr}"
    return done


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    """The wheel built and installed once for the session: the parallel test processes share it
    through their common temporary folder, the first to ask building it under a file lock."""
    shared = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        shared = shared.parent  # each worker's folder is inside the session's
    folder = shared / "wheel-install"
    folder.mkdir(exist_ok=True)
    where = Installed(folder / "dist", folder / "venv", folder)
    done = folder / "done"  # written after a successful install only: a failed one is tried again
    with open(folder / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.exists():
            _build_and_install(where)
            done.touch()
    return where


def _build_and_install(where: Installed) -> None:
    shutil.rmtree(where.dist, ignore_errors=True)
    shutil.rmtree(where.venv, ignore_errors=True)
    build = [sys.executable, "-m", "build", "--outdir", str(where.dist), str(REPO)]
    _checked(subprocess.run(build, cwd=where.folder, capture_output=True, text=True, timeout=INSTALL_TIMEOUT_S))
    base_python = Path(sys.base_prefix) / "bin" / "python3"
    venv = [str(base_python), "-m", "venv", str(where.venv)]  # no --system-site-packages: no Debian ODE
    _checked(subprocess.run(venv, capture_output=True, text=True, timeout=120))
    (wheel,) = where.dist.glob("hrpsim-*.whl")
    pip = [str(where.venv / "bin" / "python"), "-m", "pip", "install", "--quiet", f"{wheel}[mujoco]"]
    _checked(where.run(*pip, timeout=INSTALL_TIMEOUT_S))


def test_the_build_makes_an_sdist_and_a_wheel_of_this_version(installed: Installed) -> None:
    (wheel,) = installed.dist.glob("*.whl")
    (sdist,) = installed.dist.glob("*.tar.gz")
    assert wheel.name == f"hrpsim-{__version__}-py3-none-any.whl" and sdist.name == f"hrpsim-{__version__}.tar.gz"
    files = zipfile.ZipFile(wheel).namelist()
    # the VRML grammar is read at run time; the model corpus is not part of the package
    assert "hrpsim/modelloader/vrml/vrml97.lark" in files and "hrpsim/engines/mujoco/scene.py" in files
    assert not any(name.startswith(("models/", "tests/", "hrpsim/models/")) for name in files)
    with tarfile.open(sdist) as archive:
        assert f"hrpsim-{__version__}/CHANGELOG.md" in archive.getnames()
    assert f"## {__version__}" in (REPO / "CHANGELOG.md").read_text()  # the changelog names this release


def test_the_environment_has_mujoco_and_no_ode_and_hrpsim_says_its_version(installed: Installed) -> None:
    python = str(installed.venv / "bin" / "python")
    assert installed.run(python, "-c", "import ode").returncode != 0
    _checked(installed.run(python, "-c", "import mujoco"))
    assert _checked(installed.run(installed.hrpsim, "--version")).stdout.strip() == f"hrpsim {__version__}"
    # the installed package, not the repository's sources
    where = _checked(installed.run(python, "-c", "import hrpsim; print(hrpsim.__file__)")).stdout.strip()
    assert str(installed.venv) in where


def _project(installed: Installed, example: str, name: str, **world: object) -> Path:
    """An example project copied beside the venv, its model files and controllers' folders absolute."""
    source = REPO / "examples" / example
    data = yaml.safe_load(source.read_text())
    data["world"].update(world)
    for key in [k for k, v in world.items() if v is None]:
        del data["world"][key]
    for model in data["models"]:
        model["file"] = str((source.parent / model["file"]).resolve())
    for controller in data.get("controllers", []):
        controller["cwd"] = str((source.parent / controller.get("cwd", ".")).resolve())
    path = installed.folder / f"{name}.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def _launch(installed: Installed, project: Path, hrpsim: list[str] | None = None) -> tuple[dict, Path]:
    """Launch to the end with a private nameserver: (run summary, run folder)."""
    run_dir = installed.folder / f"run-{project.stem}-{len(hrpsim or [])}"
    summary = installed.folder / f"{project.stem}-{len(hrpsim or [])}.json"
    command = [*(hrpsim or [installed.hrpsim]), "launch", str(project), "--summary", str(summary)]
    command += ["--nameserver", "tcp://127.0.0.1:*", "--run-dir", str(run_dir), "--quiet"]
    _checked(installed.run(*command))
    return json.loads(summary.read_text()), run_dir


def test_an_mjcf_model_launches_on_mujoco(installed: Installed) -> None:
    summary, _ = _launch(installed, _project(installed, "arm_mujoco.yaml", "arm"))
    assert summary["error"] is None and summary["engine"] == "mujoco" and summary["ticks"] == 1000
    assert summary["robots"]["arm"]["has_joints"]


def _nearest_readings(run_dir: Path) -> list[float]:
    """The nearest range reading the ranger logged, once per second of the run."""
    log = "\n".join(path.read_text() for path in run_dir.rglob("*.log"))
    return [float(value) for value in re.findall(r"LASER at t=[\d.]+: nearest ([\d.]+) m", log)]


def test_sample1_beside_a_laser_scanner_launches_on_mujoco_and_the_laser_sees_it(installed: Installed) -> None:
    summary, run_dir = _launch(installed, _project(installed, "sample_laser_mujoco.yaml", "laser"))
    assert summary["error"] is None and summary["engine"] == "mujoco"
    assert summary["controllers"]["ranger"]["ticks"] == 1000
    nearest = _nearest_readings(run_dir)
    # the laser (maxDistance 10 m, 0.8 m beside the robot) sees sample1's chest, as it does on ODE here
    on_ode, ode_run = _launch(
        installed, _project(installed, "sample_laser_mujoco.yaml", "laser_ode", engine="ode"), HRPSIM
    )
    assert on_ode["engine"] == "ode"
    assert len(nearest) == 2 and max(nearest) < 1.0
    np.testing.assert_allclose(nearest, _nearest_readings(ode_run), atol=2e-3)


def test_a_project_naming_no_engine_runs_on_mujoco_where_ode_is_missing(installed: Installed) -> None:
    summary, _ = _launch(installed, _project(installed, "arm_mujoco.yaml", "arm_default", engine=None))
    assert summary["error"] is None and summary["engine"] == "mujoco"


def test_a_project_asking_for_ode_says_how_to_install_it(installed: Installed) -> None:
    project = _project(installed, "arm_mujoco.yaml", "arm_ode", engine="ode")
    done = installed.run(installed.hrpsim, "launch", str(project), "--nameserver", "tcp://127.0.0.1:*", "--quiet")
    assert done.returncode != 0
    output = done.stdout + done.stderr
    assert "the ode engine is not installed here" in output and "apt install python3-pyode" in output


def test_the_collision_service_answers_with_mujocos_geometry(installed: Installed) -> None:
    folder = installed.folder / "collision"
    folder.mkdir()
    endpoint_file = folder / "nameserver.endpoint"
    nameserver = _spawn(
        installed, folder, "nameserver", "--bind", "tcp://127.0.0.1:*", "--endpoint-file", str(endpoint_file)
    )
    try:
        address = wait_for_file(endpoint_file, nameserver)
        service = _spawn(installed, folder, "collision", "--nameserver", address)
        try:
            endpoint = wait_registered(address, "collision", service)["endpoint"]
            assert "(mujoco)" in service.log_text()
            with Client(endpoint, peer="collision", timeout=20.0) as client:
                for name in ("a", "b"):
                    client.call("add_body", name=name, body=one_link_body(name, box([1, 1, 1])).to_wire())
                client.call("add_pair", body1="a", body2="b")
                overlapping = {"a": pose([0, 0, 0])[None], "b": pose([0.9, 0, 0])[None]}
                (found,) = client.call("contacts", poses=overlapping)
                np.testing.assert_allclose(found["depth"], 0.1, atol=1e-9)
                np.testing.assert_allclose(found["normal"], [[-1, 0, 0]] * len(found["depth"]), atol=1e-9)
                hit = client.call("ray", origin=[5.0, 0, 0], direction=[-1.0, 0, 0])
                assert hit["body"] == "b" and hit["distance"] == pytest.approx(3.6, abs=1e-9)
        finally:
            service.stop()
    finally:
        nameserver.stop()


def _spawn(installed: Installed, folder: Path, component: str, *args: str) -> ManagedProcess:
    log = folder / f"{component}.log"
    with open(log, "wb") as out:
        popen = subprocess.Popen(
            [installed.hrpsim, "run", component, *args],
            cwd=folder,
            env=installed.env(),
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    return ManagedProcess(popen, log)
