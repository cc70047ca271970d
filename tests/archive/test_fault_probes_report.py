"""Fault probes, report: every canned report, in every format, on an empty archive, on one
holding only refused logs, and on one with matches of every preset (2 to 6 players, three
sides), as real processes. Each must exit 0 with every section, and JSON that is JSON."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from buraco_log.archive import ingest, query
from buraco_log.archive.report import CANNED
from tests.archive.conftest import Corpus

ROOT = Path(__file__).resolve().parents[2]


def strict(text: str) -> object:
    def refuse(word: str) -> object:
        raise ValueError(f"not JSON: {word}")
    return json.loads(text, parse_constant=refuse)


@pytest.fixture(scope="module")
def archives(corpus: Corpus, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("report-probes")
    empty_logs = base / "no-logs"
    empty_logs.mkdir()
    out = {"empty": base / "empty", "errors-only": base / "errors-only",
           "every-preset": base / "every-preset"}
    ingest([str(empty_logs)], out["empty"])
    ingest(list(corpus.bad), out["errors-only"])
    ingest([str(ROOT / "examples")], out["every-preset"], jobs=2)
    return out


KINDS = [(w, f) for w in ("empty", "errors-only", "every-preset")
         for f in ("table", "json", "html")]
# the rest of the matrix adds little and costs a process each: run with -m slow
QUICK = {("empty", "table"), ("empty", "json"), ("empty", "html"), ("errors-only", "json"),
         ("every-preset", "table"), ("every-preset", "json")}


@pytest.mark.parametrize(("which", "fmt"), [
    pytest.param(w, f, marks=() if (w, f) in QUICK else pytest.mark.slow) for w, f in KINDS])
def test_every_report_runs_on_every_kind_of_archive(archives: dict[str, Path], which: str,
                                                    fmt: str, tmp_path: Path) -> None:
    arch = archives[which]
    out = tmp_path / f"report.{fmt}"
    r = subprocess.run([sys.executable, "-m", "cli.main", "report", str(arch), "--format", fmt,
                        "--output", str(out), "--top", "0"], cwd=ROOT, capture_output=True,
                       text=True, timeout=120, check=False)
    assert (r.returncode, r.stderr) == (0, ""), r.stderr[-800:]
    text = out.read_text(encoding="utf-8")
    matches = query(arch, "SELECT count(*) AS n FROM matches").column("n")[0].as_py()
    if fmt == "json":
        data = strict(text)
        assert isinstance(data, dict) and data["matches"] == matches
        assert [s["name"] for s in data["sections"]] == [*CANNED, "leaderboard"]
        assert all(s["rows"] == [] for s in data["sections"]) == (matches == 0)
    elif fmt == "table":
        assert text.startswith(f"{matches:,} match{'' if matches == 1 else 'es'}, ")
        assert ("(no data)" in text) == (matches == 0) or which == "every-preset"
    else:
        assert text.startswith("<!DOCTYPE html>") and "<script" not in text


def test_the_preset_archive_holds_every_preset_and_three_sided_play(
        archives: dict[str, Path]) -> None:
    rows = query(archives["every-preset"], "SELECT count(DISTINCT preset) AS p, "
                 "max(n_players) AS most, max(n_sides) AS sides FROM matches").to_pylist()
    assert rows == [{"p": 8, "most": 6, "sides": 3}]
    assert query(archives["errors-only"], "SELECT count(*) AS n FROM errors"
                 ).column("n")[0].as_py() == 6
