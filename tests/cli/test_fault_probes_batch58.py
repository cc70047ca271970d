"""A batch another program reads: a streamed answer (``audit -f json`` of many logs, ``query
-f json`` or ``jsonl``, ``verify -f json`` of several logs) cut by a failure or an interrupt
still parses, and ends with the error's object as its last item, which no row or verdict is.

The list was left open after its last whole item (no JSON reader took it), or empty
(``verify``), JSON Lines ended as if whole, and an interrupt that came while standard output
was full cut an item in half. The command-line runs (a real subprocess each) are slow-marked.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cli import common, streamout
from cli.audit_batch import JsonList
from cli.common import NamedStdout, fail
from tests.command_line import REPO, run_all, sigint_default

GOLDEN = REPO / "tests" / "golden"


class _Pipe:
    """Standard output a real pipe, read by a thread as it is written."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self._monkeypatch = monkeypatch
        self._r, w = os.pipe()
        self.out = open(w, "w", encoding="utf-8")  # noqa: SIM115 - closed by text()
        self._got: list[bytes] = []
        self._reader = threading.Thread(target=self._read)
        self._reader.start()

    def install(self) -> None:
        """Made standard output, in the test itself (pytest sets its own again before it)."""
        self._monkeypatch.setattr(sys, "stdout", NamedStdout(self.out))

    def _read(self) -> None:
        while chunk := os.read(self._r, 1 << 16):
            self._got.append(chunk)

    def text(self) -> str:
        """All that was written, once the writing end is closed."""
        if not self.out.closed:
            self.out.close()
            self._reader.join(5)
            os.close(self._r)
        return b"".join(self._got).decode()


@pytest.fixture
def piped(monkeypatch: pytest.MonkeyPatch) -> Iterator[_Pipe]:
    pipe = _Pipe(monkeypatch)
    monkeypatch.setattr(common.State, "debug", False)  # a run before may have left it on
    yield pipe
    pipe.text()
    common.State.open_answer = None


def test_a_json_list_cut_by_an_interrupt_ends_with_the_error_and_parses(
        capsys: pytest.CaptureFixture[str], piped: _Pipe) -> None:
    piped.install()
    items = JsonList()
    for i in range(3):
        items.add({"path": f"m{i}.blog", "ok": True})
    exit_ = fail("interrupted", 130)  # as guarded says a Ctrl-C
    assert exit_.exit_code == 130
    doc = json.loads(piped.text())  # it was "[ {...}, {...}," and no more
    assert [d.get("path") for d in doc[:3]] == ["m0.blog", "m1.blog", "m2.blog"]
    assert doc[3] == {"error": {"code": "error", "exit_status": 130, "message": "interrupted"}}
    assert len(doc) == 4 and capsys.readouterr().err == "buraco-log: error: interrupted\n"


def test_a_json_list_closed_whole_takes_no_error_item(
        piped: _Pipe) -> None:
    piped.install()
    items = JsonList()
    items.add({"path": "m0.blog"})
    items.close()
    fail("a later failure", 1)  # after the answer: the line alone
    assert json.loads(piped.text()) == [{"path": "m0.blog"}]


def test_an_interrupt_while_stdout_is_full_sends_each_byte_once(
        monkeypatch: pytest.MonkeyPatch) -> None:
    r, w = os.pipe()
    out = open(w, "w", encoding="utf-8")  # noqa: SIM115 - closed below
    monkeypatch.setattr(sys, "stdout", NamedStdout(out))
    text = "".join(f'{{"row": {i}, "pad": "{"x" * 50}"}}\n' for i in range(20_000))

    def interrupt(_signum: int, _frame: Any) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGALRM, interrupt)
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.05)  # nobody reads: the pipe fills, then this
        with pytest.raises(KeyboardInterrupt):
            streamout.write_whole(text)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.extend(iter(lambda: os.read(r, 1 << 16), b"")))
    reader.start()
    streamout.write_whole('{"error": {}}\n')  # the rest first, then the end
    out.close()
    reader.join(5)
    os.close(r)
    # Python's own write lost what the interrupted write held: half a row, then the end
    assert b"".join(got).decode() == text + '{"error": {}}\n'


