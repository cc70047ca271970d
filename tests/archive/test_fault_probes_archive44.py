"""Fault probes, round 44, of the DuckDB archive.

1. Fixtures: a test module never defines a fixture under the name of one its conftest holds
   (probe 42's ``three`` ingested other logs than the shared ``three``: which one a test saw
   hung on the module it sat in)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.cli.probes import ROOT

TESTS = ROOT / "tests"
AREAS = ("archive", "view", "spark")


def fixtures(path: Path) -> set[str]:
    """The names of the functions of ``path`` decorated as pytest fixtures (``name=`` too)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if not isinstance(node, ast.FunctionDef):
            continue
        for dec in node.decorator_list:
            call = dec if isinstance(dec, ast.Call) else None
            target = call.func if call else dec
            if ast.unparse(target) not in ("pytest.fixture", "fixture"):
                continue
            named = [k.value for k in (call.keywords if call else []) if k.arg == "name"]
            found.add(named[0].value if named and isinstance(named[0], ast.Constant)
                      else node.name)
    return found


@pytest.mark.parametrize("area", AREAS)
def test_no_test_module_shadows_a_fixture_of_its_conftest(area: str) -> None:
    """Before: test_fault_probes_archive42 (``three``, ``arch``), test_cli_conventions2,
    test_fault_probes_archive38, test_fault_probes_archive42b and test_fault_probes_damage
    (``arch``) each defined again a fixture tests/archive/conftest.py holds."""
    shared = fixtures(TESTS / "conftest.py") | fixtures(TESTS / area / "conftest.py")
    assert "arch" in shared or area != "archive"  # the scan reads what it must see
    clashes = {p.name: sorted(fixtures(p) & shared)
               for p in sorted((TESTS / area).glob("*.py")) if p.name != "conftest.py"}
    assert {k: v for k, v in clashes.items() if v} == {}
