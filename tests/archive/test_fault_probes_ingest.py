"""Fault probes, ingest: a log rewritten while it is checked, an ingest killed (SIGKILL) at
each rename of a run and run again, an archive path that is a file or of another layout, a
second ingest while one holds the lock. Real processes, under timeouts."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from buraco_log import audit
from buraco_log.archive import ingest, query, store
from tests.archive.conftest import Corpus
from tests.archive.ingest_sums import checksums

ROOT = Path(__file__).resolve().parents[2]


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cli.main", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=120, check=False,
                          stdin=subprocess.DEVNULL)


def one_line(r: subprocess.CompletedProcess[str]) -> str:
    assert r.returncode != 0 and "Traceback" not in r.stderr, r.stderr
    assert r.stderr.startswith("buraco-log: error: ") and r.stderr.count("\n") == 1, r.stderr
    return r.stderr


@pytest.fixture(scope="module")
def logs(corpus: Corpus, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Four good logs and one refused (one batch of every table, errors too)."""
    d = tmp_path_factory.mktemp("probe-logs")
    for p in corpus.good[:4]:
        shutil.copy(p, d)
    bad = next(p for p, code in corpus.bad.items() if code == "incomplete")
    shutil.copy(bad, d)
    return d


@pytest.fixture(scope="module")
def reference(logs: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    arch = tmp_path_factory.mktemp("probe-ref") / "a"
    ingest([str(logs)], arch)
    return checksums(arch)


# Run the CLI with os.replace and os.link wrapped: the k-th rename kills the process with
# SIGKILL (the marker's, a link where no other may exist; then each staged file's, the batch
# record's, the ratings').
KILLER = """
import os, signal, sys
k, n, real, link = int(sys.argv[1]), [0], os.replace, os.link
def killing(call):
    def renamed(a, b, **kw):
        n[0] += 1
        if n[0] == k:
            os.kill(os.getpid(), signal.SIGKILL)
        return call(a, b, **kw)
    return renamed
os.replace, os.link = killing(real), killing(link)
sys.argv = ["buraco-log", *sys.argv[2:]]
from cli.main import run
run()
"""


SLOW = pytest.mark.slow


# 1: the marker; 2-7: the staged files (errors first); 8: the batch record; 9: the ratings.
@pytest.mark.parametrize("k", [1, pytest.param(2, marks=SLOW), pytest.param(5, marks=SLOW),
                               7, 8, pytest.param(9, marks=SLOW)])
def test_an_ingest_killed_at_any_rename_and_run_again_loses_and_doubles_nothing(
        logs: Path, reference: dict[str, Any], tmp_path: Path, k: int) -> None:
    """k=1 (killed while the archive's marker was written) left archive.json.tmp-*, and every
    later ingest refused the directory as "not empty and not an archive"."""
    arch = tmp_path / "a"
    killed = subprocess.run([sys.executable, "-c", KILLER, str(k), "ingest", str(logs),
                             "--archive", str(arch), "--jobs", "1"], cwd=ROOT,
                            capture_output=True, text=True, timeout=120, check=False)
    assert killed.returncode in (-9, 1), killed.stderr  # 1: the run ended before rename k
    again = cli("ingest", str(logs), "--archive", str(arch), "--jobs", "1")
    assert again.returncode in (0, 1), again.stderr  # 1: the incomplete log refused now
    assert checksums(arch) == reference
    assert not [n for n in os.listdir(arch) if ".tmp-" in n]


@pytest.fixture
def shifting(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, bytes]]:
    """audit.read_log_signed that rewrites the named files with other bytes just after reading them:
    a log changing between the hash ingest takes first and its check."""
    swaps: dict[str, bytes] = {}
    real = audit.read_log_signed

    def read_log(path: str | os.PathLike[str]
                 ) -> tuple[list[Any], audit.Integrity, audit.Signed]:
        out = real(path)
        if str(path) in swaps:
            Path(path).write_bytes(swaps.pop(str(path)))
        return out

    monkeypatch.setattr(audit, "read_log_signed", read_log)
    yield swaps


