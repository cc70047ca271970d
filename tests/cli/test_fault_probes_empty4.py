"""A match not started (an empty file, a header cut short while created, a header alone) said
one way by every command: one predicate decides it, `convert`, `seal` and `repair` refuse it
as a match not started (exit 2, nothing written), `diff` of two such copies says there is no
event to compare (identical, exit 0), and `log.fsync_dir` is public. Real subprocesses, as the
user runs them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from buraco_log import audit, jsonl, log

ROOT = Path(__file__).resolve().parents[2]
GOOD = ROOT / "examples" / "sim" / "classic-2p-000000.blog"


def cli(*argv: object, cwd: Path = ROOT, code: str | None = None
        ) -> subprocess.CompletedProcess[str]:
    """``buraco-log ARGV`` in a subprocess (``code``: Python run first, in that process)."""
    env = {**os.environ, "COLUMNS": "200", "PYTHONPATH": str(ROOT)}
    head = ["-m", "cli"] if code is None else [
        "-c", f"{code}\nimport sys\nfrom cli.main import run\nsys.argv[0] = 'buraco-log'\nrun()"]
    return subprocess.run([sys.executable, *head, *map(str, argv)], capture_output=True,
                          text=True, cwd=cwd, env=env, timeout=120, check=False)


def one_error_line(r: subprocess.CompletedProcess[str]) -> str:
    assert "Traceback" not in r.stderr, r.stderr
    lines = r.stderr.splitlines()
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith("buraco-log: error: "), lines[0]
    return lines[0]


def listing(d: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(d.iterdir())}


@pytest.fixture(params=[0, 7, log.HEADER_SIZE - 1], ids=["empty", "header-cut", "one-short"])
def unstarted(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    """A binary log whose writer stopped before its header was whole: no event was ever in it."""
    path = tmp_path / "m.blog"
    path.write_bytes(GOOD.read_bytes()[: request.param])
    return path


def header_alone(path: Path) -> Path:
    path.write_bytes(GOOD.read_bytes()[: log.HEADER_SIZE])
    return path


# -- one predicate: verify's "not started" is audit's ----------------------------------------


def _cases(d: Path) -> dict[str, Path]:
    data = GOOD.read_bytes()
    out = {}
    for name, cut in (("empty", 0), ("cut", 7), ("header", log.HEADER_SIZE),
                      ("header-and-part", log.HEADER_SIZE + 5), ("whole", len(data)),
                      ("torn-tail", len(data) - 3)):
        out[name] = d / f"{name}.blog"
        out[name].write_bytes(data[:cut])
    return out


def test_the_predicate_on_log_info_is_the_predicate_on_integrity(tmp_path: Path) -> None:
    """`verify` (LogInfo) and `audit` (Integrity) decided "not started" by two copies of one
    rule; both now call audit's one predicate, and agree on every kind of file."""
    expected = {"empty": True, "cut": True, "header": True, "header-and-part": False,
                "whole": False, "torn-tail": False}
    for name, path in _cases(tmp_path).items():
        events, integ = audit.read_log(path)
        info = log.verify(path)
        assert audit.not_started(events, integ) is expected[name], name
        assert audit.log_not_started(info) is expected[name], name
        assert audit.audit_log(path).not_started is expected[name], name


def test_verify_decides_not_started_by_the_audit_predicate(tmp_path: Path) -> None:
    """The verify command consults audit.log_not_started: with the predicate replaced (in that
    process only), verify's answer follows it. (It had its own copy of the rule.)"""
    empty = tmp_path / "e.blog"
    empty.write_bytes(b"")
    whole = tmp_path / "w.blog"
    whole.write_bytes(GOOD.read_bytes())
    flip = "from buraco_log import audit\naudit.log_not_started = lambda info: True"
    r = cli("verify", "-f", "json", whole, code=flip)
    assert r.returncode == 0 and json.loads(r.stdout)["not_started"] is True, r.stderr
    # unchanged without the replacement: a whole log is started, an empty file is not
    r = cli("verify", "-f", "json", whole)
    assert r.returncode == 0 and json.loads(r.stdout)["not_started"] is False
    r = cli("verify", empty)
    assert r.returncode == 0 and r.stdout.startswith(f"{empty}: NOT STARTED: no whole header")


def test_verify_of_a_header_and_part_of_a_record_is_still_a_torn_tail(tmp_path: Path) -> None:
    path = _cases(tmp_path)["header-and-part"]
    r = cli("verify", path)
    assert r.returncode == 1 and r.stdout == ""
    line = one_error_line(r)
    assert f"{path}, byte {log.HEADER_SIZE}, seq 0: torn tail" in line and "NOT STARTED" not in line


# -- convert, seal, repair: a match not started, nothing to do, nothing written -------------


