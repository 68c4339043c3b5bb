"""The package list: every package under each top-level folder, installed under the hrpsim
namespace (pyproject.toml maps the folders). Found, not listed, so that a new package (an engine's
folder, a model reader's) needs no edit here or in pyproject.toml."""

from setuptools import find_packages, setup

FOLDERS = ("nameserver", "modelloader", "simserver", "collision", "controllers", "engines", "hil", "recording", "viewer")

packages = ["hrpsim"]
for folder in FOLDERS:
    packages += [f"hrpsim.{folder}"] + [f"hrpsim.{folder}.{name}" for name in find_packages(folder)]

setup(packages=packages)
