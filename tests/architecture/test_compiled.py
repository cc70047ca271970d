"""The rules engine's hot modules may be compiled with mypyc (setup.py). Compiled or not, the
engine must behave the same, and a compiled copy must never be older than its source."""

from __future__ import annotations

import ast
import importlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from buraco_log.events import AnyEvent
from buraco_log.jsonl import read_jsonl
from buraco_log.reducer import Replayer
from buraco_log.rules import PRESETS
from buraco_log.simulate import simulate_match

ROOT = Path(__file__).resolve().parents[2]


def compiled_sources() -> list[str]:
    """The COMPILED list of setup.py, read without running it."""
    tree = ast.parse((ROOT / "setup.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "COMPILED":
            return list(ast.literal_eval(node.value))
    raise AssertionError("setup.py has no COMPILED list")


MODULES = [p.removesuffix(".py").replace("/", ".") for p in compiled_sources()]
COMPILED = [m for m in MODULES if not importlib.import_module(m).__file__.endswith(".py")]  # type: ignore[union-attr]


def test_setup_compiles_only_core_modules_that_exist() -> None:
    assert MODULES, "nothing to compile"
    for path in compiled_sources():
        assert (ROOT / path).is_file(), path
        assert path.startswith("buraco_log/") and path.count("/") == 1, path


@pytest.mark.parametrize("name", MODULES)
def test_a_compiled_module_is_not_older_than_its_source(name: str) -> None:
    module = importlib.import_module(name)
    built = Path(module.__file__ or "")
    if built.suffix == ".py":
        pytest.skip(f"{name} runs as plain Python")
    source = ROOT / (name.replace(".", "/") + ".py")
    assert built.stat().st_mtime >= source.stat().st_mtime, (
        f"{built.name} is older than {source.name}: run `pip install -e .` again, or install "
        "with BURACO_LOG_PURE=1 while editing the engine"
    )


# A child process that imports the engine from its .py sources, never the compiled copies,
# replays the logs given on stdin and prints a digest of every final state.
PURE_REPLAY = """
import importlib.util, json, sys
root, names = sys.argv[1], sys.argv[2:]

class PureFinder:
    def find_spec(self, name, path, target=None):
        if name in names:
            file = f"{root}/{name.replace('.', '/')}.py"
            return importlib.util.spec_from_file_location(name, file)
        return None

sys.meta_path.insert(0, PureFinder())
import msgspec
from buraco_log import reducer
from buraco_log.events import decode_many
assert all(sys.modules[n].__file__.endswith(".py") for n in names)
out = []
for blob in json.load(sys.stdin):
    r = reducer.Replayer()
    try:
        r.run(decode_many(bytes.fromhex(blob)))
        error = None
    except Exception as exc:
        error = f"{type(exc).__name__}: {exc}"
    out.append([error, msgspec.json.encode(r.state()).hex()])
print(json.dumps(out))
"""


def digest(events: list[AnyEvent]) -> list[str | None]:
    import msgspec

    r = Replayer()
    try:
        r.run(events)
        error = None
    except Exception as exc:
        error = f"{type(exc).__name__}: {exc}"
    return [error, msgspec.json.encode(r.state()).hex()]


@pytest.mark.skipif(not COMPILED, reason="the engine runs as plain Python here")
def test_the_compiled_engine_replays_exactly_as_the_plain_python_one() -> None:
    from buraco_log.events import encode_many

    logs = [read_jsonl(str(p)) for p in sorted((ROOT / "examples" / "golden").glob("*.jsonl"))]
    for rules in PRESETS.values():
        logs.append(simulate_match(rules, rules.player_counts[-1], seed="compiled"))
    broken = list(logs[-1])
    broken[len(broken) // 2] = broken[len(broken) // 2 + 1]  # a refused log as well
    logs.append(broken)
    child = subprocess.run(
        [sys.executable, "-c", PURE_REPLAY, str(ROOT), *MODULES],
        input=json.dumps([encode_many(evs).hex() for evs in logs]),
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(child.stdout) == [digest(evs) for evs in logs]