class _Batches:
    """A query's stream whose second batch fails, as DuckDB's does part-way."""

    def __init__(self, fail_at: int) -> None:
        import pyarrow as pa

        self.schema = pa.schema([("i", pa.int64())])
        self._batches = [pa.record_batch([pa.array(range(k * 3, k * 3 + 3))], schema=self.schema)
                         for k in range(3)]
        self._fail_at = fail_at

    def __iter__(self) -> Iterator[Any]:
        for k, batch in enumerate(self._batches):
            if k == self._fail_at:
                raise RuntimeError("boom")
            yield batch


@pytest.mark.slow  # pyarrow's import: a second
@pytest.mark.parametrize("fail_at", [0, 2])
def test_query_jsonl_ends_with_an_error_line_a_row_is_never(
        piped: _Pipe, fail_at: int) -> None:
    piped.install()
    from cli import archive_cmd

    common.answer_open(archive_cmd._jsonl_error)  # as `query -f jsonl` does on stdout
    with pytest.raises(RuntimeError):
        archive_cmd._write_rows(sys.stdout, _Batches(fail_at), archive_cmd.QueryFormat.jsonl,
                                None)  # type: ignore[arg-type]
    fail("query: boom")
    lines = [json.loads(line) for line in piped.text().splitlines()]
    # an empty answer, or the first rows alone, were all a reader got: a whole answer's
    assert lines == [{"i": i} for i in range(fail_at * 3)] + [
        {"error": {"code": "error", "exit_status": 1, "message": "query: boom"}}]


@pytest.mark.slow
def test_query_json_cut_after_its_first_rows_ends_with_the_error(
        piped: _Pipe) -> None:
    piped.install()
    from cli import archive_cmd

    with pytest.raises(RuntimeError):
        archive_cmd._write_rows(sys.stdout, _Batches(2), archive_cmd.QueryFormat.json,
                                None)  # type: ignore[arg-type]
    fail("query: boom", as_json=True)
    doc = json.loads(piped.text())  # it was the rows, cut: "[ {...}, {"
    assert doc == [{"i": i} for i in range(6)] + [
        {"error": {"code": "error", "exit_status": 1, "message": "query: boom"}}]


@pytest.mark.slow
def test_query_csv_that_fails_before_its_first_row_writes_nothing(
        piped: _Pipe) -> None:
    piped.install()
    from cli import archive_cmd

    with pytest.raises(RuntimeError):
        archive_cmd._write_rows(sys.stdout, _Batches(0), archive_cmd.QueryFormat.csv,
                                None)  # type: ignore[arg-type]
    fail("query: boom")
    assert piped.text() == ""  # not a header alone: an empty result's answer


# -- the commands themselves, in a real subprocess each ------------------------------------

def _season(d: Path, n: int) -> Path:
    d.mkdir()
    for i in range(n):
        shutil.copyfile(GOLDEN / "fair-thirteen.log", d / f"m{i:04d}.blog")
    return d


def _stopped_while_stdout_is_full(args: list[object], signum: int) -> tuple[int, str, str]:
    """``buraco-log ARGS`` whose stdout nobody reads for a while (the pipe fills, the command
    waits on it), then ``signum``; what it wrote, read whole."""
    p = subprocess.Popen([sys.executable, "-m", "cli", *map(str, args)], cwd=REPO,
                         env={**os.environ, "PYTHONPATH": str(REPO)},
                         stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, preexec_fn=sigint_default)
    assert p.stdout is not None
    select.select([p.stdout], [], [], 60)  # it has begun its answer
    time.sleep(0.5)  # and filled the pipe
    p.send_signal(signum)
    out, err = p.communicate(timeout=60)
    return p.returncode, out.decode(), err.decode()


@pytest.mark.slow
@pytest.mark.parametrize(("signum", "status", "said"), [
    (signal.SIGINT, 130, "interrupted"), (signal.SIGTERM, 143, "terminated (SIGTERM)")])
