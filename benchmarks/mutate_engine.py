"""Mutation testing of the rules engine: would the tests notice a wrong branch?

    cp -r <the repository without .venv, build, .git> /tmp/mut; find /tmp/mut -name '*.so' -delete
    cd /tmp/mut && PYTHONPATH=/tmp/mut python benchmarks/mutate_engine.py \\
        [--modules scoring,melds] [--only scoring:58] [--timeout 120] [--out mutants.jsonl] \\
        [tests/unit tests/property tests/golden]

Coverage says which lines a test runs, not whether a test would fail if a line were wrong. This
script makes small wrong versions of the engine (mutants), one at a time, and runs the tests
that reach the changed line until one fails (the mutant is killed) or none does (it survives).
A survivor is an untested rule, an equivalent change, or a defect.

The mutants, from the AST of each function and method of the engine modules: a comparison
flipped at its boundary or negated (``<``/``<=``, ``==``/``!=``, ``is``/``is not``, ``in``/
``not in``), an integer constant moved by one (0 -> 1, 1 -> 0 and 2, n -> n + 1 and n - 1), a
boolean constant flipped, one operand of an ``and``/``or`` dropped or the operator swapped, a
``not`` dropped, ``+``/``-`` swapped, a guard (an ``if`` without ``else`` whose body raises or
returns) never taken; and, with ``--presets``, one knob of one preset changed.

How: pytest collects the tests once; for each mutant a forked child swaps the compiled code of
the one changed function into the live function object (so every ``from x import f`` sees it),
clears the engine's memo tables and runs the tests in the child, so nothing is written to the
tree and a mutant never outlives its child. A first child runs every test under a line tracer
to learn which tests reach which lines of the engine; a mutant runs only those tests. Tests
that start a CLI subprocess load the unmutated engine and never kill a mutant, so they are
left to the other test areas. The compiled modules (mypyc ``.so``) must not be loaded: run in
a copy with them deleted (the script refuses otherwise). Not in the default test run.
"""

from __future__ import annotations

import argparse
import ast
import functools
import importlib
import json
import os
import pickle
import signal
import sys
import time
import types
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec
import pytest

ROOT = Path(__file__).resolve().parents[1]
MODULES = ("rules", "melds", "scoring", "reducer", "state", "moves", "wilds", "combos", "dealer")
# Memo tables keyed by rules or counts: filled by unmutated code they would hide a mutant.
_MEMOS = (("buraco_log.rules", "_POINT_TABLES"), ("buraco_log.rules", "_PASSED"),
          ("buraco_log.melds", "_CACHES"), ("buraco_log.reducer", "_MATERIAL"),
          ("buraco_log.dealer", "_LIMITS"), ("buraco_log.expert", "_CACHES"),
          ("buraco_log.simulate", "_CACHES"))
_FLIP: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq, ast.Is: ast.IsNot, ast.IsNot: ast.Is, ast.In: ast.NotIn,
    ast.NotIn: ast.In}


@dataclass(frozen=True)
class Mutant:
    ident: str  # module:line:number, stable while the source is unchanged
    module: str
    qualname: str  # the module-level function or method whose code is swapped
    line: int
    end_line: int
    what: str
    index: int = -1  # the mutation's position in the module's walk (-1: a preset knob)
    preset: str = ""
    knob: str = ""
    value: Any = None


# -- making mutants --------------------------------------------------------------------------


