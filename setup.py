"""The package list: every package inside each folder pyproject.toml maps under the hrpsim
namespace ([tool.setuptools.package-dir]). Found, not listed, so that a new package (an engine's
folder, a model reader's) needs no edit here or in pyproject.toml."""

import tomllib
from pathlib import Path

from setuptools import find_packages, setup

HERE = Path(__file__).resolve().parent
FOLDERS = tomllib.loads((HERE / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]

packages = [
    f"{package}.{sub}" if sub else package
    for package, folder in FOLDERS.items()
    for sub in ["", *find_packages(str(HERE / folder))]
]

setup(packages=packages)
