#!/usr/bin/env bash
# Installs what hrpsim needs on a Debian/Ubuntu machine, skipping what is already there:
# system packages (ODE's Python binding and friends), a venv made from the system Python that
# binding belongs to, and the project with its development extras (the tests' tools, python -m build,
# MkDocs for the documentation site), the MuJoCo engine, Foxglove and ROS 2 bags.
set -euo pipefail
cd "$(dirname "$0")/.."

SYSTEM_PYTHON=/usr/bin/python3
# chromium: only the tests use it, to load the browser viewer headless
# stress-ng: scripts/stress-test.sh keeps every core busy while the suite runs
# libegl1 libegl-mesa0 libgl1-mesa-dri: headless OpenGL (Mesa's software renderer) for cameras
# python3-venv: .venv, and the clean environment (no system site-packages) the wheel's test installs into
APT_PACKAGES=(python3-pyode python3-venv collada-urdf-tools iproute2 gcc make pkg-config libzmq3-dev libmsgpack-dev
              chromium libegl1 libegl-mesa0 libgl1-mesa-dri stress-ng)

as_root() {
    if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

missing=()
for pkg in "${APT_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "bootstrap: installing system packages: ${missing[*]}"
    as_root apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi
"$SYSTEM_PYTHON" -c "import ode" || { echo "bootstrap: 'import ode' still fails after installing python3-pyode" >&2; exit 1; }

if [ ! -x .venv/bin/python ]; then
    echo "bootstrap: creating .venv from $SYSTEM_PYTHON (with system site-packages for ode)"
    "$SYSTEM_PYTHON" -m venv --system-site-packages .venv
fi
stamp=.venv/.hrpsim-installed
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
    echo "bootstrap: installing hrpsim and its dependencies into .venv"
    log=.venv/pip-install.log
    if ! { .venv/bin/python -m pip install -q --upgrade pip && .venv/bin/python -m pip install -q -e '.[dev,mujoco,toolkit,foxglove,ros2]'; } \
            >"$log" 2>&1; then
        cat "$log" >&2
        echo "bootstrap: pip install failed (log above, also in $log)" >&2
        exit 1
    fi
    touch "$stamp"
fi

# Byte-compile the project's own sources (the package folders pyproject.toml maps, and the examples,
# tests and benchmarks). An editable install leaves them uncompiled, and where PYTHONDONTWRITEBYTECODE
# is set (some CI images set it) every process of a run would compile each module it imports again:
# a third of a simulator process's start-up. Cheap when they are up to date.
folders=$(.venv/bin/python -c 'import tomllib; print(" ".join(sorted(set(
    tomllib.load(open("pyproject.toml", "rb"))["tool"]["setuptools"]["package-dir"].values()))))')
# shellcheck disable=SC2086  # one word per folder
.venv/bin/python -m compileall -q $folders examples tests bench >/dev/null || {
    echo "bootstrap: byte-compiling the sources failed" >&2
    exit 1
}
