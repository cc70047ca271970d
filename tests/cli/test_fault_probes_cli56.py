"""One CLI under hostile paths, as a matrix: every command that reads a file fed each kind of
path (missing, a directory, a FIFO no program writes, /dev/zero, /dev/null, an empty file, a loop
of symbolic links, a name with a newline or a byte that is not UTF-8, a log of the other form
than its name says), every command that writes fed each kind of output (a missing directory, a
directory, its own input, /dev/full). Each refusal is one line on stderr naming the file, the
documented exit status, no traceback, stdout valid JSON (or empty) under ``-f json``, no input
changed and nothing left behind. Earlier probes took FIFOs, devices, directories and long names
(cli42, cli35); this one adds the rest of the matrix, and the places where two commands, or
two forms of one answer, disagreed: `diff` of two empty binary logs (exit 1, where two empty
JSON Lines logs were identical, exit 0); `verify`'s torn tail (its JSON named seq 1 for a
signature record cut short, which holds no seq, where its line named none); `repair` of a
binary log named .jsonl (cut, where `verify` and `seal` refuse it); a file named with a '/' at
its end (read as the file); a loop of links as the output of `demo --overwrite` (the link
replaced), `simulate`, `keys new` and `schema`. Real subprocesses."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from buraco_log import log
from tests.cli.probes import ROOT, cli_batch

GOOD = ROOT / "examples" / "sim" / "thirteen-quick-2p-000000.blog"
ROOTED = os.geteuid() == 0  # root reads a file of mode 000: no refusal to probe

# -- the inputs ---------------------------------------------------------------------------------


def _inputs(d: Path) -> dict[str, str]:
    """Each kind of path a user may hand a command that reads a log, made in ``d``; the
    names relative to ``d`` (the command runs there) or absolute (devices)."""
    shutil.copy(GOOD, d / "good.blog")
    shutil.copy(GOOD, d / "bin.jsonl")  # a binary log named as JSON Lines
    shutil.copy(ROOT / "examples" / "format" / "v2.jsonl", d / "text.blog")  # and the other way
    (d / "adir").mkdir()
    os.mkfifo(d / "fifo")  # nobody ever writes it: reading it would wait for ever
    (d / "empty.blog").write_bytes(b"")
    os.symlink("loop-b.blog", d / "loop-a.blog")
    os.symlink("loop-a.blog", d / "loop-b.blog")
    shutil.copy(GOOD, d / "new\nline.blog")
    shutil.copy(GOOD, os.fsdecode(bytes(d) + b"/bad\xff.blog"))
    shutil.copy(GOOD, d / "unreadable.blog")
    (d / "unreadable.blog").chmod(0)
    return {"missing": "nothere.blog", "directory": "adir", "fifo": "fifo",
            "zero": "/dev/zero", "null": "/dev/null", "empty": "empty.blog",
            "loop": "loop-a.blog", "newline": "new\nline.blog",
            "not-utf8": os.fsdecode(b"bad\xff.blog"), "unreadable": "unreadable.blog",
            "binary-as-jsonl": "bin.jsonl", "jsonl-as-binary": "text.blog"}


# What each kind must give, whatever the command (but for the exceptions below): the exit
# status, and a word its one line must hold (after the name, shown safely).
REFUSED = {
    "missing": (2, "No such file or directory"),
    "directory": (2, "[log.filetype]"),
    "fifo": (2, "[log.filetype]"),
    "zero": (2, "[log.filetype]"),
    "null": (2, "[log.filetype]"),
    "loop": (2, "Too many levels of symbolic links"),
    "unreadable": (2, "Permission denied"),
    "binary-as-jsonl": (2, "binary"),
    "jsonl-as-binary": (2, "JSON Lines"),
}
SHOWN = {"newline": "new\\x0aline.blog", "not-utf8": "bad\\xff.blog"}  # never the raw bytes

# The commands that read one log, as the user types them ({} the path); whether -f json is
# offered; what an empty log gives (a match not started: no finding, or nothing to answer).
READERS: dict[str, tuple[list[str], bool, int]] = {
    "show": (["show", "{}"], True, 0),
    "verify": (["verify", "{}"], True, 0),
    "replay": (["replay", "{}"], True, 2),
    "explain": (["explain", "--at", "0", "{}"], True, 2),
    "moves": (["moves", "{}"], True, 2),
    "diff-a": (["diff", "{}", "good.blog"], True, 1),  # an empty copy differs from a match
    "diff-b": (["diff", "good.blog", "{}"], True, 1),
    "convert": (["convert", "{}", "-o", "out-{k}.jsonl"], True, 2),
    "seal": (["seal", "{}"], True, 2),
    "repair": (["repair", "--dry-run", "{}"], True, 2),
    "view": (["view", "{}", "-o", "page-{k}.html"], False, 2),
    "review": (["review", "--seat", "0", "--budget", "1x1r0", "{}", "-o", "review-{k}.txt"],
               True, 2),
}


@dataclass
class Cell:
    """One command run on one kind of path."""

    command: str
    kind: str
    as_json: bool

    def args(self, path: str) -> list[str]:
        words, _, _ = READERS[self.command]
        name = f"{self.kind}{'-json' if self.as_json else ''}"
        args = [w.replace("{}", path).replace("{k}", name) for w in words]
        return [*args[:1], "-f", "json", *args[1:]] if self.as_json else args


def _cells(commands: list[str]) -> Iterator[Cell]:
    for command in commands:
        for kind in (*REFUSED, "empty", *SHOWN):
            for as_json in (False, True) if READERS[command][1] else (False,):
                yield Cell(command, kind, as_json)


def _state(d: Path) -> dict[str, str]:
    """Every name in ``d`` with what it holds (a hash), a FIFO and a link by their kind: an
    input changed, or a file left behind, shows."""
    out = {}
    for p in sorted(d.rglob("*")):
        if p.is_symlink():
            out[str(p)] = "link"
        elif p.is_fifo():
            out[str(p)] = "fifo"
        elif p.is_file():
            out[str(p)] = hashlib.sha256(p.read_bytes()).hexdigest() if os.access(p, os.R_OK) \
                else "unreadable"
        else:
            out[str(p)] = "dir"
    return out


def _check(cell: Cell, path: str, done: subprocess.CompletedProcess[str]) -> None:
    what = (cell.command, cell.kind, cell.as_json, done.returncode, done.stdout[-300:],
            done.stderr)
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr, what
    if cell.as_json and done.stdout:
        answer = json.loads(done.stdout)  # never half a document, never text
        if done.returncode:
            shown = answer.get("error", {}).get("exit_status")
            assert shown in (None, done.returncode), what
    if cell.kind in SHOWN:  # a whole log under an odd name: answered, the name escaped
        assert done.returncode == 0, what
        assert path not in done.stdout + done.stderr, what  # the raw newline or surrogate
        if cell.command in ("show", "verify", "diff-a", "diff-b") and not cell.as_json:
            assert SHOWN[cell.kind] in done.stdout, what
        return
    if (cell.command, cell.kind) == ("convert", "binary-as-jsonl"):
        # convert alone reads the form from the first bytes (its help says so): converted
        assert done.returncode == 0, what
        return
    if cell.kind == "empty":
        expected = READERS[cell.command][2]
        assert done.returncode == expected, what
        if expected != 2:
            return
        word = "[log.empty]"
    else:
        expected, word = REFUSED[cell.kind]
        if (cell.command, cell.kind) == ("convert", "jsonl-as-binary"):
            word = "already a jsonl log"  # read by its bytes: the form asked for
    assert done.returncode == expected, what
    lines = done.stderr.splitlines()
    assert len(lines) == 1, what
    assert lines[0].startswith(f"buraco-log: error: {path}") or (
        lines[0].startswith("buraco-log: error: ") and f" {path}" in lines[0]), what
    assert word in lines[0], what
    if not cell.as_json:
        assert done.stdout == "", what


def _run(d: Path, cells: list[Cell], paths: dict[str, str]) -> None:
    before = _state(d)
    cells = [c for c in cells if not (c.kind == "unreadable" and ROOTED)]
    runs: list[list[object]] = []
    for cell in cells:
        runs.append([*cell.args(paths[cell.kind])])
    done = cli_batch(runs, cwd=d, timeout=60)  # a FIFO read would hang: timeout raises
    for cell, result in zip(cells, done, strict=True):
        _check(cell, paths[cell.kind], result)
    after = _state(d)
    for name, digest in before.items():  # no input changed, whatever the command did
        assert after.get(name) == digest, name
    made = sorted(set(after) - set(before))
    for name in made:  # only the outputs a command succeeded in writing
        base = Path(name).name
        assert base.startswith(("out-newline", "out-not-utf8", "out-binary-as-jsonl",
                                "page-newline",
                                "page-not-utf8", "review-newline", "review-not-utf8")), made


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    d = tmp_path_factory.mktemp("hostile")
    return d, _inputs(d)


@pytest.mark.slow
@pytest.mark.parametrize("command", [c for c in READERS if c not in ("seal",)])
def test_every_reader_refuses_every_hostile_path_in_one_line(
        world: tuple[Path, dict[str, str]], command: str) -> None:
    d, paths = world
    _run(d, list(_cells([command])), paths)


@pytest.mark.slow
def test_seal_refuses_every_hostile_path_and_seals_only_a_log(tmp_path: Path) -> None:
    # seal rewrites its log in place: the two odd names are logs, sealed already (no change)
    paths = _inputs(tmp_path)
    for as_json in (False, True):  # one after the other: two seals of one log at once
        # are refused, the second finding the first holding it
        _run(tmp_path, [c for c in _cells(["seal"]) if c.as_json is as_json], paths)


@pytest.mark.slow
def test_a_sample_of_the_matrix(world: tuple[Path, dict[str, str]]) -> None:
    # moves of a loop of links, explain of a binary log named .jsonl: exit 2, one line each
    d, paths = world
    _run(d, [Cell("moves", "loop", True), Cell("explain", "binary-as-jsonl", False)], paths)


# -- the outputs --------------------------------------------------------------------------------

# The commands that write a file, {} its name; the status of each kind of output.
WRITERS: dict[str, list[str]] = {
    "convert": ["convert", "good.blog", "--to", "jsonl", "-o", "{}"],
    "view": ["view", "good.blog", "-o", "{}"],
    "review": ["review", "--seat", "0", "--budget", "1x1r0", "good.blog", "-o", "{}"],
    "audit-html": ["audit", "--html", "{}", "good.blog"],
    "demo": ["demo", "--rules", "thirteen-quick", "-o", "{}"],
}
OUTPUTS = {
    "missing-directory": ("nodir/sub/out.jsonl", 2, "no such directory"),
    "directory": ("adir", 2, "is a directory"),
    "its-input": ("good.blog", 2, "good.blog"),
    "full": ("/dev/full", 1, "No space left on device"),
}
# demo never replaces a file (--overwrite): /dev/full and its input exist; convert's output
# must end in .jsonl to be JSON Lines
EXPECTED_OTHERWISE = {
    ("demo", "full"): (2, "exists"),
    ("demo", "its-input"): (2, "exists"),
    ("convert", "directory"): (2, "must end in .jsonl"),
    ("convert", "its-input"): (2, "must end in .jsonl"),
}


@pytest.mark.slow
@pytest.mark.parametrize("command", list(WRITERS))
def test_every_writer_refuses_every_bad_output_whole(tmp_path: Path, command: str) -> None:
    runs: list[list[object]] = []
    for kind in OUTPUTS:
        d = tmp_path / kind
        d.mkdir()
        shutil.copy(GOOD, d / "good.blog")
        (d / "adir").mkdir()
    before = _state(tmp_path)
    forms = (False, True) if command != "view" else (False,)  # view has no -f
    for as_json in forms:
        for kind, (name, _, _) in OUTPUTS.items():
            d = tmp_path / kind
            out = name if name.startswith("/dev/") else str(d / name)
            args = [str(d / w) if w == "good.blog" else w.replace("{}", out)
                    for w in WRITERS[command]]
            runs.append([*args[:1], *(["-f", "json"] if as_json else []), *args[1:]])
    done = cli_batch(runs, cwd=tmp_path, timeout=120)
    for i, result in enumerate(done):
        kind = list(OUTPUTS)[i % len(OUTPUTS)]
        name, status, word = OUTPUTS[kind]
        status, word = EXPECTED_OTHERWISE.get((command, kind), (status, word))
        what = (command, kind, result.returncode, result.stdout[-300:], result.stderr)
        assert result.returncode == status, what
        assert "Traceback" not in result.stderr, what
        lines = result.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith("buraco-log: error: "), what
        assert name in lines[0] and word in lines[0], what
        if i >= len(OUTPUTS) and result.stdout:
            assert json.loads(result.stdout)["error"]["exit_status"] == status, what
        elif i < len(OUTPUTS):
            assert result.stdout == "", what
    assert _state(tmp_path) == before  # nothing written, no temporary left, input whole


# -- the two answers that disagreed -------------------------------------------------------------


def _torn_signature(d: Path) -> tuple[Path, int]:
    """A signed log whose last record, a signature record, is cut short (a crash while
    signing), and where that record starts."""
    path = d / "signed.blog"
    path.write_bytes((ROOT / "examples" / "format" / "v2.blog").read_bytes()[:-5])
    info = log.verify(path)
    assert info.torn is not None and "signature record" in info.torn.reason
    return path, info.torn.offset


def test_diff_of_empty_binary_logs_and_verify_of_a_torn_signature_agree(
        tmp_path: Path) -> None:
    """Two empty binary logs, matches not started and no damage (`verify`, `audit` and `show`
    exit 0 of each), were "both copies are matches not started", exit 1, where two empty JSON
    Lines logs were identical, exit 0. A signature record cut short holds no seq: `verify`'s
    line named none ("after seq 715"), its JSON said ``"seq": 716``, from what `log.verify`
    gave it (now the torn record's seq, None here; the slow twin runs `verify -f json`)."""
    for name in ("a.blog", "b.blog"):
        (tmp_path / name).write_bytes(b"")
    diff = cli_batch([["diff", "a.blog", "b.blog"]], cwd=tmp_path)[0]
    assert (diff.returncode, diff.stderr) == (0, ""), (diff.stdout, diff.stderr)
    assert diff.stdout.splitlines()[-1] == (
        "identical: both copies are matches not started, no event in either (A and B have no "
        "whole header: delete the files)")
    signed, at = _torn_signature(tmp_path)
    torn = log.verify(signed).torn
    assert torn is not None and (torn.offset, torn.seq) == (at, None)
    cut = tmp_path / "cut.blog"
    cut.write_bytes(GOOD.read_bytes()[:-5])
    torn = log.verify(cut).torn
    assert torn is not None and (torn.offset, torn.seq) == (log.HEADER_SIZE, 0)


@pytest.mark.slow
def test_diff_of_two_empty_logs_is_identical_in_both_forms(tmp_path: Path) -> None:
    for name in ("a.blog", "b.blog", "a.jsonl", "b.jsonl"):
        (tmp_path / name).write_bytes(b"")
    binary, text, both_json, mixed = cli_batch([
        ["diff", "a.blog", "b.blog"], ["diff", "a.jsonl", "b.jsonl"],
        ["diff", "-f", "json", "a.blog", "b.blog"], ["diff", "-f", "json", "a.blog", "b.jsonl"],
    ], cwd=tmp_path)
    assert binary.returncode == text.returncode == 0, (binary.stdout, text.stdout)
    assert text.stdout.splitlines()[-1] == "identical: same events, same head digest"
    for done in (both_json, mixed):
        assert done.returncode == 0 and json.loads(done.stdout)["identical"] is True
    assert binary.stderr == text.stderr == ""
    # headers alone of two log-format versions: no event differs, the version does (the
    # head digest covers it), as of two whole copies of one match (exit 1 all the same)
    for version in (1, 2):
        (tmp_path / f"v{version}.blog").write_bytes(
            (ROOT / "examples" / "format" / f"v{version}.blog").read_bytes()[:log.HEADER_SIZE])
    versions = cli_batch([["diff", "v1.blog", "v2.blog"]], cwd=tmp_path)[0]
    assert versions.returncode == 1 and versions.stdout.splitlines()[-1] == (
        "both copies are matches not started: no event to compare; only their log-format "
        "versions differ"), versions.stdout


@pytest.mark.slow
def test_verify_names_the_same_seq_of_a_torn_tail_in_its_line_and_json(tmp_path: Path) -> None:
    """A torn signature record: no seq in either (the line says "after seq 715"). A torn
    record of events: seq 0 in both (the line named none, the JSON seq 0)."""
    signed, at = _torn_signature(tmp_path)
    cut = tmp_path / "cut.blog"
    cut.write_bytes(GOOD.read_bytes()[:-5])  # its one record of events, cut short
    sig_text, sig_json, ev_text, ev_json = cli_batch([
        ["verify", signed], ["verify", "-f", "json", signed], ["verify", cut],
        ["verify", "-f", "json", cut]])
    for done in (sig_text, sig_json, ev_text, ev_json):
        assert done.returncode == 1 and len(done.stderr.splitlines()) == 1, done.stderr
    line = sig_text.stderr.strip()
    assert line.startswith(f"buraco-log: error: {signed}, byte {at}: torn tail: signature "
                           "record cut short"), line
    error = json.loads(sig_json.stdout)["error"]
    assert (error["offset"], error.get("seq"), error["rule"]) == (at, None, "log.torn")
    line = ev_text.stderr.strip()
    assert line.startswith(f"buraco-log: error: {cut}, byte {log.HEADER_SIZE}, seq 0: torn "
                           "tail: segment payload cut short"), line
    error = json.loads(ev_json.stdout)["error"]
    assert (error["offset"], error["seq"]) == (log.HEADER_SIZE, 0)


# -- a file named as a directory (a '/' at its end) ----------------------------------------------


@pytest.mark.slow
def test_a_log_or_rules_file_named_with_a_slash_at_its_end_is_not_a_directory(
        tmp_path: Path) -> None:
    """Path() drops a name's last '/': `show m.blog/` read m.blog, `seal m.blog/` rewrote it and
    `--rules h.toml/` played its house rules, where open(), `cat` and every other tool say "Not
    a directory". Now each is refused, exit 2, one line naming it, nothing read or written."""
    shutil.copy(GOOD, tmp_path / "m.blog")
    (tmp_path / "h.toml").write_text('preset = "classic"\n')
    before = _state(tmp_path)
    runs: list[list[object]] = [
        ["show", "m.blog/"], ["seal", "m.blog/."], ["view", "m.blog/", "-o", "p.html"],
        ["diff", "m.blog", "m.blog/"], ["audit", "-f", "json", "m.blog/"],
        ["rules", "show", "h.toml/"], ["demo", "--rules", "h.toml/", "-o", "d.blog"]]
    for args, done in zip(runs, cli_batch(runs, cwd=tmp_path), strict=True):
        what = (args, done.returncode, done.stdout[-300:], done.stderr)
        assert done.returncode == 2, what
        lines = done.stderr.splitlines()
        assert len(lines) == 1 and "Traceback" not in done.stderr, what
        named = next(str(a) for a in args if str(a).startswith(("m.blog/", "h.toml/")))
        assert f"{named}: Not a directory" in lines[0], what
        if "json" in args:
            assert json.loads(done.stdout)["error"]["exit_status"] == 2, what
    assert _state(tmp_path) == before


# -- a loop of symbolic links named as an output ------------------------------------------------


@pytest.mark.slow
def test_a_loop_of_links_named_as_an_output_is_refused_and_kept(tmp_path: Path) -> None:
    """A loop of links names no file: `demo --overwrite -o LOOP` replaced the link itself with
    the log, exit 0, and `simulate -o LOOP` said "LOOP: File exists", exit 1; every other
    writer says "Too many levels of symbolic links", exit 2, as docs/cli.md promises."""
    os.symlink("b.blog", tmp_path / "a.blog")
    os.symlink("a.blog", tmp_path / "b.blog")
    os.symlink("nowhere", tmp_path / "sims")  # a link to a directory not made yet: made
    before = _state(tmp_path)
    runs: list[list[object]] = [
        ["demo", "--rules", "thirteen-quick", "--overwrite", "-o", "a.blog"],
        ["demo", "-f", "json", "--rules", "thirteen-quick", "--overwrite", "-o", "a.blog"],
        ["simulate", "--rules", "thirteen-quick", "-o", "a.blog"],
        ["convert", GOOD, "--to", "jsonl", "--overwrite", "-o", "a.blog"]]
    for args, done in zip(runs, cli_batch(runs, cwd=tmp_path), strict=True):
        what = (args, done.returncode, done.stdout[-300:], done.stderr)
        assert done.returncode == 2, what
        assert done.stderr == "buraco-log: error: a.blog: Too many levels of symbolic links\n", \
            what
    assert _state(tmp_path) == before  # both links as they were, nothing else made
    made = cli_batch([["simulate", "--rules", "thirteen-quick", "-o", "sims"]], cwd=tmp_path)[0]
    assert made.returncode == 0, made.stderr
    assert (tmp_path / "sims").is_symlink()
    assert [p.name for p in (tmp_path / "nowhere").iterdir()] == [
        "thirteen-quick-2p-000000.blog"]


@pytest.mark.slow
def test_keys_new_into_a_link_to_nowhere_names_the_link(tmp_path: Path) -> None:
    """`keys new K -d LINK`, LINK a link to a directory that does not exist: it said
    "LINK/K.key: No such file or directory; no key was kept", naming a file never asked for."""
    os.symlink("gone", tmp_path / "keys")
    done = cli_batch([["keys", "new", "site", "-d", "keys"]], cwd=tmp_path)[0]
    assert done.returncode == 2 and done.stdout == "", done.stderr
    assert done.stderr == ("buraco-log: error: keys: a symbolic link to 'gone', which does not "
                           "exist; --dir names an existing directory, or a new one in an "
                           "existing directory\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keys"]


@pytest.mark.slow
def test_schema_refuses_a_loop_of_links_and_an_empty_dir(tmp_path: Path) -> None:
    """`schema --dir LOOP` said "LOOP: File exists", exit 1 (`--check`: "out of date"), and
    `--dir ''` wrote into the current directory, where every other command refuses both."""
    os.symlink("b", tmp_path / "a")
    os.symlink("a", tmp_path / "b")
    before = _state(tmp_path)
    runs: list[list[object]] = [["schema", "--dir", "a"], ["schema", "--check", "--dir", "a"],
                                ["schema", "--dir", ""]]
    loop, check, empty = cli_batch(runs, cwd=tmp_path)
    for done in (loop, check):
        assert (done.returncode, done.stderr) == (
            2, "buraco-log: error: a: Too many levels of symbolic links\n"), done.stderr
    assert empty.returncode == 2 and "an empty name" in empty.stderr, empty.stderr
    assert _state(tmp_path) == before
