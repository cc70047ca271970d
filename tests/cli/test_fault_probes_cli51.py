"""CLI probes: standard output that a reader leaves, closes or fills; `-f json` of every
command; `--cards symbols` beside names and ids that look like cards; hostile names."""

from __future__ import annotations

import fcntl
import json
import os
import resource
import shutil
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

import msgspec
import pytest

from buraco_log.jsonl import read_jsonl
from buraco_log.log import encode_log
from buraco_log.timeline import with_symbols
from tests.cli.probes import ROOT

GOOD = ROOT / "examples" / "sim" / "classic-2p-000000.blog"
GOLDEN = ROOT / "examples" / "golden" / "classic.jsonl"
ILLEGAL = ROOT / "examples" / "disputes" / "illegal.log"
ENV = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200", "LANG": "C.UTF-8",
       "LC_ALL": "", "NO_COLOR": ""}


def _named_log(path: Path, names: tuple[str, str], match_id: str) -> Path:
    """The golden classic match with its players and match id renamed, sealed anew."""
    events = read_jsonl(GOLDEN)
    start = events[0]
    players = tuple(msgspec.structs.replace(p, name=n)
                    for p, n in zip(start.players, names, strict=True))  # type: ignore[union-attr]
    events[0] = msgspec.structs.replace(start, players=players,  # type: ignore[type-var]
                                        match_id=match_id)
    path.write_bytes(encode_log(events, sealed=True))
    return path


def _start(args: list[object], stdout: object = subprocess.PIPE, env: dict[str, str] = ENV,
           **kw: object) -> subprocess.Popen[bytes]:
    argv = [a if isinstance(a, bytes) else os.fsencode(str(a)) for a in args]
    return subprocess.Popen([sys.executable, "-m", "cli", *argv],  # type: ignore[call-overload]
                            cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stdout=stdout,
                            stderr=subprocess.PIPE, **kw)


# -- 1. standard output left, closed or full -------------------------------------------------


def _limit_file_size() -> None:
    resource.setrlimit(resource.RLIMIT_FSIZE, (50 * 1024, resource.RLIM_INFINITY))


