"""Bad input to the installed `buraco-log`, run in a real subprocess.

The promise (README "Errors" and "Exit status"): bad input gets one line on stderr starting with
`buraco-log:` and naming the file (with the byte offset, seq or rule when relevant), exit status
2 for usage errors and 1 for data errors, nothing on stdout, nothing half-written or left behind,
and no Python traceback unless `--debug` is given.

Every case starts a fresh interpreter (about 0.7 s), so the cases are chosen to cover each kind
of bad input once per code path rather than every command times every input; the files are made
once per module.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

EXE = shutil.which("buraco-log")
pytestmark = pytest.mark.skipif(EXE is None, reason="buraco-log is not installed")

HUGE = str(10**23)


@dataclass(frozen=True)
class Result:
    code: int
    out: str
    err: str

    @property
    def lines(self) -> list[str]:
        return self.err.splitlines()


def run(*args: object, stdin: bytes = b"", close_stdin: bool = False,
        cwd: Path | None = None) -> Result:
    assert EXE is not None
    argv = [EXE, *(str(a) for a in args)]
    if close_stdin:  # file descriptor 0 closed, not merely at end of file
        argv = ["/bin/sh", "-c", 'exec "$0" "$@" <&-', *argv]
    env = dict(os.environ, COLUMNS="200")
    p = subprocess.run(argv, input=None if close_stdin else stdin, capture_output=True,
                       timeout=120, cwd=cwd, env=env)
    return Result(p.returncode, p.stdout.decode("utf-8", "replace"),
                  p.stderr.decode("utf-8", "replace"))


def assert_error(r: Result, code: int, *needles: str) -> str:
    """Exit ``code``, empty stdout, one stderr line starting with buraco-log: and holding every
    needle (the file name, offset, rule...), no traceback. Returns the line."""
    assert "Traceback" not in r.err + r.out, r.err[-800:]
    assert r.code == code, r
    assert r.out == "", r.out[:400]
    assert len(r.lines) == 1, r.lines[:5]
    line = r.lines[0]
    prefix = "buraco-log: error: " if code == 1 else ("buraco-log: usage: ", "buraco-log: error: ")
    assert line.startswith(prefix), line
    for needle in needles:
        assert needle in line, (needle, line)
    return line


def listing(d: Path) -> list[str]:
    return sorted(str(p.relative_to(d)) for p in d.rglob("*"))


@dataclass(frozen=True)
class World:
    root: Path
    good: Path  # a complete sealed classic match
    sims: Path  # the directory simulate wrote (two logs)
    archive: Path  # an archive holding both matches
    missing: Path  # a path with spaces and non-ASCII characters, under a missing directory
    folder: Path  # a directory named like a log
    random: Path  # random bytes
    text: Path  # a text file
    empty: Path  # an empty file
    cut: Path  # the good log cut in the middle of its segment
    spaced: Path  # a copy of the good log at a path with spaces and non-ASCII characters
    nologs: Path  # a directory holding only a text file
    plain_file: Path  # a text file given where a directory is expected
    random_toml: Path  # random bytes named .toml

    def copy(self, src: Path, name: str) -> Path:
        """A private copy in its own directory (for commands that write)."""
        d = self.root / "copies" / name
        d.mkdir(parents=True)
        return Path(shutil.copy(src, d / src.name))


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> World:
    root = tmp_path_factory.mktemp("bad-input")
    r = run("simulate", "--rules", "classic", "--matches", 2, "--seed", "x", "-o",
            root / "sims", "--no-progress")
    assert r.code == 0, r.err
    good = root / "sims" / "classic-2p-000000.blog"
    archive = root / "arc"
    r = run("ingest", root / "sims", "--archive", archive, "--jobs", 1)
    assert r.code == 0, r.err
    bad = root / "bad"
    bad.mkdir()
    data = good.read_bytes()
    rnd = bad / "random.blog"
    rnd.write_bytes(random.Random(7).randbytes(3000))
    text = bad / "notes.txt"
    text.write_text("hello\nworld\n")
    empty = bad / "empty.blog"
    empty.write_bytes(b"")
    cut = bad / "cut.blog"
    cut.write_bytes(data[: len(data) // 2])
    folder = bad / "folder.blog"
    folder.mkdir()
    spaced_dir = root / "dír con espaço"
    spaced_dir.mkdir()
    spaced = Path(shutil.copy(good, spaced_dir / "mätch ü 1.blog"))
    nologs = root / "nologs"
    nologs.mkdir()
    (nologs / "readme.txt").write_text("no logs here\n")
    plain = root / "plain.txt"
    plain.write_text("just a file\n")
    rtoml = bad / "random.toml"
    rtoml.write_bytes(random.Random(8).randbytes(500))
    return World(root=root, good=good, sims=root / "sims", archive=archive,
                 missing=root / "nö such dir" / "gone ü.blog", folder=folder, random=rnd,
                 text=text, empty=empty, cut=cut, spaced=spaced, nologs=nologs,
                 plain_file=plain, random_toml=rtoml)


@pytest.fixture()
def scratch(world: World, request: pytest.FixtureRequest) -> Iterator[Path]:
    """An empty directory of the test's own, for outputs that must not appear."""
    d = world.root / "scratch" / request.node.name.replace("/", "_")[:80]
    d.mkdir(parents=True)
    yield d


