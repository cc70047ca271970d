"""Seal, probed with real processes: killed at every step, two at once, after a writer died
mid-record, and on a file system that makes neither hard links nor a rename that never
replaces. After each, every acknowledged event is in the log (sealed or not), it verifies, and
no temporary file is left once the next seal has run."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from buraco_log import log
from buraco_log.errors import LogFormatError
from tests.log.samples import sample_events

ROOT = Path(__file__).resolve().parents[2]
EVENTS = sample_events(30)


def _run(*args: str, code: str | None = None) -> subprocess.CompletedProcess[str]:
    head = ["-c", code] if code is not None else ["-m", "tests.log.sealkill"]
    return subprocess.run([sys.executable, *head, *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=120, check=False,
                          env=dict(os.environ, PYTHONPATH=str(ROOT)))


def _unsealed(tmp_path: Path) -> Path:
    path = tmp_path / "m.blog"
    with log.Writer(path, sealed=False, validate=False) as w:
        for i in range(0, len(EVENTS), 5):  # six records: seal rewrites them as five (of 7)
            w.append_many(EVENTS[i:i + 5])
    return path


def _age_temporaries(path: Path) -> list[str]:
    """The hidden files beside the log, made a minute old: what a killed run left, which the
    next seal removes (it leaves a temporary younger than STALE_AFTER, maybe still in use)."""
    left = [p for p in path.parent.iterdir() if p.name != path.name]
    old = time.time() - 2 * log.STALE_AFTER
    for p in left:
        os.utime(p, (old, old))
    return sorted(p.name for p in left)


def _whole_after_a_kill(path: Path, head: str) -> bool:
    """The log after seal was killed: every event, verified, the head unchanged; then the next
    seal leaves nothing beside it. True if the killed seal had replaced the log already."""
    info = log.verify(path)
    assert log.read_events(path) == EVENTS and info.head == head
    left = _age_temporaries(path)
    assert all(name.startswith(".m.blog.") or name.startswith("..m.blog.") for name in left), left
    again = log.seal(path)
    assert again.sealed and again.head == head and log.read_events(path) == EVENTS
    assert sorted(p.name for p in path.parent.iterdir()) == ["m.blog"]
    return info.sealed


@pytest.mark.parametrize("point", ["seal.before-rename", "seal.renamed"])
def test_seal_killed_at_each_of_its_steps_loses_nothing_and_the_next_seal_cleans_up(
        tmp_path: Path, point: str) -> None:
    path = _unsealed(tmp_path)
    head = log.verify(path).head
    done = _run(str(path), "point", point)
    assert done.returncode == -9, done.stderr
    assert _whole_after_a_kill(path, head) is (point == "seal.renamed")


@pytest.mark.slow
def test_seal_killed_before_every_one_of_its_system_calls_loses_nothing(tmp_path: Path) -> None:
    path = tmp_path / "m.blog"
    killed = replaced = 0
    for n in range(1000):
        for p in tmp_path.iterdir():
            p.unlink()
        path = _unsealed(tmp_path)
        head = log.verify(path).head
        done = _run(str(path), "call", str(n))
        if done.returncode == 0:  # past its last call: seal ran to the end
            assert done.stdout.split()[:2] == ["sealed", str(len(EVENTS))]
            break
        assert done.returncode == -9, (n, done.stderr)
        killed += 1
        replaced += _whole_after_a_kill(path, head)
    else:
        raise AssertionError("seal was still being killed after 1000 calls")
    assert killed > 20 and 0 < replaced < killed  # killed both before and after its rename


def test_two_seals_at_once_each_seal_the_log_and_lose_nothing(tmp_path: Path) -> None:
    path = _unsealed(tmp_path)
    head = log.verify(path).head
    first = subprocess.Popen([sys.executable, "-m", "tests.log.racer", "seal", str(path),
                              "--pause", "seal.before-rename"], cwd=ROOT, text=True,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    reached = Path(f"{path}.seal.before-rename.reached")
    deadline = time.monotonic() + 60
    while not reached.exists():
        assert first.poll() is None and time.monotonic() < deadline, first.stderr
        time.sleep(0.005)
    # the second opens the old file and waits for its lock; once the first has renamed the
    # sealed file into place it must move to that one, not seal the old file over it
    second = subprocess.Popen([sys.executable, "-m", "tests.log.racer", "seal", str(path),
                               "--timeout", "60"], cwd=ROOT, text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    time.sleep(0.3)
    assert second.poll() is None
    Path(f"{path}.seal.before-rename.go").touch()
    for proc in (first, second):
        out, err = proc.communicate(timeout=60)
        assert (proc.returncode, out) == (0, f"sealed {len(EVENTS)}\n"), err
    for marker in tmp_path.glob("m.blog.seal.*"):
        marker.unlink()
    info = log.verify(path)
    assert info.sealed and info.head == head and log.read_events(path) == EVENTS
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.blog"]


def test_seal_of_a_log_whose_writer_was_killed_mid_record_is_refused_then_seals_once_repaired(
        tmp_path: Path) -> None:
    path = tmp_path / "m.blog"
    done = _run(str(path), "halfway", str(len(EVENTS)))
    assert done.returncode == -9, done.stderr
    acked = [int(line.split()[1]) for line in done.stdout.splitlines()]
    assert acked == list(range(len(EVENTS) - 1))
    before = path.read_bytes()
    with pytest.raises(LogFormatError) as caught:
        log.seal(path)
    assert caught.value.kind == "torn" and caught.value.seq == len(EVENTS) - 1
    assert path.read_bytes() == before  # refused: nothing changed, nothing beside it
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.blog"]
    log.repair(path)
    info = log.seal(path)
    assert info.sealed and log.read_events(path) == EVENTS[:-1]  # every acknowledged one
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.blog", "m.blog.bak"]


_NO_LINKS = """
import errno, os, sys
def link(src, dst, *args, **kwargs):  # as the kernel: a name taken is EEXIST, before EPERM
    if os.path.lexists(dst):
        raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST), src, None, dst)
    raise OSError(errno.EPERM, os.strerror(errno.EPERM), src, None, dst)
