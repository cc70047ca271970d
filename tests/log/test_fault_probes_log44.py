"""Fault probes of the log, round 44 (helper log44).

- An illegal move refused by ``log.Writer.append`` named its seq and rule but not the log
  (the rules engine knows no file): it now names the writer's path, as every other refusal of
  the writer does; so does a writer that resumes a log holding an illegal event.
- ``jsonl_to_binary(validate=True)`` named the JSON Lines file only in attributes set after
  the fact (its one line said "seq 23: ..."): its error now names the file read and its line,
  never the temporary binary copy, and `convert --validate` says that line once.
- ``write_log`` left a log of the events before a refused one at its path (a match cut short
  that passes for a whole one): it now leaves nothing.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path

import msgspec
import pytest

from buraco_log import jsonl, log
from buraco_log.errors import IllegalMoveError
from buraco_log.signing.keys import Signer
from tests.cli.probes import ROOT, cli, one_error_line
from tests.log.samples import sample_events
from tests.recorder.sources import matches

EVENTS = matches()[0]


def _again(seq: int) -> object:
    """The move at ``seq - 1`` made again at ``seq``: illegal in every match."""
    return msgspec.structs.replace(EVENTS[seq - 1], seq=seq)


def test_an_illegal_append_names_the_writers_log(tmp_path: Path) -> None:
    path = tmp_path / "m.blog"
    with log.Writer(path) as writer:
        writer.append_many(EVENTS[:10])
        with pytest.raises(IllegalMoveError) as refused:
            writer.append(_again(10))  # type: ignore[arg-type]
    exc = refused.value
    assert exc.path == str(path) and exc.seq == 10 and exc.rule
    assert str(exc).startswith(f"{path}, seq 10: [{exc.rule}] ")


def test_an_illegal_event_in_append_many_names_the_writers_log(tmp_path: Path) -> None:
    path = tmp_path / "m.blog"
    with pytest.raises(IllegalMoveError) as refused, log.Writer(path, batched=True) as writer:
        writer.append_many([*EVENTS[:10], _again(10)])  # type: ignore[list-item]
    assert refused.value.path == str(path)
    assert str(refused.value).startswith(f"{path}, seq 10: ")


def test_a_writer_resuming_a_log_with_an_illegal_event_names_the_log(tmp_path: Path) -> None:
    path = tmp_path / "m.blog"
    log.write_log(path, [*EVENTS[:10], _again(10)], validate=False)  # type: ignore[list-item]
    with pytest.raises(IllegalMoveError) as refused:
        log.Writer(path)
    assert refused.value.path == str(path) and refused.value.seq == 10
    assert str(refused.value).startswith(f"{path}, seq 10: ")


def test_write_log_refusing_an_event_leaves_no_log(tmp_path: Path) -> None:
    path = tmp_path / "m.blog"
    with pytest.raises(IllegalMoveError) as refused:
        log.write_log(path, [*EVENTS[:10], _again(10)])  # type: ignore[list-item]
    assert refused.value.path == str(path)
    assert os.listdir(tmp_path) == []


def test_write_log_with_a_wrong_seq_leaves_no_log(tmp_path: Path) -> None:
    path = tmp_path / "m.blog"
    with pytest.raises(log.LogFormatError) as refused:
        log.write_log(path, [*EVENTS[:5], EVENTS[6]], validate=False)
    assert refused.value.kind == "seq"
    assert os.listdir(tmp_path) == []


def _illegal_jsonl(tmp_path: Path) -> Path:
    src = tmp_path / "m.blog"
    log.write_log(src, [*EVENTS[:10], _again(10), *EVENTS[11:12]], validate=False)
    out = tmp_path / "m.jsonl"
    jsonl.binary_to_jsonl(src, out)
    return out


def test_jsonl_to_binary_names_the_file_read_and_its_line_not_the_temporary(
        tmp_path: Path) -> None:
    src = _illegal_jsonl(tmp_path)
    line = next(i for i, text in enumerate(src.read_text().splitlines(), 1)
                if json.loads(text).get("seq") == 10)
    dst = tmp_path / "back.blog"
    with pytest.raises(IllegalMoveError) as refused:
        jsonl.jsonl_to_binary(src, dst, validate=True)
    exc = refused.value
    assert (exc.path, exc.line, exc.seq) == (str(src), line, 10)
    assert str(exc).startswith(f"{src}, line {line}, seq 10: [{exc.rule}] ")
    assert sorted(os.listdir(tmp_path)) == ["m.blog", "m.jsonl"]


def test_convert_validate_says_the_file_and_line_once(tmp_path: Path) -> None:
    src = _illegal_jsonl(tmp_path)
    done = cli("convert", "--validate", src.name, "-o", "back.blog", cwd=tmp_path)
    said = one_error_line(done, 1)
    assert said.startswith("buraco-log: error: m.jsonl, line ")
    assert said.count("m.jsonl") == 1 and ".tmp" not in said and "back.blog" not in said
    assert ", seq 10: " in said and said.endswith("[meld.cards_not_in_hand]")  # rule last
    assert done.stdout == ""
    assert not (tmp_path / "back.blog").exists()


# -- seal killed at random moments -------------------------------------------------------------

_SEAL = """
import sys
from buraco_log import log
print("go", flush=True)
log.seal(sys.argv[1])
print("sealed", flush=True)
"""


def _signed_unsealed(path: Path, count: int) -> list[object]:
    """An unsealed log of ``count`` events (many matches' worth: seal takes tens of ms), a
    signature record after every 500th event, as a signing writer's batches leave them."""
    signer = Signer.generate()
    events = sample_events(count)
    events[0] = msgspec.structs.replace(events[0], key_id=signer.key_id)
    with log.Writer(path, sealed=False, validate=False, signer=signer, sign_at="end",
                    batched=True, batch_events=500) as w:
        for at in range(0, count, 500):
            w.append_many(events[at:at + 500])
            w.sign_head()
    return list(events)


def _seal_killed(path: Path, after: float) -> bool:
    """``seal`` of ``path`` in a child killed ``after`` seconds after it starts: whether it
    finished first."""
    with subprocess.Popen([sys.executable, "-c", _SEAL, str(path)], cwd=ROOT,
                          stdout=subprocess.PIPE, text=True) as proc:
        assert proc.stdout is not None
        assert proc.stdout.readline() == "go\n"
        time.sleep(after)
        proc.kill()
        rest = proc.stdout.read()
        proc.wait()
    return "sealed" in rest


def _age_temporaries(folder: Path) -> None:
    for entry in folder.iterdir():
        if entry.name.startswith("."):
            old = entry.stat().st_mtime - 3600
            os.utime(entry, (old, old))


def _seal_runs(tmp_path: Path, runs: int, seed: int) -> tuple[int, int]:
    rng = random.Random(seed)
    done = cut = 0
    for run in range(runs):
        folder = tmp_path / f"run{run}"
        folder.mkdir()
        path = folder / "m.blog"
        events = _signed_unsealed(path, 12_000)
        before, info = path.read_bytes(), log.verify(path)
        finished = _seal_killed(path, rng.uniform(0, 0.06))
        after = log.verify(path)  # whole, never torn: the old file or the new one
        assert after.torn is None
        assert (after.events, after.head, after.signatures) == (
            info.events, info.head, info.signatures)
        if after.sealed:
            done += 1
        else:
            assert not finished and path.read_bytes() == before
            cut += 1
        _age_temporaries(folder)
        log.seal(path)  # sweeps what a killed seal left, then seals
        assert [p.name for p in folder.iterdir()] == ["m.blog"]
        assert log.read_events(path) == events and log.verify(path).head == info.head
    return done, cut


def test_a_seal_killed_at_random_leaves_the_log_whole_and_nothing_beside_it(
        tmp_path: Path) -> None:
    _seal_runs(tmp_path, 4, seed=44)


@pytest.mark.slow
def test_a_seal_killed_sixty_times_leaves_the_log_whole_and_nothing_beside_it(
        tmp_path: Path) -> None:
    done, cut = _seal_runs(tmp_path, 60, seed=4400)
    assert done and cut  # both outcomes were met


# -- hostile JSON Lines ---------------------------------------------------------------------------

GOLDEN = ROOT / "examples" / "golden" / "classic.jsonl"


def _edited(tmp_path: Path, at: int, edit: bytes | None = None, *,
            whole: bytes | None = None) -> Path:
    """The golden classic log with line ``at`` (1-based) replaced by ``edit``."""
    lines = GOLDEN.read_bytes().split(b"\n")
    if edit is not None:
        lines[at - 1] = edit
    path = tmp_path / "m.jsonl"
    path.write_bytes(whole if whole is not None else b"\n".join(lines))
    return path


def _line4(old: bytes, new: bytes) -> bytes:
    line = GOLDEN.read_bytes().split(b"\n")[3]
    assert old in line
    return line.replace(old, new, 1)


def test_crlf_line_ends_read_as_lf_with_the_same_head(tmp_path: Path) -> None:
    path = _edited(tmp_path, 0, whole=GOLDEN.read_bytes().replace(b"\n", b"\r\n"))
    assert jsonl.read_jsonl(path) == jsonl.read_jsonl(GOLDEN)
    out = tmp_path / "m.blog"
    jsonl.jsonl_to_binary(path, out)
    assert log.verify(out).head == log.head_digest(jsonl.read_jsonl(GOLDEN))


@pytest.mark.parametrize(("line", "words", "kind"), [
    (_line4(b'"seq":2', b'"seq":2.0'), "Expected `int`, got `float` - at `seq`", "unknown"),
    (_line4(b'"seat":0', b'"seat":1e0'), "Expected `int`, got `float` - at `seat`", "unknown"),
    (_line4(b'"seq":2', b'"seq":' + b"9" * 40), "field 'seq' holds an integer outside the "
     "signed 64-bit range", "range"),
    (_line4(b'"seq":2', b'"seq":' + b"9" * 100_000), "field 'seq' holds an integer outside "
     "the signed 64-bit range", "range"),
    (_line4(b'"seq":2', b'"seq":1e400'), "Number out of range", "jsonl"),
    (_line4(b'"seq":2}', b'"seq":2,"seq":2}'), "duplicate key 'seq': JSON parsers disagree",
     "jsonl"),
    (_line4(b'"seq":2}', b'"seq":2,"se\\u0071":3}'), "duplicate key 'seq'", "jsonl"),
    (b"\xef\xbb\xbf" + _line4(b"", b""), "the line starts with a byte order mark", "jsonl"),
    (_line4(b'"seq":2}', b'"seq":2,"x":' + b"[" * 200_000 + b"]" * 200_000 + b"}"),
     "JSON nested more than 10 deep", "limit"),
    (b"[" * 1_000_000, "JSON nested more than 10 deep", "limit"),
    (b'{"a":' * 150_000 + b"1" + b"}" * 150_000, "JSON nested more than 10 deep", "limit"),
    (b"[" * 3_000_000, "line longer than 1048576 bytes", "limit"),
], ids=["float-seq", "exponent-int", "huge-int", "100k-digits", "1e400", "dup-key",
        "dup-key-escaped", "bom-mid-file", "deep-array", "deep-unclosed", "deep-object",
        "over-1-mib"])
def test_a_hostile_json_line_is_refused_in_one_error_naming_its_line(
        tmp_path: Path, line: bytes, words: str, kind: str) -> None:
    path = _edited(tmp_path, 4, line)
    started = time.monotonic()
    with pytest.raises(log.LogFormatError) as refused:
        jsonl.read_jsonl(path)
    assert time.monotonic() - started < 5  # no hang, and no RecursionError
    exc = refused.value
    assert (exc.path, exc.line, exc.kind) == (str(path), 4, kind)
    assert words in str(exc) and "\n" not in str(exc) and len(str(exc)) < 600


def test_a_bom_and_a_duplicated_header_key_are_refused_on_line_1(tmp_path: Path) -> None:
    data = GOLDEN.read_bytes()
    path = _edited(tmp_path, 0, whole=b"\xef\xbb\xbf" + data)
    with pytest.raises(log.LogFormatError, match="starts with a byte order mark") as bom:
        jsonl.read_jsonl(path)
    assert bom.value.line == 1
    first, rest = data.split(b"\n", 1)
    path.write_bytes(first[:-1] + b', "sealed": true}\n' + rest)
    with pytest.raises(log.LogFormatError, match="duplicate key 'sealed'") as twice:
        jsonl.read_jsonl(path)
    assert twice.value.line == 1


def test_the_cli_says_a_deeply_nested_line_in_one_line(tmp_path: Path) -> None:
    path = _edited(tmp_path, 4, b"[" * 500_000 + b"]" * 500_000)
    for command in ("verify", "audit", "show"):
        done = cli(command, path.name, cwd=tmp_path, timeout=60)
        said = one_error_line(done, 1) if command != "audit" else done.stdout
        assert "line 4" in said and "nested more than 10 deep" in said, (command, said)
