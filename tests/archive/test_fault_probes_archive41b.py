"""Fault probes, round 41b, of the DuckDB archive: a file met before is known by its hash and
its form (binary or JSON Lines) across runs, as within one; query and report say when parts
of no batch record are left out; ingest names the operation whose leftovers it cleaned up;
error lines escape a non-UTF-8 name as the tables do; report checks the parts' checksums."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from buraco_log.archive import ingest, store
from tests.cli.probes import ROOT, cli, one_error_line

SIM = ROOT / "examples" / "sim"


def logs_of(arch: Path) -> list[Path]:
    return sorted((arch.parent / "logs").glob("*.blog"))


def batches(arch: Path) -> list[str]:
    return [m["batch"] for m in store.manifests(str(arch))]


# -- 1. a file met before: its hash and its form, across runs --------------------------------

def test_a_binary_logs_bytes_named_jsonl_are_refused_in_a_later_run_too(
        tmp_path: Path, three: Path) -> None:
    """Before: refused beside the .blog in one run, "already stored" in a later one."""
    arch = tmp_path / "arch"
    blog = logs_of(three)[0]
    src = tmp_path / "src"
    src.mkdir()
    shutil.copy(blog, src / "m.blog")
    assert ingest([str(src / "m.blog")], arch).added == 1
    shutil.copy(blog, src / "m.jsonl")
    later = ingest([str(src / "m.jsonl")], arch)
    assert (later.already_stored, later.added, [e.path for e in later.errors]) == (
        0, 0, [str(src / "m.jsonl")])
    together = ingest([str(src)], tmp_path / "one")
    assert (together.added, len(together.errors)) == (1, 1)
    assert together.errors[0].rule == later.errors[0].rule
    # and the run after knows each file as what it was: stored, refused
    again = ingest([str(src)], arch)
    assert (again.already_stored, again.known_errors, again.errors) == (1, 1, [])


def test_a_refused_empty_jsonl_does_not_make_an_empty_blog_refused_before(
        tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "e.jsonl").write_bytes(b"")
    arch = tmp_path / "arch"
    assert len(ingest([str(src / "e.jsonl")], arch).errors) == 1
    (src / "e.blog").write_bytes(b"")
    later = ingest([str(src / "e.blog")], arch)
    assert later.known_errors == 0 and len(later.errors) == 1
    assert "header" in later.errors[0].message, later.errors[0]


# -- 2. query and report say when parts of no record are left out ----------------------------

def test_query_and_report_say_in_one_line_that_parts_of_no_record_are_left_out(
        arch: Path) -> None:
    """Before: their rows were left out without a word (only verify named the parts)."""
    clean = cli("query", arch, "SELECT count(*) AS n FROM matches")
    assert clean.returncode == 0 and clean.stderr == "", clean.stderr
    gone = batches(arch)[0]
    (arch / "_batches" / f"{gone}.json").unlink()
    for command in (("query", arch, "SELECT count(*) AS n FROM matches", "-f", "csv"),
                    ("report", arch, "-f", "json")):
        r = cli(*command)
        assert r.returncode == 0, r.stderr
        assert r.stderr.splitlines() == [
            f"buraco-log: note: {arch}: 5 part files of no batch record left out of this "
            f"{command[0]} (their records were deleted or lost): `buraco-log verify {arch}` "
            "names them"], r.stderr
        assert "part file" not in r.stdout  # the data alone on stdout
        if command[0] == "query":
            assert r.stdout.splitlines() == ["n", "2"]


# -- 3. ingest names the operation whose leftovers it cleaned up ---------------------------

def cleaned_line(arch: Path) -> str:
    r = cli("ingest", SIM / "classic-2p-000000.blog", "--archive", arch)
    assert r.returncode == 0, r.stderr
    lines = [x for x in r.stdout.splitlines() if x.startswith("cleaned up after")]
    assert len(lines) == 1, r.stdout
    return lines[0]


def test_ingest_after_a_drop_cut_short_says_a_drop_was(
        arch: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Before: "cleaned up after an interrupted ingest", of a drop's leftovers."""
    victim = batches(arch)[0]
    calls = [0]
    real = store.recover

    def recover(root: str, *args: float) -> list[str]:
        calls[0] += 1
        if calls[0] == 2:  # the one after the records went: as if killed there
            raise KeyboardInterrupt
        return real(root, *args)

    monkeypatch.setattr(store, "recover", recover)
    with pytest.raises(KeyboardInterrupt):
        store.drop_batches(str(arch), [victim])
    monkeypatch.undo()
    assert cleaned_line(arch) == "cleaned up after an interrupted drop: 5 uncommitted file(s)"