os.link = link
from buraco_log import log
def renameat2(src, dst, flags):
    raise OSError(errno.ENOSYS, os.strerror(errno.ENOSYS), src, None, dst)
log.renameat2 = renameat2
sys.argv = ["buraco-log", *sys.argv[1:]]
from cli.entry import run
run()
"""


def test_seal_on_a_file_system_without_hard_links_or_a_rename_that_never_replaces(
        tmp_path: Path) -> None:
    """seal puts its copy in place by rename, which every file system makes: it was refused
    ("this file system makes no hard link ... nothing was written") since the copy was made
    as a writer makes a new log."""
    path = _unsealed(tmp_path)
    head = log.verify(path).head
    done = _run("seal", str(path), code=_NO_LINKS)
    assert done.returncode == 0, done.stderr
    info = log.verify(path)
    assert info.sealed and info.head == head and log.read_events(path) == EVENTS
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.blog"]
    # where a new file is made, it is still refused: convert's output, a writer's new log
    done = _run("convert", str(path), "-o", str(tmp_path / "m.jsonl"), code=_NO_LINKS)
    assert done.returncode != 0 and "makes no hard link" in done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.blog"]


# -- the JSON Lines reader under arbitrary values ------------------------------------------------

_LINES: list[dict[str, object]] = [
    {"log": "buraco-log", "version": 2, "sealed": True},
    {"t": "tc", "totals": [100, 200]},
    {"t": "hs", "hand": 0, "dealer": 0, "hands": [["7h", "8h"], ["9c", "JK"]], "mortos": [["2s"]],
     "stock": ["As", "Kd"], "upcard": "Qs", "shuffle": "fy-hmac-sha256-v1", "seed": "ab"},
    {"t": "dr", "seat": 0, "card": "7h"},
    {"t": "rj", "seat": 0, "card": "7h", "at": 1700000000000, "note": "dealt again"},
    {"t": "pt", "seat": 1, "count": 3, "top": "10h"},
    {"t": "ml", "seat": 0, "cards": ["7h", "8h", "9h"], "meld": 2},
    {"t": "lo", "seat": 0, "meld": 0, "cards": ["Th"]},
    {"t": "rt", "seat": 0, "cards": ["7♥"]},
    {"t": "dc", "seat": 0, "card": "7h"},
    {"t": "mt", "seat": 0, "direct": True, "count": 11},
    {"t": "wo", "seat": 0},
    {"t": "he", "reason": "went_out", "scores": [120, -35]},
    {"t": "me", "totals": [1600, 900], "winner": 0, "server_seed": "00ff"},
]


def _fuzz_lines() -> list[dict[str, object]]:
    """A first line, one event of every type (the reader checks no rule), a signature line
    over the head after them, and the end line: every kind of line a JSON Lines log holds."""
    from buraco_log import jsonl

    start = jsonl.event_to_json(sample_events(1)[0])
    lines = [dict(_LINES[0]), start, *(dict(obj) for obj in _LINES[1:])]
    for seq, obj in enumerate(lines[1:]):
        obj["seq"] = seq
    events = [jsonl.event_from_json(dict(obj)) for obj in lines[1:]]
    head = log.head_digest(events)
    lines.append({"log": "signature", "match_id": start["match_id"], "seq": len(events) - 1,
                  "head": head, "key_id": "0" * 16, "signature": "00" * 64})
    lines.append({"log": "end", "events": len(events), "head": head})
    return lines


_PYTHON_WORDS = ("TypeError", "KeyError", "OverflowError", "RecursionError", "AttributeError",
                 "IndexError", "Traceback", "object has no attribute", "not subscriptable",
                 "unhashable", "NoneType")


def _read_with(tmp: Path, lines: list[dict[str, object]], at: int, field: str,
               value: object, drop: bool, ascii_only: bool) -> None:
    """Line ``at`` with ``field`` set to ``value`` (or left out): the file reads, or one
    LogFormatError names the file, that line and the field, in the project's words."""
    import json

    from buraco_log import jsonl

    changed = [dict(obj) for obj in lines]
    if drop:
        changed[at].pop(field, None)
    else:
        changed[at][field] = value
    text = "\n".join(json.dumps(obj, ensure_ascii=ascii_only) for obj in changed) + "\n"
    path = tmp / "f.jsonl"
    path.write_bytes(text.encode("utf-8", "surrogatepass"))  # lone surrogates as bytes too
    try:
        jsonl.read_jsonl(path)
    except LogFormatError as exc:
        said = str(exc)
        assert exc.path == str(path) and exc.line is not None, said
        assert not any(word in said for word in _PYTHON_WORDS), said
        about_a_line = (exc.line == at + 1 or exc.kind in ("seq", "chain") or
                        (changed[at].get("log") == "buraco-log" and exc.kind == "version"))
        assert about_a_line, said
        if exc.line == at + 1 and not drop and field not in ("t", "log") and exc.kind in (
                "jsonl", "unknown", "range", "limit", "decode"):
            assert field in said, said  # the field at fault is named