# -- a path that does not exist (with spaces and non-ASCII characters in it) ----------------------


@pytest.mark.parametrize("command", ["verify", "repair", "convert"])
def test_a_missing_log_is_one_line_naming_it(world: World, scratch: Path,
                                               command: str) -> None:
    extra = ["-o", scratch / "out.jsonl"] if command == "convert" else []
    r = run(command, world.missing, *extra)
    assert_error(r, 2, str(world.missing), "No such file or directory")  # usage: exit 2
    assert listing(scratch) == []
    assert not world.missing.parent.exists()  # nothing created on the way (repair's .bak)


# -- a directory where a file is expected, and a file where a directory is expected ---------------


@pytest.mark.parametrize("command", ["verify", "replay"])
def test_a_directory_given_as_a_log_is_one_line_naming_it(world: World, command: str) -> None:
    assert_error(run(command, world.folder), 2, str(world.folder), "not a regular file")
    assert listing(world.folder) == []


def test_audit_of_a_directory_without_logs_is_a_usage_error(world: World) -> None:
    assert_error(run("audit", world.nologs), 2, str(world.nologs), "no logs found")


@pytest.mark.parametrize("command", ["simulate", "schema"])
def test_a_file_given_as_a_directory_is_one_line_and_stays_untouched(world: World,
                                                                     command: str) -> None:
    f = world.plain_file
    argv = {
        "simulate": ["simulate", "-o", f, "--no-progress"],
        "schema": ["schema", "--dir", f],
    }[command]
    r = run(*argv)
    assert_error(r, 2, str(f), "not a directory")  # the user named the wrong thing: usage
    assert f.read_text() == "just a file\n"


# -- random bytes, a text file --------------------------------------------------------------------


def test_repair_refuses_random_bytes_and_leaves_the_file_alone(world: World) -> None:
    path = world.copy(world.random, "random-repair")
    before = path.read_bytes()
    r = run("repair", path)
    assert_error(r, 2, f"{path}, byte 0", "not a buraco-log file (bad magic)")  # not a log
    assert path.read_bytes() == before
    assert listing(path.parent) == [path.name]  # no .bak, no temp file


def test_replay_of_a_text_file_names_the_file_and_byte_0(world: World) -> None:
    assert_error(run("replay", world.text), 2, f"{world.text}, byte 0", "bad magic")


# -- an empty file --------------------------------------------------------------------------------


def test_replay_of_an_empty_file_names_byte_0(world: World) -> None:
    # a match not started, as audit says it (it said "torn tail", exit 1)
    assert_error(run("replay", world.empty), 2, f"{world.empty}: ", "a match not started")


def test_repair_of_an_empty_file_refuses_and_keeps_no_backup(world: World) -> None:
    path = world.copy(world.empty, "empty-repair")
    r = run("repair", path)
    # a match not started: nothing to repair, exit 2 as repair's other refusals of input it
    # cannot act on (it said "byte 0: the file header itself is incomplete", exit 1)
    assert_error(r, 2, f"{path}: a match not started", "nothing to repair", "delete the file")
    assert listing(path.parent) == [path.name] and path.read_bytes() == b""


def test_repair_dry_run_of_an_empty_file_says_what_repair_does(world: World) -> None:
    r = run("repair", world.empty, "--dry-run")
    # what repair itself says (exit 2 now, as above)
    assert_error(r, 2, f"{world.empty}: a match not started", "nothing to repair")


def test_verify_of_a_cut_log_keeps_stdout_empty(world: World) -> None:
    assert_error(run("verify", world.cut), 1, f"{world.cut}, byte 20, seq 0: torn tail")


# -- a log cut in the middle ----------------------------------------------------------------------