def _variants(node: ast.AST) -> Iterator[tuple[str, Callable[[ast.AST], ast.AST]]]:
    """Each mutation of one node: a description and a function that makes it on a copy."""
    if isinstance(node, ast.Compare):
        for i, op in enumerate(node.ops):
            new = _FLIP.get(type(op))
            if new is not None:
                def flip(n: ast.AST, i: int = i, new: type[ast.cmpop] = new) -> ast.AST:
                    assert isinstance(n, ast.Compare)
                    n.ops[i] = new()
                    return n
                yield f"{type(op).__name__} -> {new.__name__}", flip
    elif isinstance(node, ast.Constant) and type(node.value) is bool:
        flipped = not node.value
        yield f"{node.value} -> {flipped}", lambda n: ast.Constant(flipped)
    elif isinstance(node, ast.Constant) and type(node.value) is int:
        v = node.value
        for w in ((1,) if v == 0 else (0, 2) if v == 1 else (v + 1, v - 1)):
            yield f"{v} -> {w}", functools.partial(_constant, w)
    elif isinstance(node, ast.BoolOp):
        name = "and" if isinstance(node.op, ast.And) else "or"
        for i in range(len(node.values)):
            def drop(n: ast.AST, i: int = i) -> ast.AST:
                assert isinstance(n, ast.BoolOp)
                del n.values[i]
                return n.values[0] if len(n.values) == 1 else n
            yield f"{name}: operand {i + 1} dropped", drop

        def swap(n: ast.AST) -> ast.AST:
            assert isinstance(n, ast.BoolOp)
            n.op = ast.Or() if isinstance(n.op, ast.And) else ast.And()
            return n
        yield f"{name} -> {'or' if name == 'and' else 'and'}", swap
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        yield "not dropped", lambda n: n.operand  # type: ignore[attr-defined]
    elif isinstance(node, (ast.BinOp, ast.AugAssign)) and isinstance(node.op, (ast.Add, ast.Sub)):
        plus = isinstance(node.op, ast.Add)

        def sign(n: ast.AST) -> ast.AST:
            n.op = ast.Sub() if plus else ast.Add()  # type: ignore[attr-defined]
            return n
        yield f"{'+ -> -' if plus else '- -> +'}", sign
    elif isinstance(node, ast.If) and not node.orelse and isinstance(
            node.body[-1], (ast.Raise, ast.Return, ast.Continue, ast.Break)):
        def never(n: ast.AST) -> ast.AST:
            assert isinstance(n, ast.If)
            n.test = ast.Constant(False)
            return n
        yield "guard never taken", never


def _constant(value: int, node: ast.AST) -> ast.AST:
    return ast.Constant(value)


def _walk(node: ast.AST) -> Iterator[ast.AST]:
    """The nodes of a function's code in a fixed order, without annotations, decorators,
    default values (evaluated once, at import) and f-strings (message text)."""
    yield node
    for name, value in ast.iter_fields(node):
        if name in ("annotation", "returns", "decorator_list", "type_comment") or \
                isinstance(node, (ast.arguments, ast.JoinedStr)):
            continue
        for child in value if isinstance(value, list) else [value]:
            if isinstance(child, ast.AST):
                yield from _walk(child)