NOTHING_TO_DO = [
    (["convert", "{p}", "-o", "{d}/out.jsonl"], "convert"),
    (["convert", "{p}", "-o", "-"], "convert"),
    (["convert", "{p}", "-o", "{d}/out.jsonl", "--to", "jsonl", "--validate"], "convert"),
    (["seal", "{p}"], "seal"),
    (["repair", "{p}"], "repair"),
    (["repair", "--dry-run", "{p}"], "repair"),
    (["repair", "--force", "--no-backup", "{p}"], "repair"),
]
CUTS = {"empty": 0, "header-cut": 7, "one-short": log.HEADER_SIZE - 1}  # as `unstarted`


# Each command line with one of the three cuts in turn in the default run (each cut, each
# line), every pair in the slow run (21 processes took 15 s).
@pytest.mark.parametrize("argv,what,cut", [
    pytest.param(argv, what, cut, id=f"{'-'.join(argv)}-{name}",
                 marks=() if i % len(CUTS) == j else pytest.mark.slow)
    for i, (argv, what) in enumerate(NOTHING_TO_DO) for j, (name, cut) in enumerate(CUTS.items())])
def test_a_log_not_started_has_nothing_to_convert_seal_or_repair(
        tmp_path: Path, argv: list[str], what: str, cut: int) -> None:
    unstarted = tmp_path / "m.blog"
    unstarted.write_bytes(GOOD.read_bytes()[:cut])
    # convert and seal said "torn tail: file header cut short ...; no event is intact: delete
    # the file", repair "the file header itself is incomplete ...", all exit 1
    d = unstarted.parent
    before = listing(d)
    r = cli(*(a.format(p=unstarted, d=d) for a in argv))
    assert (r.returncode, r.stdout) == (2, ""), (r.returncode, r.stdout, r.stderr)
    line = one_error_line(r)
    assert line == (f"buraco-log: error: {unstarted}: a match not started (no whole header "
                    f"and no event): nothing to {what}; delete the file [log.empty]"), line
    assert "torn" not in line and "incomplete" not in line
    assert listing(d) == before  # no output, no backup, no temporary; the source untouched


def test_the_refusal_in_json_is_one_error_object(unstarted: Path) -> None:
    for argv in (["convert", unstarted, "-o", unstarted.parent / "o.jsonl"],
                 ["seal", unstarted], ["repair", unstarted]):
        r = cli(*argv, "-f", "json")
        assert r.returncode == 2, r.stderr
        err = json.loads(r.stdout)["error"]
        assert err["exit_status"] == 2 and "a match not started" in err["message"]
        assert len(r.stderr.splitlines()) == 1
    assert sorted(p.name for p in unstarted.parent.iterdir()) == ["m.blog"]


def test_convert_over_an_existing_file_leaves_it_as_it_was(unstarted: Path) -> None:
    kept = unstarted.parent / "kept.jsonl"
    kept.write_text("not replaced\n")
    r = cli("convert", unstarted, "-o", kept, "--overwrite")
    assert r.returncode == 2 and "nothing to convert" in one_error_line(r)
    assert kept.read_text() == "not replaced\n"


def test_convert_of_an_empty_standard_input_is_a_match_not_started(tmp_path: Path) -> None:
    r = subprocess.run([sys.executable, "-m", "cli", "convert", "-", "-o", tmp_path / "o.jsonl"],
                       input="", capture_output=True, text=True, cwd=ROOT, timeout=120,
                       env={**os.environ, "PYTHONPATH": str(ROOT)}, check=False)
    assert r.returncode == 2 and "a match not started" in one_error_line(r), r.stderr
    assert list(tmp_path.iterdir()) == []


def test_a_header_alone_is_converted_sealed_and_repaired_as_before(tmp_path: Path) -> None:
    """The neighbour: a whole header and no event is a valid log of no events."""
    path = header_alone(tmp_path / "h.blog")
    r = cli("convert", path, "-o", tmp_path / "h.jsonl")
    assert r.returncode == 0 and r.stdout.startswith(f"{tmp_path / 'h.jsonl'}: 0 events, head ")
    r = cli("repair", path)
    assert (r.returncode, r.stdout) == (0, f"{path}: nothing to repair (0 events)\n")
    r = cli("seal", path)
    assert r.returncode == 0 and r.stdout.startswith(f"{path}: sealed, 0 events"), r.stderr


def test_a_torn_tail_after_the_header_is_still_damage(tmp_path: Path) -> None:
    """The neighbours: a header and part of a record (no event whole), and a torn tail after
    events, are what they were: a torn tail, exit 1; repair cuts it (--force for no event)."""
    cases = _cases(tmp_path)
    part, torn = cases["header-and-part"], cases["torn-tail"]
    for path in (part, torn):
        r = cli("convert", path, "-o", tmp_path / f"{path.stem}.jsonl")
        assert r.returncode == 1 and "torn tail" in one_error_line(r)
        assert not (tmp_path / f"{path.stem}.jsonl").exists()
        r = cli("seal", path)
        assert r.returncode == 1 and "torn tail" in one_error_line(r)
    r = cli("repair", part)
    assert r.returncode == 1 and "would cut every event" in one_error_line(r)
    r = cli("repair", "--dry-run", torn)
    assert r.returncode == 0 and f"{torn}: would cut " in r.stdout