def test_audit_json_of_a_batch_stopped_part_way_parses(tmp_path: Path, signum: int,
                                                       status: int, said: str) -> None:
    season = _season(tmp_path / "season", 400)
    code, out, err = _stopped_while_stdout_is_full(["audit", "-f", "json", "-j", "1", season],
                                                   signum)
    assert code == status and "Traceback" not in err, err
    doc = json.loads(out)  # it was cut after a whole item, or in the middle of one
    assert doc[-1] == {"error": {"code": "error", "exit_status": status, "message": said}}
    verdicts = doc[:-1]
    assert 0 < len(verdicts) < 400 and all(v["ok"] and "path" in v for v in verdicts)
    assert [v["path"] for v in verdicts] == [str(season / f"m{i:04d}.blog")
                                             for i in range(len(verdicts))]


@pytest.mark.slow
def test_verify_json_of_several_logs_stopped_part_way_parses(tmp_path: Path) -> None:
    season = _season(tmp_path / "season", 3000)
    logs = sorted(season.iterdir())
    p = subprocess.Popen([sys.executable, "-m", "cli", "verify", "-f", "json", *logs],
                         cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)},
                         stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, preexec_fn=sigint_default)
    time.sleep(1.5)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=60)
    assert p.returncode == 130, err
    doc = json.loads(out)  # it was nothing at all
    assert isinstance(doc, list) and doc[-1]["error"]["exit_status"] == 130
    assert all(d["path"] == str(log) and d["events"] > 0 for d, log in zip(doc[:-1], logs,
                                                                          strict=False))


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from buraco_log.archive.ingest import ingest

    root = tmp_path_factory.mktemp("arch") / "arch"
    ingest([str(GOLDEN / "fair-thirteen.log")], str(root))
    return root


_PART_WAY = ("SELECT i FROM range(400000) t(i) "
             "WHERE CASE WHEN i > 300000 THEN error('boom') ELSE true END")


@pytest.mark.slow
def test_query_cut_short_says_so_inside_its_answer(archive: Path) -> None:
    runs = run_all(*[["query", archive, sql, "-f", f, "--timeout", "0", "--threads", "1"]
                     for sql, f in [(_PART_WAY, "jsonl"), (_PART_WAY, "json"),
                                    ("SELECT * FROM nowhere", "jsonl"),
                                    ("SELECT error('boom') AS v", "csv"),
                                    ("SELECT 1 AS v", "jsonl")]])
    jsonl, listed, unknown, csv_, whole = runs
    assert [r.code for r in runs] == [1, 1, 1, 1, 0], [r.err for r in runs]
    lines = [json.loads(line) for line in jsonl.out.splitlines()]
    assert lines[0] == {"i": 0} and "error" in lines[-1] and len(lines[-1]) == 1
    assert lines[-1]["error"]["message"].endswith("boom") and len(lines) < 300_002
    doc = json.loads(listed.out)  # it was the rows, cut, which no parser took
    assert doc[0] == {"i": 0} and doc[-1]["error"]["exit_status"] == 1
    # a query that fails before its first row: a line, not the empty answer of no rows
    assert [json.loads(line)["error"]["exit_status"] for line in unknown.out.splitlines()] == [1]
    assert csv_.out == "" and csv_.lines[-1].startswith("buraco-log: error: query:")
    assert whole.out == '{"v": 1}\n'  # a whole answer takes no such line


@pytest.mark.slow
@pytest.mark.parametrize(("fmt", "signum", "status"), [("jsonl", signal.SIGINT, 130),
                                                      ("json", signal.SIGTERM, 143)])
def test_query_stopped_while_its_reader_is_behind_ends_with_the_error(
        archive: Path, fmt: str, signum: int, status: int) -> None:
    code, out, err = _stopped_while_stdout_is_full(
        ["query", archive, "SELECT i FROM range(50000000) t(i)", "-f", fmt, "--timeout", "0"],
        signum)
    assert code == status and "Traceback" not in err, err
    # json: it was the rows, cut; jsonl: a row cut in half, then nothing
    rows = (json.loads(out) if fmt == "json" else
            [json.loads(line) for line in out.splitlines()])  # every line whole
    assert rows[-1]["error"]["exit_status"] == status
    assert rows[:-1] == [{"i": i} for i in range(len(rows) - 1)] and len(rows) > 1