def _when_full(r: int, proc: subprocess.Popen[bytes], timeout: float = 60) -> None:
    """Wait until the pipe read at ``r`` holds all it can (64 KiB) or ``proc`` has ended."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        if struct.unpack("i", fcntl.ioctl(r, termios.FIONREAD, b"\0" * 4))[0] >= 65536:
            time.sleep(0.3)  # time to fail, for a writer that fails on a full pipe
            return
        time.sleep(0.02)


def test_a_page_cut_short_on_standard_output_is_never_taken_for_whole(tmp_path: Path) -> None:
    """Under PYTHONUNBUFFERED=1 (many containers set it) standard output had no buffer, and a
    write that took part of `view -o -`'s page lost the rest without a word: over a file size
    limit it left a cut page and ended 0 (into `| head -1`, 0 not 141: the sweep below). A
    descriptor left non-blocking (node, some CI runners) failed the page at 64 KiB, exit 1
    ("write could not complete without blocking"). Now every byte is written or the failure
    is said: 1 for the limit, the whole page when the reader is slow."""
    unbuffered = {**ENV, "PYTHONUNBUFFERED": "1"}
    buffered = {k: v for k, v in ENV.items() if k != "PYTHONUNBUFFERED"}
    page = tmp_path / "page.html"
    with page.open("wb") as f:
        limited = _start(["view", GOOD, "-o", "-"], stdout=f, env=unbuffered,
                         preexec_fn=_limit_file_size)
    r, w = os.pipe()
    os.set_blocking(w, False)
    slow = _start(["view", GOOD, "-o", "-"], stdout=w, env=buffered)
    os.close(w)
    _when_full(r, slow)
    with open(r, "rb") as reader:
        read = reader.read()
    _, err = slow.communicate(timeout=120)
    assert (slow.returncode, err) == (0, b""), (slow.returncode, err, len(read))
    assert read.endswith(b"</html>\n"), read[-100:]
    _, err = limited.communicate(timeout=120)
    assert limited.returncode == 1, (limited.returncode, err)
    assert err.decode().splitlines() == ["buraco-log: error: <stdout>: File too large"]
    assert page.stat().st_size == 50 * 1024  # what the limit let through, and said so


# one process per command; each meets one of the three ends of standard output
PIPED: list[tuple[str, list[object]]] = [
    ("gone", ["show", GOOD]), ("closed", ["replay", GOOD]), ("full", ["moves", GOOD]),
    ("gone", ["explain", GOOD, "--at", 5]), ("closed", ["diff", GOOD, ILLEGAL]),
    ("full", ["audit", ILLEGAL]), ("gone", ["verify", GOOD, GOOD]), ("closed", ["rules", "list"]),
    ("full", ["rules", "show", "classic"]), ("gone", ["convert", GOOD, "-o", "-", "--to", "jsonl"]),
    ("head", ["view", GOOD, "-o", "-"]), ("full", ["repair", GOOD, "--dry-run"]),
    ("gone", ["--help"]), ("closed", ["--version"]), ("full", ["show", "--help"]),
    ("gone", ["show", GOOD, "-f", "json"]), ("closed", ["audit", GOOD, "-f", "json"]),
    ("full", ["replay", GOOD, "-f", "json"]), ("gone", ["review", GOOD, "--seat", 0, "--budget",
                                                        "2x1r0"]),
]


@pytest.mark.slow
def test_every_command_whose_standard_output_is_left_closed_or_full_says_so_once() -> None:
    """A reader gone before the first byte (`| head` done already), or `| head -1` reading a
    page written in one piece under PYTHONUNBUFFERED=1 (it ended 0): 141 and not a word.
    Started without standard output (`>&-`) or onto a full device: 1 and one line naming
    <stdout>. Never a traceback or Python's "Exception ignored" line."""
    started = []
    heads = []
    for how, args in PIPED:
        if how == "head":
            head = subprocess.Popen(["head", "-1"], stdin=subprocess.PIPE,
                                    stdout=subprocess.DEVNULL)
            started.append((how, args, _start(args, stdout=head.stdin,
                                              env={**ENV, "PYTHONUNBUFFERED": "1"})))
            assert head.stdin is not None
            head.stdin.close()
            heads.append(head)
        elif how == "gone":
            r, w = os.pipe()
            os.close(r)
            started.append((how, args, _start(args, stdout=w)))
            os.close(w)
        elif how == "closed":
            started.append((how, args, _start(args, stdout=None, preexec_fn=lambda: os.close(1))))
        else:
            with open("/dev/full", "wb") as full:
                started.append((how, args, _start(args, stdout=full)))
    for how, args, proc in started:
        _, err = proc.communicate(timeout=300)
        for head in heads:
            head.wait(timeout=60)
        text = err.decode()
        assert "Traceback" not in text and "Exception ignored" not in text, (args, text)
        if how in ("gone", "head"):
            assert (proc.returncode, text) == (141, ""), (args, proc.returncode, text)
            continue
        said = {"closed": "standard output is closed", "full": "No space left on device"}[how]
        assert proc.returncode == 1, (args, proc.returncode, text)
        assert text.splitlines() == [f"buraco-log: error: <stdout>: {said}"], (args, text)


# -- 2. -f json of every command -------------------------------------------------------------

