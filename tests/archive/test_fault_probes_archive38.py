"""Fault probes, round 38, of an archive damaged or odd on disk, as real processes: committed
Parquet files cut short or swapped (between partitions, between tables), a missing table
directory, stray files, unreadable files and a read-only archive, a compact killed (SIGKILL)
at several points, symbolic links inside the tree, thousands of tiny files, `INSTALL` named as
itself, and a SIGTERM that comes while ingest prints its summary."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from buraco_log.archive import ingest, query, store, views
from buraco_log.errors import ArchiveError

ROOT = Path(__file__).resolve().parents[2]
SIM = ROOT / "examples" / "sim"
MORE = SIM / "classic-6p-000000.blog"  # a log to append


def cli(*args: object, prefix: tuple[str, ...] = (), timeout: float = 120
        ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*prefix, sys.executable, "-m", "cli.main", *map(str, args)],
                          cwd=ROOT, capture_output=True, text=True, timeout=timeout,
                          check=False, stdin=subprocess.DEVNULL)


def one_line(r: subprocess.CompletedProcess[str], lead: str, *words: str) -> None:
    """Exit 1, nothing on stdout, and one line on stderr that begins with ``lead``."""
    assert r.returncode == 1 and "Traceback" not in r.stderr, (r.returncode, r.stderr[-800:])
    assert r.stdout == "" and r.stderr.count("\n") == 1, (r.stdout[-300:], r.stderr)
    assert r.stderr.startswith(f"buraco-log: error: {lead}"), r.stderr
    for w in words:
        assert w in r.stderr, r.stderr


def tree(a: Path) -> dict[str, str]:
    """Every file of the archive (the lock aside) and its SHA-256."""
    return {str(p.relative_to(a)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(a.rglob("*")) if p.is_file() and not p.is_symlink()
            and p.name != store.LOCK}


SUMS = {t: f"SELECT count(*) AS n, bit_xor(hash(x)) AS h FROM (SELECT * {ex} FROM {t}) x"
        for t, ex in (("matches", "EXCLUDE (batch)"), ("hands", ""), ("events", ""),
                      ("melds", ""), ("players", ""), ("errors", "EXCLUDE (batch)"))}


def sums(a: Path) -> dict[str, Any]:
    return {t: query(a, sql).to_pylist()[0] for t, sql in SUMS.items()}


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Four batches, one ingest each: two of thirteen-quick (one partition), one of thirteen,
    one refused log (the errors table)."""
    a = tmp_path_factory.mktemp("a38") / "a"
    for log in (SIM / "thirteen-quick-4p-000000.blog", SIM / "thirteen-quick-2p-000000.blog",
                SIM / "thirteen-4p-000000.blog", ROOT / "examples/disputes/illegal.log"):
        ingest([str(log)], a, jobs=1)
    assert len(store.manifests(str(a))) == 4
    return a


@pytest.fixture
def base_copy(base: Path, tmp_path: Path) -> Path:
    a = tmp_path / "a"
    shutil.copytree(base, a, symlinks=True)
    return a


def holding(a: Path, preset: str) -> dict[str, Any]:
    """The first batch record with files of ``preset`` (batch ids of one second sort by
    their random part, not in the order of the ingests)."""
    return next(m for m in store.manifests(str(a))
                if any(f"/preset={preset}/" in rel for rels in m["files"].values()
                       for rel in rels))


def part(a: Path, table: str, preset: str) -> Path:
    """The ``table`` file of the first batch holding ``preset``."""
    rels: list[str] = holding(a, preset)["files"][table]
    return a / rels[0]


def cut(at: Callable[[int], int]) -> Callable[[Path], list[Path]]:
    def damage(a: Path) -> list[Path]:
        p = part(a, "events", "thirteen-quick")
        os.chmod(p, 0o644)
        os.truncate(p, at(p.stat().st_size))
        return [p]
    return damage


def swap(first: tuple[str, str], second: tuple[str, str]) -> Callable[[Path], list[Path]]:
    def damage(a: Path) -> list[Path]:
        p, q = part(a, *first), part(a, *second)
        tmp = a / "swap.tmp"
        p.rename(tmp)
        q.rename(p)
        tmp.rename(q)
        return [p, q]
    return damage