def _json_values() -> object:
    from hypothesis import strategies as st

    leaf = st.one_of(
        st.none(), st.booleans(), st.integers(), st.integers(-2**200, 2**200),
        st.floats(), st.text(max_size=20),
        st.sampled_from(["7h", "JK", "\ud800", "\udc00x", "10h", "", "x" * 300, "NaN"]))
    nested = st.recursive(leaf, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
        st.text(max_size=4), inner, max_size=3), max_leaves=10)
    deep = st.integers(8, 200).map(lambda n: [[]] if n < 9 else
                                   __import__("json").loads("[" * n + "]" * n))
    return st.one_of(nested, deep)


def _fuzz(tmp_path: Path, examples: int) -> None:
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    lines = _fuzz_lines()

    @settings(max_examples=examples, deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck))
    @given(st.integers(0, len(lines) - 1), st.data(), _json_values(), st.booleans(),
           st.booleans())
    def probe(at: int, data: st.DataObject, value: object, drop: bool, ascii_only: bool
              ) -> None:
        field = data.draw(st.sampled_from([*lines[at], "zz"]))
        _read_with(tmp_path, lines, at, field, value, drop, ascii_only)

    probe()


def test_every_field_of_every_json_lines_line_refuses_a_wrong_value_in_one_line_naming_it(
        tmp_path: Path) -> None:
    _fuzz(tmp_path, 25)


@pytest.mark.slow
def test_json_lines_fuzzed_ten_thousand_times_names_the_line_and_field(tmp_path: Path) -> None:
    _fuzz(tmp_path, 10_000)


@pytest.mark.parametrize(("field", "value", "said"), [
    ("seat", b"[" * 11 + b"]" * 11, "field 'seat': JSON nested more than 10 deep"),
    ("card", b"NaN", "not a JSON line: field 'card': NaN at byte"),
    ("cards", b'["7h", "\\ud800"]', "not a JSON line: field 'cards': the escape \\ud800"),
    ("note", b'"\xff"', "not a JSON line: field 'note': byte"),
    ("count", b"1e999", "not a JSON line: field 'count': Number out of range"),
])
def test_a_line_that_is_no_json_names_the_field_that_makes_it_so(
        tmp_path: Path, field: str, value: bytes, said: str) -> None:
    """These failed before the line became an object, and named the byte alone (a deep
    nesting not even that): a referee had to count bytes to find the field."""
    import json

    from buraco_log import jsonl

    start = json.dumps(jsonl.event_to_json(sample_events(1)[0])).encode()
    line = {"seat": b'{"t": "dr", "seat": %s, "card": "7h"}',
            "card": b'{"t": "dr", "seat": 0, "card": %s}',
            "cards": b'{"t": "ml", "seat": 0, "cards": %s}',
            "note": b'{"t": "dr", "seat": 0, "card": "7h", "note": %s}',
            "count": b'{"t": "pt", "seat": 0, "count": %s, "top": "7h"}'}[field] % value
    path = tmp_path / "f.jsonl"
    path.write_bytes(start + b"\n" + line + b"\n")
    with pytest.raises(LogFormatError) as caught:
        jsonl.read_jsonl(path)
    assert caught.value.line == 2 and said in caught.value.message, caught.value.message