def _json_runs(tmp: Path) -> list[tuple[list[object], set[str] | type[list], int]]:
    """(ARGS, the keys its JSON object holds at least (or list: a list), the exit status)."""
    archive = tmp / "archive"
    subprocess.run([sys.executable, "-m", "cli", "ingest", "-a", archive, GOOD], cwd=ROOT,
                   env=ENV, check=True, capture_output=True)
    shutil.copy(GOOD, tmp / "seal.blog")
    missing = tmp / "missing.blog"
    return [
        (["show", GOOD], {"match_id", "hands", "integrity"}, 0),
        (["show", ILLEGAL], {"match_id", "first_illegal"}, 1),
        (["replay", GOOD, "--at", 30], {"seq", "seats", "pile"}, 0),
        (["moves", GOOD], {"groups", "seat", "seq"}, 0),
        (["explain", GOOD, "--at", 5], {"legal", "rule", "seq"}, 0),
        (["diff", GOOD, ILLEGAL], {"diverge_seq", "a", "b"}, 1),
        (["audit", ILLEGAL], {"ok", "findings", "path"}, 1),
        (["verify", GOOD], {"events", "head", "path"}, 0),
        (["verify", GOOD, GOOD], list, 0),
        (["verify", archive], {"archive", "ok"}, 0),
        (["rules", "list"], list, 0),
        (["rules", "show", "classic"], {"canastra_size"}, 0),
        (["query", archive, "select count(*) n from events"], list, 0),
        (["report", archive], {"sections", "matches"}, 0),
        (["compact", archive, "--dry-run"], {"dry_run"}, 0),
        (["convert", GOOD, "-o", tmp / "c.jsonl"], {"events", "form", "head"}, 0),
        (["repair", GOOD, "--dry-run"], {"repaired"}, 0),
        (["seal", tmp / "seal.blog"], {"sealed", "head"}, 0),
        (["review", GOOD, "--seat", 0, "--budget", "2x1r0"], {"decisions", "budget"}, 0),
        (["demo", "-o", tmp / "demo.blog"], {"audit", "log"}, 0),
        (["simulate", "-o", tmp / "sim"], {"matches", "out"}, 0),
        (["keys", "new", "k", "-d", tmp / "keys"], {"public", "private"}, 0),
        (["ingest", "-a", tmp / "archive2", GOOD], {"added", "archive"}, 0),
        (["show", missing], {"error"}, 2), (["replay", GOOD, "--at", 99999], {"error"}, 2),
        (["moves", missing], {"error"}, 2), (["explain", GOOD, "--at", 99999], {"error"}, 2),
        (["diff", GOOD, missing], {"error"}, 2), (["audit", missing], {"error"}, 2),
        (["verify", missing], {"error"}, 2), (["rules", "show", "nope"], {"error"}, 2),
        (["query", archive, "select nope"], {"error"}, 1), (["report", missing], {"error"}, 2),
        (["convert", missing, "-o", tmp / "x.jsonl"], {"error"}, 2),
        (["review", missing, "--seat", 0], {"error"}, 2),
        (["demo", "--rules", "nope"], {"error"}, 2), (["seal", missing], {"error"}, 2),
        (["show", GOOD, "--bogus"], {"error"}, 2), (["replay", GOOD, "--seat", 9], {"error"}, 2),
    ]


def _sorted_keys(value: object) -> bool:
    if isinstance(value, dict):
        return list(value) == sorted(value) and all(map(_sorted_keys, value.values()))
    if isinstance(value, list):
        return all(map(_sorted_keys, value[:3]))
    return True


@pytest.mark.slow
def test_every_command_answers_json_with_one_document(tmp_path: Path) -> None:
    """`-f json`: one JSON document on stdout, keys sorted, of the documented shape; on an
    error the documented ``{"error": {code, message, exit_status}}`` with the exit status the
    process ended with, and the one line on stderr."""
    runs = _json_runs(tmp_path)
    for i in range(0, len(runs), 4):  # four at a time: two cores, and DuckDB's threads
        batch = [(args, shape, status, _start([*args, "-f", "json"]))
                 for args, shape, status in runs[i:i + 4]]
        for args, shape, status, proc in batch:
            out, err = proc.communicate(timeout=300)
            assert proc.returncode == status, (args, proc.returncode, err[-300:])
            doc = json.loads(out)  # one document: anything after it fails here
            assert _sorted_keys(doc), args
            if shape is list:
                assert isinstance(doc, list), args
            else:
                assert isinstance(doc, dict) and shape <= doc.keys(), (args, sorted(doc)[:9])
            if "error" in doc:
                assert set(doc["error"]) >= {"code", "message", "exit_status"}, args
                assert doc["error"]["exit_status"] == status, args
                assert len(err.splitlines()) == 1, (args, err)


# -- 3. --cards symbols beside names and ids that look like cards ----------------------------


def test_symbols_change_only_the_words_that_stand_where_cards_stand() -> None:
    """`with_symbols` read every card-like word as a card, except a name where it stood alone:
    a card named as a player is (a meld ``set Qs Qd Qc`` kept ``Qs``), a match id ``Ah`` and
    a name in `diff`'s fields became suit symbols, and the rule text "twos: 2s alone" ``2♠``."""
    names = ("Qs", "6d")
    assert with_symbols("  side 1 #1 set Qs Qd Qc", names=names) == "  side 1 #1 set Q♠ Q♦ Q♣"
    assert with_symbols("  seat 1 6d (4): Jh Jd 6c 6d", names=names) == \
        "  seat 1 6d (4): J♥ J♦ 6♣ 6♦"
    assert with_symbols("  seq 9: seat 0 (Qs) discarded Qs", names=names) == \
        "  seq 9: seat 0 (Qs) discarded Q♠"
    for kept in ("match Ah  rules classic", "  players[0].name: Kh vs Qs",
                 "  match_id: 10s vs Ah", "  A: seq 0: match 9d started (classic; Kh, As)",
                 "  metadata.table: Ah vs Kh",
                 "As the rules say", "There is no set of twos: 2s alone, or with one joker"):
        assert with_symbols(kept) == kept
    assert with_symbols("  card: Ah vs Kh") == "  card: A♥ vs K♥"