def test_replay_of_a_cut_log_names_the_byte_and_seq(world: World) -> None:
    assert_error(run("replay", world.cut), 1, f"{world.cut}, byte 20, seq 0",
                 "torn tail: segment payload cut short")


def test_seal_of_a_cut_log_refuses_and_changes_nothing(world: World) -> None:
    path = world.copy(world.cut, "cut-seal")
    before = path.read_bytes()
    assert_error(run("seal", path), 1, f"{path}, byte 20, seq 0", "torn tail")
    assert path.read_bytes() == before and listing(path.parent) == [path.name]


def test_convert_of_a_cut_log_writes_nothing(world: World, scratch: Path) -> None:
    r = run("convert", world.cut, "-o", scratch / "out.jsonl")
    assert_error(r, 1, f"{world.cut}, byte 20, seq 0", "torn tail")
    assert listing(scratch) == []


def test_repair_of_a_cut_log_at_a_non_ascii_path_keeps_the_original(world: World) -> None:
    d = world.root / "copies" / "répar ação"
    d.mkdir(parents=True)
    path = Path(shutil.copy(world.cut, d / "corte ü.blog"))
    before = path.read_bytes()
    refused = run("repair", path)  # no event would be left: only with --force
    assert_error(refused, 1, f"{path}, byte 20", "would cut every event")
    assert path.read_bytes() == before
    r = run("repair", path, "--force")
    assert r.code == 0 and r.err == "", r
    assert r.out.startswith(f"{path}: cut {len(before) - 20} bytes at byte 20")
    assert f"the bytes cut kept in {path}.bak (`cat LOG {path}.bak`" in r.out
    # the backup holds the bytes cut off: the log and its backup together are the original
    assert path.read_bytes() + Path(f"{path}.bak").read_bytes() == before
    assert path.stat().st_size == 20


# -- a good log at a path with spaces and non-ASCII characters ------------------------------------


def test_replay_reads_a_log_at_a_non_ascii_path(world: World) -> None:
    r = run("replay", world.spaced, "--at", 10, "--format", "json")
    assert (r.code, r.err) == (0, "") and json.loads(r.out)["seq"] == 10


# -- a file without read permission ---------------------------------------------------------------


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files without read permission")
@pytest.mark.parametrize("command", ["verify", "show", "replay", "audit"])
def test_an_unreadable_log_is_one_line_naming_it(world: World, command: str) -> None:
    path = world.copy(world.good, f"unreadable-{command}")
    path.chmod(0)
    try:
        r = run(command, path)
    finally:
        path.chmod(0o644)
    if command == "audit":  # an unreadable file is a finding like any other
        assert r.code == 1 and "Traceback" not in r.err + r.out
        assert r.out.startswith(f"{path}: FINDINGS")
    else:
        assert_error(r, 1, str(path), "Permission denied")


# -- option values: replay and explain ------------------------------------------------------------


@pytest.mark.parametrize(("args", "code", "needles"), [
    (["--at", "-1"], 2, ["'--at'", "greater than or equal to 0"]),
    (["--at", HUGE], 2, [f"the log has no seq {HUGE} (seqs 0 to "]),
    (["--hand", "0", "--turn", HUGE], 2, [f"hand 0 has no turn {HUGE} (turns 0 to "]),
    (["--seat", "2"], 2, ["no seat 2 in a 2-player match"]),
], ids=["at-negative", "at-huge", "turn-huge", "seat-absent"])
def test_replay_option_values(world: World, args: list[str], code: int,
                              needles: list[str]) -> None:
    line = assert_error(run("replay", world.good, *args), code, *needles)
    if "'--at'" not in needles:  # a position the match lacks: named with its file
        assert line.startswith(f"buraco-log: error: {world.good}: ")


def test_explain_of_a_huge_seq_names_the_file(world: World) -> None:
    line = assert_error(run("explain", world.good, "--at", HUGE), 2,
                        f"{world.good}: the log has no seq {HUGE} (seqs 0 to ")
    assert line.count(f"seq {HUGE}") == 1, line  # not "seq N: the log has no seq N"


# -- replay --step: stdin at its end, closed, or full of garbage ----------------------------------


def test_step_skips_garbage_keys_and_stops_at_the_end_of_stdin(world: World) -> None:
    r = run("replay", world.good, "--at", 5, "--step",
            stdin=b"zzz\n\x00\xff\xfe\nhx\n-5\nh999\n")
    assert r.code == 0 and "Traceback" not in r.err
    assert [ln.split()[1] for ln in r.out.splitlines() if ln.startswith("seq ")] == ["5"]
    assert "unknown key 'zzz'" in r.err and "unknown key 'hx'" in r.err
    assert "no seq -5 (0 to " in r.err and "no hand 999" in r.err