def test_a_log_rewritten_during_its_check_is_not_stored_under_its_old_hash(
        corpus: Corpus, tmp_path: Path, shifting: dict[str, bytes]) -> None:
    """Before: the verdict of one set of bytes went into the tables under another's hash. A
    good log overwritten by garbage while checked was refused under the good bytes' hash, so
    a later ingest of the good log skipped it for ever as "refused before"."""
    good = tmp_path / "live.blog"
    shutil.copy(corpus.good[0], good)
    garbage = b"BURACOLG" + bytes(200)
    bad = tmp_path / "garbage.blog"
    bad.write_bytes(garbage)
    arch = tmp_path / "a"
    # the check reads garbage, then the file becomes the good log again
    shutil.copy(bad, good)
    shifting[str(good)] = Path(corpus.good[0]).read_bytes()
    rep = ingest([str(good)], arch, jobs=1)
    assert [(e.rule, e.path) for e in rep.errors] == [("archive.file_changed", str(good))]
    assert "changed while it was being ingested" in rep.errors[0].message
    assert query(arch, "SELECT file_sha256 FROM errors").to_pylist() == [{"file_sha256": ""}]
    rep = ingest([str(good)], arch, jobs=1)  # nothing writes to it now: it is stored
    assert (rep.added, rep.known_errors, rep.errors) == (1, 0, [])


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_log_rewritten_during_its_check_adds_no_rows(corpus: Corpus, tmp_path: Path,
                                                       shifting: dict[str, bytes],
                                                       jobs: int) -> None:
    """A good log that becomes another match once read: neither match is stored under the
    first one's hash (two jobs: the check runs in a forked worker, the parent sees it)."""
    live = tmp_path / "live.blog"
    shutil.copy(corpus.good[0], live)
    shifting[str(live)] = Path(corpus.good[1]).read_bytes()
    arch = tmp_path / "a"
    rep = ingest([str(live), corpus.good[2]], arch, jobs=jobs, chunk_size=1)
    assert [e.rule for e in rep.errors] == ["archive.file_changed"] and rep.added == 1
    stored = query(arch, "SELECT source_path FROM matches").column(0).to_pylist()
    assert stored == [corpus.good[2]]
    assert query(arch, "SELECT count(*) AS n FROM events WHERE game_id NOT IN "
                       "(SELECT game_id FROM matches)").to_pylist() == [{"n": 0}]
    rep = ingest([str(live)], arch, jobs=jobs)  # now the bytes stay: stored
    assert (rep.added, rep.errors) == (1, [])


def test_an_archive_path_that_is_a_file_is_one_clear_line(logs: Path, tmp_path: Path) -> None:
    f = tmp_path / "not-a-dir"
    f.write_text("x")
    err = one_line(cli("ingest", str(logs), "--archive", str(f)))
    assert f"{f}: is a file, not an archive directory" in err
    r = cli("ingest", str(logs), "--archive", str(f), "--format", "json")
    assert json.loads(r.stdout)["error"]["message"].endswith("is a file, not an archive "
                                                             "directory")
    assert f.read_text() == "x"


@pytest.mark.parametrize(("version", "shown"), [pytest.param(99, "version 99,", marks=SLOW),
                                                ("2", "version '2',")])
def test_an_archive_of_another_layout_is_refused_by_every_command(
        logs: Path, tmp_path: Path, version: object, shown: str) -> None:
    arch = tmp_path / "a"
    ingest([str(logs)], arch)
    marker = arch / store.MARKER
    meta = json.loads(marker.read_text())
    marker.write_text(json.dumps({**meta, "version": version}))
    before = sorted(os.listdir(arch))
    for args in (["ingest", str(logs), "--archive", str(arch)],
                 ["query", str(arch), "SELECT 1"], ["report", str(arch)]):
        err = one_line(cli(*args))
        assert shown in err and "this buraco_log reads version" in err, err
    assert sorted(os.listdir(arch)) == before


def test_a_second_ingest_while_one_holds_the_lock_is_one_line(logs: Path,
                                                              tmp_path: Path) -> None:
    arch = tmp_path / "a"
    ingest([str(logs)], arch)
    with store.locked(str(arch)):
        err = one_line(cli("ingest", str(logs), "--archive", str(arch)))
        assert "another ingest is running on this archive" in err
        r = cli("ingest", str(logs), "--archive", str(arch), "-f", "json")
        assert json.loads(r.stdout)["error"]["code"] == "archive"
        # readers never wait for the lock
        r = cli("query", str(arch), "SELECT count(*) AS n FROM matches", "-f", "csv")
        assert r.stdout == "n\n4\n"