# -- a match start naming no preset ---------------------------------------------------------------


def _named(name: str, **knobs: object) -> list[object]:
    import msgspec

    from buraco_log import rules

    events = log.read_events(ROOT / "examples" / "format" / "v2-unsealed.blog")
    start = events[0]
    changed = msgspec.structs.replace(rules.preset(start.rules.name), name=name, **knobs)
    return [msgspec.structs.replace(start, rules=changed), *events[1:]]


@pytest.mark.parametrize(("name", "knobs", "nearest", "house"), [
    ("turbo", {}, "thirteen-quick", {}),  # a preset's knobs under a free name
    ("mega-2031", {"player_counts": (2,)}, "thirteen-quick", {"player_counts": (2,)}),
    ("thirteen-quick+club", {"player_counts": (2,)}, None, {"player_counts": (2,)}),
    ("thirteen-quick", {}, None, {}),
])
def test_rules_named_as_no_preset_are_read_by_their_knobs_and_told_against_the_nearest(
        name: str, knobs: dict[str, object], nearest: str | None, house: dict[str, object]
) -> None:
    """A name is a label (house rules may say ``name = "turbo"``; a newer release may name a
    new preset): every knob is in the log, so the match replays and audits as recorded. `show`
    listed every one of the 40 knobs as a house rule; it names the preset they were told
    against, the nearest, and lists what differs from it."""
    from buraco_log import audit
    from buraco_log.reducer import Replayer
    from cli.dispute_cmd import render_summary

    events = _named(name, **knobs)
    r = Replayer()
    for event in events:
        r.step(event)  # read and replayed by its knobs: no refusal of the name
    summary = audit.summarize(events)
    assert (summary.preset, summary.nearest, summary.overrides) == (name, nearest, house)
    line = next(text for text in render_summary(summary) if text.startswith("rules "))
    told = f" (no preset of this name: its knobs told against {nearest}, the nearest)"
    assert line == (f"rules     {name}{told if nearest else ''}; house rules: "
                    + ("player_counts=2" if house else "none"))


def test_a_log_from_before_morto_voided_by_shows_the_reading_it_is_played_by() -> None:
    """A v1 log's rules hold no ``morto_voided_by`` and are played as "any_end"; every preset
    says "opponent_out" today, so "house rules: none" told a referee the log was played by
    today's preset."""
    from buraco_log import audit

    events = log.read_events(ROOT / "examples" / "format" / "v1.blog")
    summary = audit.summarize(events)
    assert events[0].rules.morto_voiding() == "any_end"  # type: ignore[union-attr]
    assert (summary.preset, summary.nearest, summary.overrides) == (
        "classic", None, {"morto_voided_by": "any_end"})
    today = audit.summarize(log.read_events(ROOT / "examples" / "format" / "v2.blog"))
    assert (today.preset, today.overrides) == ("classic", {})


# -- convert --overwrite onto a log a writer holds ------------------------------------------------


def test_convert_and_demo_overwrite_refuse_a_log_a_writer_holds_and_it_loses_nothing(
        tmp_path: Path) -> None:
    """It renamed its output over the live log without the lock: the recorder's 20
    acknowledged events were gone from the log's name, and the recorder learned so only at its
    next append ("replaced by a program that does not take the log's lock")."""
    from buraco_log import jsonl

    src = tmp_path / "src.jsonl"
    log.write_log(tmp_path / "src.blog", EVENTS[:5], validate=False)
    jsonl.convert(tmp_path / "src.blog", src, "jsonl")
    live = tmp_path / "live.blog"
    with log.Writer(live, validate=False) as w:
        for event in EVENTS[:20]:
            w.append(event)
        for command in (["convert", str(src)], ["demo"]):  # demo -o --overwrite did the same
            done = subprocess.run([sys.executable, "-m", "cli", *command, "-o", str(live),
                                   "--overwrite"], cwd=ROOT, capture_output=True, text=True,
                                  timeout=120, check=False)
            assert (done.returncode, done.stdout) == (1, "")
            assert done.stderr == (
                f"buraco-log: error: {live}: a writer holds this log (a recorder writing it "
                "now): replacing it would take from this name every event it acknowledged; "
                "nothing was written (replace it once the writer is done)\n")
            w.append(EVENTS[w.next_seq])  # still its log
    assert log.read_events(live) == EVENTS[:22]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["live.blog", "src.blog", "src.jsonl"]