def test_step_with_stdin_closed_stops_quietly(world: World) -> None:
    r = run("replay", world.good, "--at", 5, "--step", close_stdin=True)
    assert "Traceback" not in r.err
    assert r.code == 0
    assert [ln.split()[1] for ln in r.out.splitlines() if ln.startswith("seq ")] == ["5"]


def test_step_refuses_a_superscript_digit_key(world: World) -> None:
    r = run("replay", world.good, "--at", 5, "--step", stdin="²\nq\n".encode())
    assert "Traceback" not in r.err
    assert r.code == 0 and "unknown key" in r.err


# -- audit and ingest --jobs ----------------------------------------------------------------------


def test_audit_refuses_negative_jobs(world: World) -> None:
    assert_error(run("audit", world.good, "--jobs", -1), 2, "--jobs")


def test_ingest_refuses_negative_jobs_and_creates_no_archive(world: World, scratch: Path) -> None:
    r = run("ingest", world.good, "--archive", scratch / "a", "--jobs", -1)
    assert_error(r, 2, "'--jobs'", "greater than or equal to 0")
    assert listing(scratch) == []


def test_ingest_refuses_a_directory_that_is_not_an_archive_and_writes_nothing(
        world: World) -> None:
    home = world.root / "home"
    home.mkdir()
    (home / "notes.txt").write_text("mine\n")
    r = run("ingest", world.good, "--archive", home, "--jobs", 1)
    assert_error(r, 2, str(home), "is not an archive")  # a slip, as a path that is no log
    assert listing(home) == ["notes.txt"]


@pytest.fixture(scope="module")
def corrupt_archive(world: World) -> Path:
    d = world.root / "corrupt-archive"
    d.mkdir()
    (d / "archive.json").write_text("this is not json\n")
    return d


@pytest.mark.parametrize("command", ["ingest", "query"])
def test_a_corrupt_archive_json_is_one_line(world: World, corrupt_archive: Path,
                                            command: str) -> None:
    argv = {"ingest": ["ingest", world.good, "--archive", corrupt_archive, "--jobs", 1],
            "query": ["query", corrupt_archive, "SELECT 1"]}[command]
    assert_error(run(*argv), 1, str(corrupt_archive))
    assert listing(corrupt_archive) == ["archive.json"]


# -- query ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(("sql", "needle"), [
    ("SELECT 1; SELECT 2", "exactly one statement is allowed, got 2"),
    ("SELEC 1", 'syntax error at or near "SELEC"'),
    ("CREATE TABLE t (x INTEGER)", "only read-only SELECT statements are allowed, not CREATE"),
], ids=["two-statements", "syntax-error", "ddl"])
def test_query_refuses_bad_sql_with_one_line(world: World, sql: str, needle: str) -> None:
    assert_error(run("query", world.archive, sql), 1, "query: ", needle)


def test_query_parquet_into_a_missing_directory_creates_nothing(world: World,
                                                                scratch: Path) -> None:
    out = scratch / "no-dir" / "out.parquet"
    r = run("query", world.archive, "SELECT 1 AS x", "--format", "parquet", "-o", out)
    assert_error(r, 2, "no-dir/out.parquet")  # (a usage error, as every writer: probe 43)
    assert listing(scratch) == []


def test_query_bad_memory_limit_is_a_usage_error(world: World) -> None:
    r = run("query", world.archive, "SELECT 1", "--memory-limit", "banana")
    assert_error(r, 2, "--memory-limit")


def test_query_negative_timeout_is_a_usage_error(world: World) -> None:
    assert_error(run("query", world.archive, "SELECT 1", "--timeout", "-1"), 2, "--timeout")


# -- report ---------------------------------------------------------------------------------------


def test_report_on_a_directory_of_logs_is_not_an_archive(world: World) -> None:
    # 2, as `report FILE` and `verify DIR`: a path that is not an archive is the user's slip
    assert_error(run("report", world.sims), 2, f"{world.sims}: not an archive")


def test_report_unknown_format_is_a_usage_error(world: World, scratch: Path) -> None:
    r = run("report", world.archive, "--format", "pdf", "-o", scratch / "r.pdf")
    assert_error(r, 2, "buraco-log: usage: Invalid value for '--format'", "'pdf'")
    assert listing(scratch) == []


def test_report_negative_top_is_a_usage_error(world: World) -> None:
    assert_error(run("report", world.archive, "--top", "-1"), 2, "--top")


