"""A user installing the built wheel, not the source tree: every other test runs an editable
install, which finds files in the tree that a wheel may lack.

Builds once for the module (slow: about 7 minutes on 2 cores, most of it mypyc, twice): a wheel
from a copy of the working tree (as ``pip install .`` does, over a stale earlier build), the
sdist, a wheel from the sdist alone, and a plain-Python wheel (``BURACO_LOG_PURE=1``). The
compiled wheel goes into a fresh virtualenv with the newest dependencies, the plain one into
another with the lowest versions pyproject.toml allows; every command runs with its working
directory outside the source tree, on the README's examples as a user has them.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import tomllib
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
VERSION = PYPROJECT["project"]["version"]
EXT = sysconfig.get_config_var("EXT_SUFFIX")
COMPILED = ("melds", "scoring", "reducer")  # setup.py's COMPILED
PACKAGES = ("buraco_log", "cli")
NOT_COPIED = {".git", ".venv", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".hypothesis",
              "build", "dist", "spark-warehouse", "bench-out"}
STALE = "buraco_log/zz_removed_module"  # planted in build/ as an earlier build would leave it
EDGE = ("duckdb", "pyarrow", "typer", "rich")
TIMEOUT = 1200


def run(cmd: list[str], cwd: Path, env: dict[str, str] | None = None,
        expect: int | None = 0) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=TIMEOUT, stdin=subprocess.DEVNULL, check=False)
    if expect is not None:
        assert done.returncode == expect, (
            f"{shlex.join(cmd)} (in {cwd}): exit {done.returncode}, expected {expect}\n"
            f"stdout: {done.stdout[-3000:]}\nstderr: {done.stderr[-3000:]}")
    return done


def user_env(venv: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "VIRTUAL_ENV", "BURACO_LOG_PURE", "PYTHONHOME")}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    return env


def tracked(prefixes: tuple[str, ...]) -> list[str]:
    out = subprocess.run(["git", "ls-files", "-z", "--", *prefixes], cwd=ROOT,
                         capture_output=True, check=False)
    if out.returncode != 0:
        pytest.skip("needs git and the repository (git ls-files)")
    return [n for n in out.stdout.decode().split("\0") if n]


@dataclass
class Built:
    tree_wheel: Path
    sdist: Path
    sdist_wheel: Path
    pure_wheel: Path


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("packaging")


@pytest.fixture(scope="module")
def built(work: Path) -> Built:
    # The working tree as a developer has it: editable-install .so files, __pycache__, the
    # egg-info; a build/ folder holding a module deleted since and a compiled one since dropped.
    src = work / "src"
    shutil.copytree(ROOT, src, symlinks=True,
                    ignore=lambda d, names: [n for n in names
                                             if Path(d) == ROOT and n in NOT_COPIED])
    plat = f"{sysconfig.get_platform()}-{sys.implementation.cache_tag}"
    for lib in (src / "build" / "lib", src / "build" / f"lib.{plat}"):
        (lib / "buraco_log").mkdir(parents=True)
        (lib / f"{STALE}.py").write_text("REMOVED = True\n")
        (lib / f"{STALE}{EXT}").write_bytes(b"\x7fELF stale")
    pip = [sys.executable, "-m", "pip"]
    run([*pip, "wheel", "--no-deps", "-q", "-w", str(work / "tree"), str(src)], work)
    # `build` makes the sdist; from its own venv, and run outside src (src/build would shadow it).
    tools = work / "tools"
    run([sys.executable, "-m", "venv", str(tools)], work)
    run([str(tools / "bin" / "python"), "-m", "pip", "install", "-q", "build"], work)
    run([str(tools / "bin" / "python"), "-m", "build", "--sdist", "-o", str(work / "sdist"),
         str(src)], work)
    sdist = next((work / "sdist").glob("*.tar.gz"))
    run([*pip, "wheel", "--no-deps", "-q", "-w", str(work / "from-sdist"), str(sdist)], work)
    env = dict(os.environ, BURACO_LOG_PURE="1")
    run([*pip, "wheel", "--no-deps", "-q", "-w", str(work / "pure"), str(sdist)], work, env)
    return Built(next((work / "tree").glob("*.whl")), sdist,
                 next((work / "from-sdist").glob("*.whl")), next((work / "pure").glob("*.whl")))


def install(work: Path, name: str, *requirements: str) -> Path:
    venv = work / name
    run([sys.executable, "-m", "venv", str(venv)], work)
    run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", *requirements], work)
    return venv


@pytest.fixture(scope="module")
def newest(work: Path, built: Built) -> Path:
    """The compiled wheel with the newest dependencies pip finds."""
    return install(work, "venv-newest", str(built.sdist_wheel))


def lowest_requirements() -> list[str]:
    pins = []
    for dep in PYPROJECT["project"]["dependencies"]:
        m = re.fullmatch(r"([A-Za-z0-9_.-]+)>=([0-9][0-9.]*)", dep)
        assert m, f"{dep}: give each dependency its lowest version (name>=X)"
        pins.append(f"{m.group(1)}=={m.group(2)}")
    return pins


@pytest.fixture(scope="module")
def lowest(work: Path, built: Built) -> Path:
    """The plain-Python wheel (a machine with no C compiler) with the lowest versions allowed."""
    return install(work, "venv-lowest", str(built.pure_wheel), *lowest_requirements())


def user_dir(work: Path, name: str) -> Path:
    """A user's folder: the examples as the repository has them, no source tree."""
    home = work / name
    home.mkdir()
    shutil.copytree(ROOT / "examples", home / "examples",
                    ignore=shutil.ignore_patterns("__pycache__", "screenshots"))
    return home