@pytest.mark.slow
def test_diff_with_symbols_keeps_players_and_match_ids_that_look_like_cards(
        tmp_path: Path) -> None:
    """`diff --cards symbols` of two copies whose players are Kh and As, their match ids 10s
    and Ah: the names and ids were written K♥, A♠ and A♥ in the divergence's lines."""
    a = _named_log(tmp_path / "a.blog", ("Kh", "As"), "10s")
    b = _named_log(tmp_path / "b.blog", ("Qs", "6d"), "Ah")
    proc = _start(["diff", a, b, "--cards", "symbols"])
    out, err = proc.communicate(timeout=120)
    text = out.decode()
    assert proc.returncode == 1, err
    assert "  A: seq 0: match 10s started (classic; Kh, As)" in text, text
    assert "  B: seq 0: match Ah started (classic; Qs, 6d)" in text, text
    assert "  match_id: 10s vs Ah" in text and "  players[0].name: Kh vs Qs" in text, text


# -- 4. hostile names ------------------------------------------------------------------------

HOSTILE = [b"new\nline", b"cr\rret", b"esc\x1b[31mred", "rlo\u202egolb".encode(), b"bad\xff\xfe"]
RAW = (b"\x1b", b"\r", "\u202e".encode(), b"\xff", b"\x07")


@pytest.mark.slow
def test_hostile_names_are_shown_escaped_in_every_line(tmp_path: Path) -> None:
    """Log names with a newline, a carriage return, an ANSI escape, a right-to-left override
    or bytes that are not UTF-8, and players and a match id made of them: every line on stdout
    and stderr shows them escaped, one line each, nothing coloured or overwritten. A `demo`
    seed of such bytes is refused as `simulate` refuses it."""
    named = []
    for stem in HOSTILE:
        path = os.path.join(os.fsencode(tmp_path), stem + b".blog")
        with open(path, "wb") as f:
            f.write(ILLEGAL.read_bytes())
        named.append(path)
    players = _named_log(tmp_path / "players.blog", ("ev\nil", "a\rb\x1b[31mRED\u202eevil"),
                         "m\x1b]0;title\x07\ny")
    runs: list[list[object]] = [["audit", *named], ["show", named[0]],
                                ["show", os.path.join(os.fsencode(tmp_path), b"no\n\x1b[2J")],
                                ["show", players], ["diff", players, GOOD],
                                ["demo", "--seed", b"s\xff\x1b", "-o", tmp_path / "demo.blog"]]
    procs = [_start(args) for args in runs]
    done = [(args, *p.communicate(timeout=120)) for args, p in zip(runs, procs, strict=True)]
    for args, out, err in done:
        for raw in RAW:
            assert raw not in out and raw not in err, (args[0], raw, out[-300:], err[-300:])
    audit_out = done[0][1].decode()
    for shown in ("new\\x0aline", "cr\\x0dret", "esc\\x1b[31mred", "rlo\\u202egolb",
                  "bad\\xff\\xfe"):
        assert f"{shown}.blog" in audit_out, (shown, audit_out[:600])
    assert done[1][2].decode().count("\n") == 1  # the illegal event: one line on stderr
    missing = done[2][2].decode().splitlines()
    assert len(missing) == 1 and "no\\x0a\\x1b[2J: No such file" in missing[0], missing
    assert "ev\\x0ail" in done[3][1].decode() and "m\\x1b]0;title\\x07\\x0ay" in \
        done[4][1].decode()
    assert not any(line.startswith(("il", "y ")) for line in done[3][1].decode().splitlines())
    # a seed that is not UTF-8: `simulate` refused it, `demo` was an internal error (exit 1)
    seed = done[5][2].decode().splitlines()
    assert seed == ["buraco-log: error: --seed s\\xff\\x1b: not UTF-8 text; give the seed as text"]
    assert not (tmp_path / "demo.blog").exists()