def _functions(tree: ast.Module) -> Iterator[tuple[str, ast.AST]]:
    for top in tree.body:
        if isinstance(top, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield top.name, top
        elif isinstance(top, ast.ClassDef):
            for sub in top.body:
                if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    yield f"{top.name}.{sub.name}", sub


def _sites(tree: ast.Module) -> Iterator[tuple[str, ast.AST, str, Callable[[ast.AST], ast.AST]]]:
    for qualname, fn in _functions(tree):
        for node in _walk(fn):
            if node is fn:
                continue
            for what, make in _variants(node):
                yield qualname, node, what, make


def make_mutants(module: str) -> list[Mutant]:
    path = ROOT / "buraco_log" / f"{module}.py"
    tree = ast.parse(path.read_text(), str(path))
    out = []
    for index, (qualname, node, what, _) in enumerate(_sites(tree)):
        line = getattr(node, "lineno", 0)
        end = getattr(node, "end_lineno", line) or line
        if isinstance(node, ast.If):
            end = node.test.end_lineno or line  # the guard's test, not its body
        text = ast.unparse(node.test if isinstance(node, ast.If) else node).split("\n")[0]
        out.append(Mutant(f"{module}:{line}:{index}", module, qualname, line, end,
                          f"{what}  [{text[:70]}]", index))
    return out


def inert(rules: Any, knob: str) -> bool:
    """Knobs a preset never reads, whose change is an equivalent mutant: the morto's when it
    plays none, the opening minimums without vulnerability, bonuses of canastras or feats the
    preset does not know, the joker's points with no jokers."""
    return ((not rules.morto and knob in ("morto_size", "morto_direct", "morto_needs_canastra",
                                         "morto_voided_by", "bonuses.morto_not_taken"))
            or (not rules.vulnerability and knob in ("vulnerable_at", "opening_min",
                                                    "opening_min_after_retract"))
            or (not rules.relancinho and knob == "bonuses.relancinho")
            or (not rules.semi_clean and knob == "bonuses.semi_clean")
            or (not rules.royal_canastras and knob in ("bonuses.royal", "bonuses.ace_to_ace"))
            or (not rules.jokers and knob == "points.joker"))


def preset_mutants() -> list[Mutant]:
    """One knob of one preset changed: would a test notice a preset that plays otherwise?"""
    from buraco_log.rules import PRESETS
    out = []
    for name, rules in PRESETS.items():
        for knob, value in msgspec.structs.asdict(rules).items():
            if inert(rules, knob):
                continue
            news: list[Any] = []
            if isinstance(value, bool):
                news = [not value]
            elif isinstance(value, int):
                news = [value + 1]
            elif isinstance(value, msgspec.Struct):
                for sub, v in msgspec.structs.asdict(value).items():
                    if inert(rules, f"{knob}.{sub}"):
                        continue
                    out.append(Mutant(f"preset:{name}:{knob}.{sub}", "rules", "", 0, 0,
                                      f"{name}: {knob}.{sub} {v} -> {v + 5}", -1, name,
                                      f"{knob}.{sub}", v + 5))
            elif knob == "pile_pickup":
                news = ["free" if value == "must_use_top" else "must_use_top"]
            elif knob == "morto_voided_by":
                news = ["any_end"]
            elif knob == "player_counts":
                news = [value[:-1]]
            for new in news:
                out.append(Mutant(f"preset:{name}:{knob}", "rules", "", 0, 0,
                                  f"{name}: {knob} {value!r} -> {new!r}", -1, name, knob, new))
    return out


# -- applying one in a child -----------------------------------------------------------------


def _live_functions(mod: types.ModuleType) -> dict[str, types.FunctionType]:
    found: dict[str, types.FunctionType] = {}
    for obj in vars(mod).values():
        if isinstance(obj, types.FunctionType) and obj.__module__ == mod.__name__:
            found[obj.__code__.co_qualname] = obj
        elif isinstance(obj, type) and obj.__module__ == mod.__name__:
            for attr in vars(obj).values():
                for f in (attr, getattr(attr, "__func__", None), getattr(attr, "fget", None)):
                    if isinstance(f, types.FunctionType):
                        found[f.__code__.co_qualname] = f
    return found


def _code_named(code: types.CodeType, qualname: str) -> types.CodeType | None:
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            if const.co_qualname == qualname:
                return const
            inner = _code_named(const, qualname)
            if inner is not None:
                return inner
    return None


def apply(m: Mutant) -> None:
    """Make the mutant live in this process."""
    if m.preset:
        rules_mod = importlib.import_module("buraco_log.rules")
        rules = rules_mod.PRESETS[m.preset]
        if "." in m.knob:
            knob, sub = m.knob.split(".")
            part = msgspec.structs.replace(getattr(rules, knob), **{sub: m.value})
            rules_mod.PRESETS[m.preset] = msgspec.structs.replace(rules, **{knob: part})
        else:
            rules_mod.PRESETS[m.preset] = msgspec.structs.replace(rules, **{m.knob: m.value})
    else:
        path = ROOT / "buraco_log" / f"{m.module}.py"
        tree = ast.parse(path.read_text(), str(path))
        for index, (_, node, _, make) in enumerate(_sites(tree)):
            if index == m.index:
                _replace(tree, node, make(node))
                break
        code = compile(ast.fix_missing_locations(tree), str(path), "exec", dont_inherit=True)
        new = _code_named(code, m.qualname)
        mod = importlib.import_module(f"buraco_log.{m.module}")
        live = _live_functions(mod)[m.qualname]
        assert new is not None, m.qualname
        live.__code__ = new
    for name, memo in _MEMOS:
        table = getattr(sys.modules.get(name), memo, None)
        if table is not None:
            table.clear()


def _replace(tree: ast.AST, old: ast.AST, new: ast.AST) -> None:
    if new is old:
        return
    ast.copy_location(new, old)
    for parent in ast.walk(tree):
        for name, value in ast.iter_fields(parent):
            if value is old:
                setattr(parent, name, new)
                return
            if isinstance(value, list) and any(v is old for v in value):
                value[next(i for i, v in enumerate(value) if v is old)] = new
                return
    raise AssertionError("node not found")


# -- running tests in children ---------------------------------------------------------------


class _Failures:
    def __init__(self) -> None:
        self.first: str | None = None

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.failed and self.first is None:
            self.first = report.nodeid


def _quiet(config: pytest.Config) -> None:
    """A child prints nothing: its tests' dots and its own output would mix with the parent's."""
    reporter = config.pluginmanager.getplugin("terminalreporter")
    if reporter is not None:
        config.pluginmanager.unregister(reporter)
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.dup2(null, 2)


def _run_items(items: list[pytest.Item], stop_at_first: bool,
               failures: _Failures) -> Iterator[int]:
    for i, item in enumerate(items):
        item.ihook.pytest_runtest_protocol(item=item, nextitem=items[i + 1] if i + 1 < len(
            items) else None)
        yield i
        if stop_at_first and failures.first is not None:
            return


def _fork(child: Callable[[], int], timeout: float) -> tuple[str, float]:
    """Run ``child`` in a fork; its exit code, 'timeout' or 'crash', and the seconds it took."""
    start = time.monotonic()
    pid = os.fork()
    if pid == 0:
        code = 3
        try:
            signal.alarm(max(1, int(timeout)))
            code = child()
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    took = time.monotonic() - start
    if os.WIFSIGNALED(status):
        return ("timeout" if os.WTERMSIG(status) == signal.SIGALRM else "crash"), took
    return str(os.WEXITSTATUS(status)), took


def _trace_lines(items: list[pytest.Item], files: set[str], out: Path) -> int:
    """Child: every test under a tracer; writes {test index: set of (file, line)} and the
    indexes of tests that failed unmutated."""
    _quiet(items[0].config)
    failures = _Failures()
    items[0].config.pluginmanager.register(failures)
    reached: dict[int, set[tuple[str, int]]] = {}
    current: set[tuple[str, int]] = set()

    def local(frame: types.FrameType, event: str, arg: Any) -> Any:
        if event == "line":
            current.add((frame.f_code.co_filename, frame.f_lineno))
        return local

    def glob(frame: types.FrameType, event: str, arg: Any) -> Any:
        if frame.f_code.co_filename in files:
            current.add((frame.f_code.co_filename, frame.f_lineno))
            return local
        return None

    failed: list[int] = []
    for i, item in enumerate(items):
        current = set()
        failures.first = None
        sys.settrace(glob)
        item.ihook.pytest_runtest_protocol(
            item=item, nextitem=items[i + 1] if i + 1 < len(items) else None)
        sys.settrace(None)
        reached[i] = current
        if failures.first is not None:
            failed.append(i)
    out.write_bytes(pickle.dumps((reached, failed)))
    return 0


def _weight(nodeid: str) -> int:
    """Scenario tests first, property tests (many random matches each) last: a mutant most
    often dies in its first test, and the order decides how long that takes."""
    return 2 if nodeid.startswith("tests/property/") else 0 if "/unit/" in nodeid else 1


class MutationRun:
    """The pytest plugin: takes over the run loop once the tests are collected."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.summary: dict[str, int] = {}

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtestloop(self, session: pytest.Session) -> bool:
        args = self.args
        items = list(session.items)
        files = {str(ROOT / "buraco_log" / f"{m}.py") for m in MODULES}
        for m in MODULES:  # the plain sources must be what runs, or no mutant can live
            loaded = importlib.import_module(f"buraco_log.{m}").__file__ or ""
            if not loaded.endswith(".py") or loaded not in files:
                raise pytest.UsageError(
                    f"buraco_log.{m} is loaded from {loaded}: run in a copy of the tree with "
                    "the compiled modules (*.so) deleted, with PYTHONPATH at that copy")
        cache = Path(args.coverage)
        key = [it.nodeid for it in items]
        reached: dict[int, set[tuple[str, int]]] = {}
        failed: list[int] = []
        if cache.exists():
            saved_key, reached, failed = pickle.loads(cache.read_bytes())
            if saved_key != key:
                reached = {}
        if not reached:
            tmp = cache.with_suffix(".part")
            result, took = _fork(lambda: _trace_lines(items, files, tmp), 3600)
            if result != "0":
                raise pytest.UsageError(f"the tracing run ended with {result}")
            reached, failed = pickle.loads(tmp.read_bytes())
            cache.write_bytes(pickle.dumps((key, reached, failed)))
            tmp.unlink()
            print(f"traced {len(items)} tests in {took:.0f} s", file=sys.stderr)
        if failed:
            names = ", ".join(items[i].nodeid for i in failed[:5])
            print(f"{len(failed)} tests fail unmutated and are left out: {names}",
                  file=sys.stderr)
        by_line: dict[tuple[str, int], list[int]] = {}
        for i, lines in reached.items():
            if i not in failed:
                for where in lines:
                    by_line.setdefault(where, []).append(i)
        mutants = [m for mod in args.modules for m in make_mutants(mod)]
        if args.presets:
            mutants += preset_mutants()
        if args.only:
            mutants = [m for m in mutants if any(m.ident.startswith(o) for o in args.only)]
        if args.what:
            mutants = [m for m in mutants if args.what in m.what]
        with open(args.out or os.devnull, "a") as out:
            self._each(session, items, mutants, failed, by_line, out)
        print(json.dumps(self.summary), file=sys.stderr)
        return True

    def _each(self, session: pytest.Session, items: list[pytest.Item], mutants: list[Mutant],
              failed: list[int], by_line: dict[tuple[str, int], list[int]], out: Any) -> None:
        args = self.args
        for m in mutants:
            if m.preset:
                # every scenario test (the property tests would take minutes a survivor)
                chosen = [i for i in range(len(items))
                          if i not in failed and _weight(items[i].nodeid) < 2]
            else:
                path = str(ROOT / "buraco_log" / f"{m.module}.py")
                chosen = sorted({i for line in range(m.line, m.end_line + 1)
                                 for i in by_line.get((path, line), ())},
                                key=lambda i: (_weight(items[i].nodeid), i))
            row: dict[str, Any] = {"id": m.ident, "function": m.qualname, "what": m.what,
                                   "tests": len(chosen)}
            if not chosen:
                row["result"] = "uncovered"
            else:
                picked = [items[i] for i in chosen]
                result, took = _fork(functools.partial(self._child, m, picked), args.timeout)
                row["seconds"] = round(took, 1)
                row["result"] = {"0": "survived", "1": "killed", "timeout": "timeout"}.get(
                    result, f"error {result}")
                if result == "1":
                    row["by"] = Path(args.out + ".killer").read_text() if args.out else ""
            self.summary[row["result"]] = self.summary.get(row["result"], 0) + 1
            line = json.dumps(row)
            out.write(line + "\n")
            out.flush()
            if row["result"] not in ("killed", "timeout"):
                print(line, file=sys.stderr)

    def _child(self, m: Mutant, items: list[pytest.Item]) -> int:
        _quiet(items[0].config)
        failures = _Failures()
        items[0].config.pluginmanager.register(failures)
        apply(m)
        for _ in _run_items(items, True, failures):
            if failures.first is not None:
                if self.args.out:
                    Path(self.args.out + ".killer").write_text(failures.first)
                return 1
        return 0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("tests", nargs="*", default=["tests/unit", "tests/property", "tests/golden"])
    ap.add_argument("--modules", default=",".join(MODULES))
    ap.add_argument("--only", action="append", default=[],
                    help="mutant ids starting so (module:line, repeatable)")
    ap.add_argument("--what", default="", help="mutants whose description holds this text, "
                    "e.g. 'guard never taken'")
    ap.add_argument("--presets", action="store_true", help="the preset knob mutants too")
    ap.add_argument("--pytest", action="append", default=[], metavar="ARG",
                    help="an argument for pytest, e.g. --pytest=--ignore=tests/golden/x.py")
    ap.add_argument("--list", action="store_true", help="list the mutants and stop")
    ap.add_argument("--timeout", type=float, default=300, help="seconds a mutant (default 300)")
    ap.add_argument("--out", default="", help="JSON Lines file of results, appended to")
    ap.add_argument("--coverage", default="/tmp/mutate_engine.coverage",
                    help="cache of which test reaches which line (kept while the tests are)")
    args = ap.parse_args()
    args.modules = [m for m in args.modules.split(",") if m]
    if args.list:
        ms = [m for mod in args.modules for m in make_mutants(mod)]
        ms += preset_mutants() if args.presets else []
        for m in ms:
            if not args.only or any(m.ident.startswith(o) for o in args.only):
                print(m.ident, m.qualname, m.what)
        return
    plugin = MutationRun(args)
    code = pytest.main([*args.tests, *args.pytest, "-n", "0", "-p", "no:randomly",
                        "-p", "no:cacheprovider", "-m", "not slow", "-q", "--basetemp",
                        (args.out or "/tmp/mutate_engine") + ".bt"],
                       plugins=[plugin])
    sys.exit(0 if code in (0, 5) else int(code))


if __name__ == "__main__":
    main()
