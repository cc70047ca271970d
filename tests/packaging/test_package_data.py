"""What the wheel ships beside the Python modules, read from pyproject.toml and checked against
the source tree (fast; tests/packaging/test_built_wheel.py builds and installs the wheel)."""

from __future__ import annotations

import re
import subprocess
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
PACKAGES = ("buraco_log", "cli")
NOT_DATA = {".py", ".pyc", ".so", ".pyd"}  # modules, and what a build or an import writes


def package_data() -> dict[str, list[str]]:
    data: dict[str, list[str]] = PYPROJECT["tool"]["setuptools"]["package-data"]
    return data


def tracked_files() -> list[Path]:
    """The packages' files as a clone has them (untracked scratch files do not count)."""
    out = subprocess.run(["git", "ls-files", "-z", "--", *PACKAGES], cwd=ROOT,
                         capture_output=True, check=False)
    if out.returncode != 0:
        pytest.skip("needs git and the repository (git ls-files)")
    return [ROOT / name for name in out.stdout.decode().split("\0") if name]


def shipped_data() -> set[Path]:
    shipped: set[Path] = set()
    for package, patterns in package_data().items():
        folder = ROOT / package.replace(".", "/")
        for pattern in patterns:
            shipped.update(p for p in folder.glob(pattern) if p.is_file())
    return shipped


def test_every_package_data_pattern_names_files_that_exist() -> None:
    for package, patterns in package_data().items():
        folder = ROOT / package.replace(".", "/")
        assert folder.is_dir(), f"package-data names {package}, which is no package folder"
        for pattern in patterns:
            assert any(p.is_file() for p in folder.glob(pattern)), (
                f"package-data {package}: {pattern!r} matches no file")


def test_every_file_beside_the_modules_is_package_data_so_the_wheel_has_it() -> None:
    # A file left out of package-data is in the source tree, so every editable-install test
    # passes, and missing from every installed wheel.
    shipped = shipped_data()
    missing = [str(p.relative_to(ROOT)) for p in tracked_files()
               if p.suffix not in NOT_DATA and p not in shipped]
    assert missing == [], f"not in [tool.setuptools.package-data]: {missing}"


def test_the_files_read_through_importlib_resources_are_package_data() -> None:
    # resources.files("pkg") / "a" / "b": the folder or file named must ship.
    shipped = {p.relative_to(ROOT).as_posix() for p in shipped_data()}
    call = re.compile(r'resources\.files\("([\w.]+)"\)((?:\s*/\s*"[^"]+")+)')
    found = 0
    for path in tracked_files():
        if path.suffix != ".py":
            continue
        for match in call.finditer(path.read_text(encoding="utf-8")):
            parts = re.findall(r'"([^"]+)"', match.group(2))
            where = "/".join([match.group(1).replace(".", "/"), *parts])
            found += 1
            assert any(s == where or s.startswith(where + "/") for s in shipped), (
                f"{path.relative_to(ROOT)} reads {where}, which package-data does not ship")
    assert found, "no importlib.resources read found: the pattern above no longer matches"


def test_the_version_is_one_in_pyproject_the_package_and_the_changelog() -> None:
    version = PYPROJECT["project"]["version"]
    init = (ROOT / "buraco_log" / "__init__.py").read_text(encoding="utf-8")
    assert f'__version__ = "{version}"' in init
    newest = re.search(r"^## (\S+)", (ROOT / "CHANGELOG.md").read_text(encoding="utf-8"), re.M)
    assert newest is not None and newest.group(1) == version, (
        f"CHANGELOG's newest entry is {newest and newest.group(1)}, pyproject says {version}")