def test_ingest_after_a_compact_cut_short_says_a_compact_was(arch: Path) -> None:
    from tests.archive.killed_at import killed

    old = batches(arch)
    killed("unlink", 6, "compact", arch)  # among the replaced batches' files
    assert any(sorted(arch.rglob(f"part-{b}.parquet")) for b in old)
    line = cleaned_line(arch)
    assert line.startswith("cleaned up after an interrupted compact: "), line
    assert not any(sorted(arch.rglob(f"part-{b}.parquet")) for b in old)


def test_the_json_report_names_what_was_cut_short(arch: Path) -> None:
    staged = arch / store.STAGING / "20261205T073023Z-b6296bc5" / "errors"
    staged.mkdir(parents=True)
    (staged / "part-20261205T073023Z-b6296bc5.parquet").write_bytes(b"PAR1")
    report = ingest([str(SIM / "classic-2p-000000.blog")], arch)
    assert (len(report.recovered), report.cut_short) == (1, ["ingest or compact"])
    assert ingest([str(SIM / "classic-2p-000000.blog")], arch).cut_short == []


# -- 4. one escape of a byte that is not UTF-8, in error lines as in the tables ---------------

def test_an_error_line_names_a_non_utf8_path_as_the_refused_lines_do(tmp_path: Path) -> None:
    """Before: "bad\\udcfdname.blog: no such file or directory", where the refused: line and
    the errors table said bad\\xfdname.blog."""
    import os

    from buraco_log.safetext import terminal_safe

    assert terminal_safe(os.fsdecode(b"a\xfd\x1b.blog")) == "a\\xfd\\x1b.blog"
    assert terminal_safe("lone \udc12") == "lone \\udc12"  # not a byte: as before
    src = tmp_path / "src"
    src.mkdir()
    bad = os.fsdecode(str(src).encode() + b"/bad\xfdname.blog")
    with open(bad, "wb") as f:
        f.write(b"not a log")
    arch = tmp_path / "arch"
    refused = cli("ingest", bad, "--archive", arch)
    assert refused.returncode == 1, refused.stderr
    shown = f"{src}/bad\\xfdname.blog"
    assert f"refused: {shown}:" in refused.stdout, refused.stdout
    line = one_error_line(cli("ingest", bad + ".missing", "--archive", arch), 2)
    assert line == f"buraco-log: error: {shown}.missing: No such file or directory", line


# -- 5. report checks the parts' checksums first ---------------------------------------------

def test_a_bit_flipped_in_a_part_is_refused_by_report_in_one_line(arch: Path) -> None:
    """Before: report gave wrong rows without a word (only verify found it). A query reads a
    part back only when it was written after its record (docs/archive.md, Fixity), as here."""
    import json

    record = json.loads((arch / "_batches" / f"{batches(arch)[0]}.json").read_text())
    part = arch / record["files"]["matches"][0]
    data = bytearray(part.read_bytes())
    footer = int.from_bytes(data[-8:-4], "little")  # often more than half a small part
    data[(len(data) - 8 - footer) // 2] ^= 0x01  # in the rows: len // 2 hit the footer at times
    part.write_bytes(bytes(data))
    line = one_error_line(cli("report", arch, "-f", "json"), 1)
    assert line.startswith(f"buraco-log: error: {part}: damaged archive file: its bytes changed "
                           f"since batch {record['batch']} committed it (SHA-256 "), line
    assert line.endswith(f"`buraco-log verify {arch}` lists every such file "
                         "[archive.part_changed]"), line
    line = one_error_line(cli("query", arch, "SELECT count(*) FROM hands"), 1)
    assert line.endswith("lists every such file [archive.part_changed]"), line