# -- diff of two copies not started ------------------------------------------------------------


def test_diff_of_two_empty_copies_says_there_is_no_event_to_compare(tmp_path: Path) -> None:
    # it said "the copies agree on all 0 events read intact, but A is torn and B is torn"
    # (before that, that they differ at seq None); then exit 1, as though the copies were
    # damaged: an empty binary log is no damage (`verify` and `audit` say NOT STARTED, exit 0),
    # and two empty JSON Lines copies were identical, exit 0
    a, b = tmp_path / "a.blog", tmp_path / "b.blog"
    a.write_bytes(b"")
    b.write_bytes(GOOD.read_bytes()[:7])
    r = cli("diff", a, b)
    assert r.returncode == 0, r.stderr
    last = r.stdout.splitlines()[-1]
    assert last == ("identical: both copies are matches not started, no event in either (A "
                    "and B have no whole header: delete the files)"), r.stdout
    assert "agree on all 0" not in r.stdout and "None" not in r.stdout
    j = json.loads(cli("diff", "-f", "json", a, b).stdout)
    assert (j["not_started_a"], j["not_started_b"], j["identical"]) == (True, True, True)


def test_diff_of_an_empty_copy_and_a_header_alone_names_the_empty_one(tmp_path: Path) -> None:
    a = header_alone(tmp_path / "a.blog")
    b = tmp_path / "b.blog"
    b.write_bytes(b"")
    r = cli("diff", a, b)
    assert r.returncode == 0 and r.stdout.splitlines()[-1] == (
        "identical: both copies are matches not started, no event in either (B has no whole "
        "header: delete that file)"), r.stdout


def test_diff_of_two_headers_alone_is_identical_as_before(tmp_path: Path) -> None:
    a, b = header_alone(tmp_path / "a.blog"), header_alone(tmp_path / "b.blog")
    r = cli("diff", a, b)
    assert r.returncode == 0 and r.stdout.splitlines()[-1] == (
        "identical: same events, same head digest"), r.stdout


def test_diff_of_a_copy_not_started_and_a_whole_one_is_unchanged(tmp_path: Path) -> None:
    a = tmp_path / "a.blog"
    a.write_bytes(b"")
    r = cli("diff", a, GOOD)
    assert r.returncode == 1 and "A holds no events intact; B has " in r.stdout, r.stdout
    j = json.loads(cli("diff", "-f", "json", a, GOOD).stdout)
    assert (j["not_started_a"], j["not_started_b"]) == (True, False)


# -- fsync_dir is public --------------------------------------------------------------------


def test_fsync_dir_is_public_and_the_old_name_is_kept() -> None:
    assert log.fsync_dir is log._fsync_dir and "fsync_dir" in log.__all__


def test_jsonl_syncs_the_directory_through_the_public_name(tmp_path: Path,
                                                           monkeypatch: Any) -> None:
    synced: list[str] = []
    real = log.fsync_dir

    def spy(path: str) -> None:
        synced.append(path)
        real(path)

    monkeypatch.setattr(log, "fsync_dir", spy)
    out = tmp_path / "g.jsonl"
    jsonl.convert(GOOD, out, "jsonl")
    assert synced == [str(out)]


def test_convert_overwrite_syncs_the_directory_through_the_public_name(tmp_path: Path) -> None:
    out = tmp_path / "g.jsonl"
    out.write_text("old\n")
    spy = ("from buraco_log import log\nreal = log.fsync_dir\n"
           "def spy(p):\n    print('synced', p)\n    real(p)\nlog.fsync_dir = spy")
    r = cli("convert", GOOD, "-o", out, "--overwrite", code=spy)
    assert r.returncode == 0, r.stderr
    synced = [line for line in r.stdout.splitlines() if line.startswith("synced ")]
    # jsonl's publication of the temporary, then convert's rename over the old file
    assert len(synced) == 2 and synced[-1] == f"synced {out}", r.stdout


def test_verify_says_a_header_alone_or_an_empty_json_lines_file_is_a_match_not_started(
        tmp_path: Path) -> None:
    """Both are whole files with no event; `verify` said only "0 events in 0 records", while
    `audit` said NOT STARTED (and `verify -f json` not_started: true)."""
    empty = tmp_path / "m.jsonl"
    empty.write_text("")
    for path in (header_alone(tmp_path / "h.blog"), empty):
        r = cli("verify", path)
        assert r.returncode == 0 and r.stderr == "", r
        assert r.stdout.startswith(f"{path}: 0 events in 0 records (a match not started), ")
        assert json.loads(cli("verify", path, "-f", "json").stdout)["not_started"] is True
    whole = cli("verify", GOOD)
    assert whole.returncode == 0 and "not started" not in whole.stdout