DAMAGE = {
    "cut-in-footer": cut(lambda n: n - 5),
    "cut-in-middle": cut(lambda n: n // 2),
    "cut-to-nothing": cut(lambda n: 0),
    "swapped-partitions": swap(("events", "thirteen-quick"), ("events", "thirteen")),
    "swapped-tables": swap(("hands", "thirteen-quick"), ("melds", "thirteen-quick")),
}


@pytest.mark.parametrize("kind", [pytest.param(k, marks=() if k == "swapped-partitions"
                                               else pytest.mark.slow) for k in DAMAGE])
def test_a_file_cut_short_or_swapped_is_named_by_every_command_and_nothing_changes(
        base_copy: Path, kind: str) -> None:
    """Before: files swapped between partitions were read with the wrong preset, exit 0
    (between tables, report failed with a binder error naming no file); a file cut short
    was "cannot open the archive's views: ... No magic bytes found"; ingest appended to all
    of them, exit 0."""
    damaged = DAMAGE[kind](base_copy)
    before = tree(base_copy)
    named = tuple(map(str, damaged))
    for args in (("query", base_copy, "SELECT count(*) FROM matches"), ("report", base_copy),
                 ("compact", base_copy), ("ingest", MORE, "--archive", base_copy, "-j", "1")):
        r = cli(*args)
        one_line(r, "", "damaged archive file")
        assert r.stderr.split(": ")[2].startswith(named), r.stderr  # the file leads the line
    r = cli("verify", base_copy)
    assert r.returncode == 1 and all(
        re.search(rf"^buraco-log: error: {re.escape(str(p))}: .* \[archive.part_changed\]$",
                  r.stderr, re.M) for p in named), r.stderr
    assert tree(base_copy) == before  # no partial rewrite, nothing deleted, nothing appended


@pytest.mark.parametrize("size", [100, 0])
def test_a_file_cut_short_in_a_batch_without_sizes_is_named_first(base_copy: Path,
                                                                  size: int) -> None:
    """Records written before fingerprints were kept give no size to check: DuckDB finds the
    damage. Before: "query: InvalidInputException: ... No magic bytes found at end of file
    'PATH'", the file inside the message."""
    for record in (base_copy / store.BATCHES).glob("*.json"):
        data = json.loads(record.read_text())
        data.pop("fingerprints")
        record.write_text(json.dumps(data))
    victim = cut(lambda n: size)(base_copy)[0]
    why = "No magic bytes found at end of file" if size else "File too small to be a Parquet"
    one_line(cli("query", base_copy, "SELECT count(*) FROM events"),
             f"{victim}: damaged archive file: {why}")


def test_a_missing_table_directory_is_one_line_naming_it(base_copy: Path) -> None:
    """Before: the first of its files, as if one file were lost."""
    shutil.rmtree(base_copy / "hands")
    one_line(cli("query", base_copy, "SELECT count(*) FROM matches"), f"{base_copy / 'hands'}: ",
             "directory of the hands table is missing")


def test_stray_files_in_a_partition_are_left_alone_by_compact_and_verify(base_copy: Path) -> None:
    where = part(base_copy, "events", "thirteen-quick").parent
    strays = [where / "README.txt", where / ".DS_Store", where / "empty", base_copy / "errors/x"]
    for p in strays:
        p.write_bytes(b"" if p.name == "empty" else b"not the archive's\n")
    (where / "x.parquet").mkdir()
    before = sums(base_copy)
    assert cli("compact", base_copy).returncode == 0
    r = cli("verify", base_copy)
    assert r.returncode == 0 and "leftover" not in r.stdout, r.stdout + r.stderr
    assert sums(base_copy) == before and all(p.exists() for p in strays)
    assert (where / "x.parquet").is_dir() and len(store.manifests(str(base_copy))) == 1


def _without_root_powers() -> tuple[str, ...]:
    """A command prefix under which file permissions bind this test's subprocess: none for
    a user; for root, setpriv without the capabilities that let root past them."""
    if os.geteuid() != 0:
        return ()
    setpriv = shutil.which("setpriv")
    caps = "-dac_override,-dac_read_search,-fowner"
    prefix: tuple[str, ...] = ((setpriv, f"--inh-caps={caps}", f"--bounding-set={caps}")
                               if setpriv else ())
    if not prefix or subprocess.run([*prefix, "true"], capture_output=True,
                                    check=False).returncode != 0:
        pytest.skip("running as root, whom file permissions do not bind, and setpriv cannot "
                    "drop the capabilities that let root past them")
    return prefix


def test_an_unreadable_committed_file_is_named_as_unreadable_not_damaged(base_copy: Path) -> None:
    """Before: query said "cannot open the archive's views: IO Error: ...", and ingest called
    the file damaged ("damaged archive file: [Errno 13] Failed to open local file")."""
    prefix = _without_root_powers()
    victim = part(base_copy, "matches", "thirteen")
    before = tree(base_copy)
    os.chmod(victim, 0)
    for args in (("query", base_copy, "SELECT count(*) FROM matches"), ("compact", base_copy),
                 ("ingest", MORE, "--archive", base_copy, "-j", "1")):
        r = cli(*args, prefix=prefix)
        one_line(r, f"{victim}: ", "cannot be read: Permission denied")
        assert "damaged" not in r.stderr
    r = cli("verify", base_copy, prefix=prefix)
    assert r.returncode == 1 and r.stderr.endswith("Permission denied (batch "
                                                   f"{victim.name[5:-8]}: let the user who "
                                                   "reads the archive read it) "
                                                   "[archive.part_unreadable]\n"), r.stderr
    os.chmod(victim, 0o444)  # for this test's own reading, were it not root
    assert tree(base_copy) == before


def test_a_read_only_archive_is_refused_by_ingest_and_compact_in_one_line(base_copy: Path) -> None:
    """Before: "ARCHIVE/.staging: Permission denied", exit 2 (a usage error)."""
    prefix = _without_root_powers()
    before = tree(base_copy)
    os.chmod(base_copy, 0o555)
    try:
        for args in (("ingest", MORE, "--archive", base_copy, "-j", "1"), ("compact", base_copy)):
            one_line(cli(*args, prefix=prefix), f"{base_copy}: the archive cannot be written")
        assert cli("query", base_copy, "SELECT 1", prefix=prefix).returncode == 0
    finally:
        os.chmod(base_copy, 0o755)
    assert tree(base_copy) == before


# The CLI with one step of compact paused: it touches the file named by argv[1] there, then
# sleeps, so the test can kill it (SIGKILL) at that very point.
PAUSED = """
import os, sys, time
from buraco_log.archive import compact, store
marker, point = sys.argv[1], sys.argv[2]
module, name, at = {"gather": (compact, "_read", 3), "staging": (store, "_stage", 3),
                    "cleanup": (store, "recover", 2)}[point]
real, calls = getattr(module, name), [0]
def paused(*args, **kwargs):
    calls[0] += 1
    out = real(*args, **kwargs) if point == "staging" else None
    if calls[0] == at:
        open(marker, "w").close()
        time.sleep(60)
    return out if point == "staging" else real(*args, **kwargs)
setattr(module, name, paused)
sys.argv = ["buraco-log", *sys.argv[3:]]
from cli.main import run
run()
"""


@pytest.mark.parametrize("point", ["staging", pytest.param("gather", marks=pytest.mark.slow),
                                   pytest.param("cleanup", marks=pytest.mark.slow)])
def test_a_compact_killed_anywhere_reads_the_same_and_verify_names_the_leftovers(
        base_copy: Path, tmp_path: Path, point: str) -> None:
    """staging: the files of the merged batch half written; cleanup: the merged batch
    committed, the batches it replaced not yet removed. Before: verify said "every file as
    committed" and nothing of the files left."""
    before = sums(base_copy)
    marker = tmp_path / "paused"
    proc = subprocess.Popen([sys.executable, "-c", PAUSED, str(marker), point, "compact",
                             str(base_copy)], cwd=ROOT, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 90
        while not marker.exists():
            assert proc.poll() is None and time.monotonic() < deadline, "never paused"
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.kill()
        proc.wait(30)
    assert sums(base_copy) == before
    r = cli("verify", base_copy)
    assert r.returncode == 0 and "every file as committed" in r.stdout, r.stdout + r.stderr
    if point != "gather":
        assert re.search(r"leftover files \([\d,]+ bytes\) of an interrupted ingest or "
                         "compact", r.stdout), r.stdout
        left = json.loads(cli("verify", base_copy, "-f", "json").stdout)["leftovers"]
        assert left and all(not os.path.islink(base_copy / p) and (base_copy / p).is_file()
                            for p in left)
    again = cli("compact", base_copy)
    said = ("nothing to compact" if point == "cleanup" else "merged 4 batches into 1")
    assert again.returncode == 0 and said in again.stdout, again  # cleanup: merged already
    assert (point == "gather") != again.stdout.startswith("cleaned up after"), again.stdout
    assert sums(base_copy) == before and len(store.manifests(str(base_copy))) == 1
    r = cli("verify", base_copy, "-f", "json")
    assert r.returncode == 0 and json.loads(r.stdout)["leftovers"] == [], r.stdout


def test_links_in_the_tree_are_named_by_verify_and_never_followed(base_copy: Path,
                                                                  tmp_path: Path) -> None:
    """A loop, a link up the tree, links out of it (one named as an uncommitted part): no
    command hangs or follows one, and nothing where they lead is deleted. Before: verify
    said "every file as committed", exit 0, while query refused the archive."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "part-20990101T000000Z-00000000.parquet").write_text("someone else's")
    (outside / "mine.txt").write_text("someone else's")
    where = part(base_copy, "events", "thirteen-quick").parent
    links = {"loop": "loop", "up": "../..", "out": str(outside),
             "part-20990101T000000Z-11111111.parquet": str(outside / "mine.txt")}
    for name, to in links.items():
        (where / name).symlink_to(to)
    r = cli("verify", base_copy)
    assert r.returncode == 1 and "4 symbolic links in the archive" in r.stdout, r.stdout
    assert all(re.search(rf"^buraco-log: error: {re.escape(str(where / name))}: .* "
                         r"\[archive.link\]$", r.stderr, re.M) for name in links), r.stderr
    one_line(cli("query", base_copy, "SELECT 1"), f"{where}/",
             "symbolic links are not allowed inside an archive")
    assert cli("compact", base_copy, timeout=60).returncode == 0
    assert sorted(p.name for p in outside.iterdir()) == [
        "mine.txt", "part-20990101T000000Z-00000000.parquet"]
    assert (outside / "mine.txt").read_text() == "someone else's"


def test_a_batch_record_that_links_out_of_the_archive_is_not_read(base_copy: Path,
                                                                 tmp_path: Path) -> None:
    """Before: ingest read the record where the link led, and went on (exit 0)."""
    record = sorted((base_copy / store.BATCHES).glob("*.json"))[0]
    moved = tmp_path / record.name
    shutil.move(record, moved)
    record.symlink_to(moved)
    one_line(cli("ingest", MORE, "--archive", base_copy, "-j", "1"), f"{record}: ",
             "symbolic links are not allowed inside an archive")


def _clone(a: Path, times: int) -> dict[str, int]:
    """Copy a batch of one match ``times`` times under new batch ids (hard links: the same
    bytes, so its fingerprints hold): the archive of an hourly ingest of one log. Returns the
    rows each table gained."""
    record = holding(a, "thirteen-quick")
    for i in range(times):
        batch = f"20200101T000000Z-{i:08x}"
        files = {t: [rel.replace(record["batch"], batch) for rel in rels]
                 for t, rels in record["files"].items()}
        for rels, new in zip(record["files"].values(), files.values(), strict=True):
            for old, rel in zip(rels, new, strict=True):
                os.link(a / old, a / rel)
        fps = {rel.replace(record["batch"], batch): fp
               for rel, fp in record["fingerprints"].items()}
        (a / store.BATCHES / f"{batch}.json").write_text(json.dumps(
            {**record, "batch": batch, "files": files, "fingerprints": fps}))
    return {t: n * times for t, n in record["rows"].items()}


COUNTS = ("SELECT (SELECT count(*) FROM matches) AS matches, (SELECT count(*) FROM events) "
          "AS events, (SELECT sum(seq) FROM events) AS seqs, (SELECT count(*) FROM players) "
          "AS players, (SELECT count(*) FROM errors) AS errors")


@pytest.mark.slow
def test_thousands_of_tiny_files_query_right_and_compact_merges_them(base_copy: Path) -> None:
    """Measured with 3,003 one-match batches (15,158 files): a query 6.0 s before compact
    and 2.8 s after (of which 2.5 s is starting the command), the report 49 s and 20 s."""
    start = query(base_copy, COUNTS).to_pylist()[0]
    gained = _clone(base_copy, 300)
    files = sum(len(rels) for m in store.manifests(str(base_copy)) for rels in m["files"].values())
    assert files > 1500
    r = cli("query", base_copy, COUNTS, "-f", "json")
    assert r.returncode == 0, r.stderr
    many = json.loads(r.stdout)[0]
    for t in ("matches", "events", "players", "errors"):
        assert many[t] == start[t] + gained[t], (t, many, start, gained)
    c = cli("compact", base_copy, timeout=600)
    assert c.returncode == 0 and "merged 304 batches into 1" in c.stdout, c.stdout + c.stderr
    assert json.loads(cli("query", base_copy, COUNTS, "-f", "json").stdout)[0] == many
    after = sum(len(rels) for m in store.manifests(str(base_copy)) for rels in m["files"].values())
    assert after == 11  # one file per table and partition


def test_install_is_refused_naming_install(base_copy: Path) -> None:
    """DuckDB types INSTALL as a LOAD statement: the refusal said "not LOAD"."""
    r = cli("query", base_copy, "INSTALL httpfs")
    one_line(r, "query: only read-only SELECT statements are allowed, not INSTALL\n")
    for sql, word in (("/* x */ force install httpfs", "FORCE INSTALL"), ("LOAD httpfs", "LOAD"),
                      ("EXPLAIN INSTALL httpfs", "EXPLAIN of INSTALL")):
        with pytest.raises(ArchiveError, match=f"allowed, not {word}$"):
            views.check_sql(sql)


# The CLI with typer.echo slowed just after ingest's summary line: it touches the file named
# by argv[1], then sleeps, so the test can send SIGTERM once the summary is out.
AFTER_SUMMARY = """
import sys, time, typer
marker, real = sys.argv[1], typer.echo
def echo(message=None, *args, **kwargs):
    real(message, *args, **kwargs)
    if isinstance(message, str) and " added (" in message:
        sys.stdout.flush()
        open(marker, "w").close()
        time.sleep(60)
typer.echo = echo
sys.argv = ["buraco-log", *sys.argv[2:]]
from cli.main import run
run()
"""


def test_a_sigterm_after_the_summary_exits_143_saying_everything_is_committed(
        tmp_path: Path) -> None:
    """Before: the SIGTERM handler was gone once the run returned, so the process died of
    the signal without a word (status -15)."""
    a, marker = tmp_path / "a", tmp_path / "summary"
    proc = subprocess.Popen([sys.executable, "-c", AFTER_SUMMARY, str(marker), "ingest",
                             str(MORE), "--archive", str(a), "-j", "1"], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 90
        while not marker.exists():
            assert proc.poll() is None and time.monotonic() < deadline, proc.stderr
            time.sleep(0.05)
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
        proc.wait(30)
    assert proc.returncode == 143, (proc.returncode, err)
    assert out.startswith("1 log: 1 match added"), out
    assert err == ("buraco-log: error: terminated (SIGTERM) while the summary was written: "
                   "every log of the run is checked and committed, nothing is left to do (the "
                   "summary on stdout may be cut short)\n"), err
    assert query(a, "SELECT count(*) AS n FROM matches").to_pylist() == [{"n": 1}]
