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
    assert ", seq 10: [" in said
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