def test_report_huge_top_is_one_line(world: World) -> None:
    r = run("report", world.archive, "--top", 10**20)
    assert "Traceback" not in r.err
    assert r.code == 2 and r.out == "" and len(r.lines) == 1


# -- simulate -------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def five_players(world: World) -> tuple[Result, Path]:
    out = world.root / "five"
    return run("simulate", "--players", 5, "--rules", "classic", "-o", out, "--no-progress"), out


def test_simulate_five_players_of_classic_is_one_line_and_writes_nothing(
        five_players: tuple[Result, Path]) -> None:
    r, out = five_players
    assert r.code != 0 and r.out == "" and "Traceback" not in r.err
    assert r.lines == ["buraco-log: error: --players 5: classic is played by 2/3/4/6"]
    assert not out.exists()


def test_simulate_five_players_of_classic_exits_2(five_players: tuple[Result, Path]) -> None:
    assert five_players[0].code == 2


@pytest.mark.parametrize(("args", "needle", "least"), [
    (["--matches", "0"], "'--matches'", 1),
    (["--jobs", "-1"], "'--jobs'", 0),  # 0: one per CPU
], ids=["matches-0", "jobs-negative"])
def test_simulate_zero_counts_are_usage_errors(world: World, scratch: Path, args: list[str],
                                               needle: str, least: int) -> None:
    r = run("simulate", *args, "-o", scratch / "out", "--no-progress")
    assert_error(r, 2, needle, f"greater than or equal to {least}")
    assert listing(scratch) == []


def test_simulate_does_not_overwrite_existing_logs(world: World) -> None:
    d = world.root / "copies" / "rerun"
    d.mkdir(parents=True)
    kept = Path(shutil.copy(world.good, d / world.good.name))
    before = kept.read_bytes()
    r = run("simulate", "--rules", "classic", "--seed", "another", "-o", d, "--no-progress")
    assert kept.read_bytes() == before
    assert_error(r, 2, str(kept))  # a usage error: --overwrite, or another --out


# -- rules show, schema, demo ---------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["missing", "empty"])
def test_rules_show_of_a_bad_toml_names_it(world: World, scratch: Path, kind: str) -> None:
    toml = scratch / "house rules.toml"
    needle = {"missing": f"{toml}: No such file or directory",
              "empty": f"{toml}: rules field 'preset': house rules must name the preset they "
                       "start from"}[kind]
    if kind == "empty":
        toml.write_text("")
    # the user's own file, not a finding in a log: a usage error (2), as simulate --rules says
    assert_error(run("rules", "show", toml), 2, needle)


def test_rules_show_of_random_bytes_is_one_line(world: World) -> None:
    assert_error(run("rules", "show", world.random_toml), 2, str(world.random_toml))


def test_schema_check_of_a_non_utf8_file_is_one_line(world: World, scratch: Path) -> None:
    (scratch / "events.schema.json").write_bytes(random.Random(9).randbytes(300))
    r = run("schema", "--dir", scratch, "--check")
    assert_error(r, 1, str(scratch))


def test_demo_into_a_missing_directory_names_it_and_creates_nothing(world: World,
                                                                    scratch: Path) -> None:
    out = scratch / "no-dir" / "demo.blog"
    r = run("demo", "--rules", "classic", "--players", 2, "--out", out)
    assert_error(r, 2, str(out), "no such directory")
    assert listing(scratch) == []


# -- convert and diff outputs on bad input --------------------------------------------------------


def test_convert_into_a_missing_directory_names_the_output(world: World, scratch: Path) -> None:
    out = scratch / "no-dir" / "out.jsonl"
    assert_error(run("convert", world.good, "-o", out), 2, str(out))
    assert listing(scratch) == []


def test_diff_of_two_different_non_logs_is_not_identical(world: World) -> None:
    r = run("diff", world.random, world.text)
    assert "Traceback" not in r.err
    assert r.code == 2 and "identical" not in r.out  # neither is a log: exit 2


def test_diff_against_an_empty_file_names_no_negative_seq(world: World) -> None:
    r = run("diff", world.good, world.empty)
    assert r.code == 1 and "Traceback" not in r.err
    assert "seq -1" not in r.out


# -- --debug --------------------------------------------------------------------------------------


def test_debug_shows_the_traceback_of_a_bad_input(world: World) -> None:
    r = run("--debug", "replay", world.random)
    plain = run("replay", world.random)
    # the same exit status as without --debug: not a log is 2 (it was Python's 1)
    assert r.code == plain.code == 2 and r.out == ""
    assert "Traceback (most recent call last)" in r.err and "bad magic" in r.err