def readme_commands() -> list[tuple[list[str], int]]:
    """Each `$ buraco-log ...` line of README.md's console blocks, with its `# exit N`, and the
    install block's `buraco-log demo`."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    out: list[tuple[list[str], int]] = [(["buraco-log", "demo"], 0)]
    for block in re.findall(r"^```console\n(.*?)^```", text, re.M | re.S):
        for line in block.splitlines():
            if line.startswith("$ buraco-log "):
                command, _, comment = line[2:].partition("  #")
                m = re.search(r"exit (\d+)", comment)
                out.append((shlex.split(command), int(m.group(1)) if m else 0))
    assert len(out) > 8, "README.md's console blocks were not found"
    return out


def release(version: str) -> tuple[int, ...]:
    parts = [int(p) for p in version.split(".")]
    while parts and parts[-1] == 0:
        parts.pop()
    return tuple(parts)


def names(archive: Path) -> list[str]:
    if archive.suffix == ".whl":
        return sorted(zipfile.ZipFile(archive).namelist())
    with tarfile.open(archive) as tar:
        return sorted(m.name for m in tar.getmembers() if m.isfile())


def python_and_data_files() -> set[str]:
    data = PYPROJECT["tool"]["setuptools"]["package-data"]
    files = set()
    for name in tracked(PACKAGES):
        package = name.split("/", 1)[0]
        rel = name.split("/", 1)[1]
        if name.endswith(".py") or any(Path(rel).match(p) for p in data.get(package, [])):
            files.add(name)
    return files


def test_the_wheel_holds_the_package_its_data_and_its_compiled_engine_and_nothing_stale(
        built: Built) -> None:
    for wheel in (built.tree_wheel, built.sdist_wheel):
        got = set(names(wheel))
        missing = python_and_data_files() - got
        assert not missing, f"{wheel.name} lacks {sorted(missing)}"
        for module in COMPILED:
            assert f"buraco_log/{module}{EXT}" in got, f"{wheel.name}: {module} not compiled"
        assert [n for n in got if re.fullmatch(rf"\w+__mypyc{re.escape(EXT)}", n)], got
        assert "buraco_log/py.typed" in got and "buraco_log/archive/spark.py" in got
        stale = [n for n in got if "zz_removed" in n]
        assert stale == [], f"{wheel.name} ships files of an earlier build: {stale}"
        junk = [n for n in got if "__pycache__" in n or n.endswith(".pyc")
                or n.startswith(("tests/", "examples/", "docs/", "build/", ".venv/"))]
        assert junk == [], junk
        tops = {n.split("/", 1)[0] for n in got if not n.split("/", 1)[0].endswith(".dist-info")}
        assert {t for t in tops if not t.endswith(EXT)} == set(PACKAGES), tops


def test_the_sdist_holds_the_sources_and_nothing_built(built: Built) -> None:
    got = {n.split("/", 1)[1] for n in names(built.sdist) if "/" in n}
    for needed in ("setup.py", "pyproject.toml", "README.md", "PKG-INFO"):
        assert needed in got, f"the sdist lacks {needed}"
    missing = python_and_data_files() - got
    assert not missing, f"the sdist lacks {sorted(missing)}"
    built_files = [n for n in got if n.endswith((".so", ".pyc", ".o", ".pyd"))
                   or "__pycache__" in n or n.startswith("build/")]
    assert built_files == [], f"the sdist holds files built on this machine: {built_files}"


def test_the_sdist_alone_builds_the_same_wheel_and_a_plain_python_one(built: Built) -> None:
    assert names(built.sdist_wheel) == names(built.tree_wheel)
    pure = names(built.pure_wheel)
    assert built.pure_wheel.name.endswith("-py3-none-any.whl"), built.pure_wheel.name
    assert [n for n in pure if n.endswith(EXT)] == []
    assert python_and_data_files() <= set(pure)


def test_the_installed_wheel_runs_from_site_packages_with_its_compiled_engine(
        newest: Path, work: Path) -> None:
    home = user_dir(work, "user-check")
    env = user_env(newest)
    py = str(newest / "bin" / "python")
    code = ("import sys, buraco_log; edge = sorted({m.split('.')[0] for m in sys.modules} & "
            f"{set(EDGE)!r}); "
            "import buraco_log.reducer as r, buraco_log.melds as m, buraco_log.scoring as s, "
            "importlib.resources as ir; "
            "print(buraco_log.__file__); print(edge); print(r.__file__, m.__file__, s.__file__); "
            "print(ir.files('buraco_log').joinpath('py.typed').is_file())")
    out = run([py, "-c", code], home, env).stdout.splitlines()
    site = run([py, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"], home,
               env).stdout.strip()
    assert out[0].startswith(site + "/"), f"imported from {out[0]}, not from {site}"
    assert out[1] == "[]", f"import buraco_log loaded {out[1]}"
    assert all(f.endswith(EXT) for f in out[2].split()), f"not the compiled engine: {out[2]}"
    assert out[3] == "True"
    version = run(["buraco-log", "--version"], home, env).stdout.strip()
    assert version.startswith(f"buraco-log {VERSION} "), version
    newest_entry = re.search(r"^## (\S+)", (ROOT / "CHANGELOG.md").read_text("utf-8"), re.M)
    assert newest_entry is not None and newest_entry.group(1) == VERSION
    assert "Usage: buraco-log" in run(["buraco-log", "--help"], home, env).stdout
    assert run([py, "-m", "cli", "--version"], home, env).stdout.strip() == version


def check_commands(venv: Path, home: Path) -> None:
    env = user_env(venv)
    for argv, status in readme_commands():
        done = run(argv, home, env, expect=status)
        assert "Traceback" not in done.stderr and "internal error" not in done.stderr, (
            f"{shlex.join(argv)}: {done.stderr[-2000:]}")
    assert "<script" in (home / "match.html").read_text(encoding="utf-8")  # the page's assets
    assert (home / "report.html").read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    py = str(venv / "bin" / "python")
    run([py, "examples/record_a_match.py", "table-7.blog"], home, env)
    run(["buraco-log", "audit", "table-7.blog", "--quiet"], home, env)
    run(["buraco-log", "review", "examples/sim/classic-2p-000000.blog", "--seat", "1",
         "--budget", "2x2", "--format", "html", "-o", "review.html"], home, env)
    assert "<script" in (home / "review.html").read_text(encoding="utf-8")
    assert "biriba" in run(["buraco-log", "rules", "show", "biriba"], home, env).stdout
    run(["buraco-log", "schema", "--dir", "schema"], home, env)
    assert (home / "schema" / "events.schema.json").read_bytes() == (
        ROOT / "schema" / "events.schema.json").read_bytes()
    # spark-submit runs the module file itself as a script (docs/spark.md).
    spark = run([py, "-c", "import buraco_log.archive.spark as m; print(m.__file__)"], home,
                env).stdout.strip()
    assert "ingest" in run([py, spark, "--help"], home, env).stdout


def test_the_readme_commands_work_from_the_installed_wheel(newest: Path, work: Path) -> None:
    check_commands(newest, user_dir(work, "user-newest"))


def test_the_plain_python_wheel_works_with_the_lowest_dependency_versions_allowed(
        lowest: Path, work: Path) -> None:
    py = str(lowest / "bin" / "python")
    home = user_dir(work, "user-lowest")
    env = user_env(lowest)
    for pin in lowest_requirements():
        name, version = pin.split("==")
        got = run([py, "-c", f"import importlib.metadata as m; print(m.version({name!r}))"],
                  home, env).stdout.strip()
        assert release(got) == release(version), f"{name} {got} installed, {version} pinned"
    files = run([py, "-c", "import buraco_log.reducer as r, buraco_log.melds as m; "
                 "print(r.__file__, m.__file__)"], home, env).stdout.split()
    assert all(f.endswith(".py") for f in files), files
    check_commands(lowest, home)

