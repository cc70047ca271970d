"""Fault probes of the CLI (round 42).

The worker pools: a worker killed mid-run said only "while auditing 600 logs", and one killed
while it sent its results hung the run for ever (`ingest -j 2`: the pool's manager thread
waited for the rest of half a message, the other worker for the pipe's lock the dead one
held)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from buraco_log.audit.pool import died_line, working_on
from tests.cli.probes import one_error_line

ROOT = Path(__file__).resolve().parents[2]

_LINUX = pytest.mark.skipif(not Path("/proc/self/task").is_dir(),
                            reason="no /proc: the probes find the workers there")

# Two workers: one on b.blog until the other, on a.blog, is SIGKILLed; with ``half`` the dead
# one first leaves half a result in the result pipe, holding the pipe's lock, as a worker
# killed while it sends its result does.
_POOL_SCRIPT = r'''
import os, signal, struct, sys, time
from collections.abc import Iterator
from pathlib import Path
from buraco_log.audit.pool import WorkerDied, worker_pool, working_on

def slow(flag):
    with working_on("b.blog"):
        Path(flag).touch()
        time.sleep(60)

def killed(flag, half):
    while not os.path.exists(flag):
        time.sleep(0.01)
    with working_on("a.blog"):
        if half:
            frame = sys._getframe()
            while "result_queue" not in frame.f_locals:  # the worker loop's own queue
                frame = frame.f_back
            queue = frame.f_locals["result_queue"]
            queue._wlock.acquire()
            queue._writer._send(struct.pack("!i", 1 << 20) + b"\x80\x05 half")
        os.kill(os.getpid(), signal.SIGKILL)

for half in (False, True):
    flag = os.path.join(sys.argv[1], f"started-{half}")
    start = time.monotonic()
    try:
        with worker_pool(2, "testing", "the rest stays") as pool:
            futures = [pool.submit(slow, flag), pool.submit(killed, flag, half)]
            for f in futures:
                f.result()
        print("no error")
    except WorkerDied as exc:
        print(f"{time.monotonic() - start:.1f} {exc}")
'''


@_LINUX
def test_a_killed_worker_is_named_by_its_log_and_one_killed_mid_result_ends(
        tmp_path: Path) -> None:
    run = subprocess.run([sys.executable, "-c", _POOL_SCRIPT, str(tmp_path)], cwd=ROOT,
                         capture_output=True, text=True, timeout=60,
                         env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert run.returncode == 0 and "Traceback" not in run.stderr, run.stderr
    lines = run.stdout.splitlines()
    assert len(lines) == 2, lines
    for line in lines:
        seconds, message = line.split(" ", 1)
        assert float(seconds) < 10, line  # not the 60 s the other worker sleeps, nor for ever
        assert message == ("a worker process ended abruptly (killed, or out of memory) while "
                           "testing: it was on a.blog (b.blog was cut short with it); the rest "
                           "stays; -j 1 works in this process"), line


def test_the_line_names_the_dead_workers_log_and_counts_past_three() -> None:
    held = [(1, "a.blog"), (2, "b.blog"), (3, "c.blog"), (4, "d.blog"), (5, "e.blog")]
    codes = {1: -15, 2: -9, 3: -15, 4: -15, 5: None}  # None: still running after 5 s
    assert died_line("x", "", held, codes) == (
        "a worker process ended abruptly (killed, or out of memory) while x: it was on b.blog "
        "(a.blog, c.blog, d.blog and 1 more were cut short with it); -j 1 works in this "
        "process")
    assert died_line("x", "y", [(1, "a.blog")], {1: -15, 2: -9}) == (
        "a worker process ended abruptly (killed, or out of memory) while x: it was between "
        "logs (a.blog was cut short with it); y; -j 1 works in this process")
    assert died_line("x", "y", [], {2: -9}).endswith("while x; y; -j 1 works in this process")


def test_working_on_outside_a_pool_worker_does_nothing() -> None:
    with working_on("a.blog"):
        pass  # no board in this process: nothing written, nothing raised



@pytest.mark.slow
@_LINUX
@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="the work runs in one process")
def test_ingest_with_a_worker_killed_at_any_moment_ends_with_one_line(tmp_path: Path) -> None:
    """`ingest -j 2` with a worker SIGKILLed 0.3-0.9 s in hung about one run in three (the
    worker was sending its chunk's tables). Each run now ends: one line, exit 1."""
    import signal
    import time

    logs = tmp_path / "logs"
    logs.mkdir()
    for i in range(30):  # distinct bytes, so that every file is checked, not a copy
        for f in sorted((ROOT / "examples" / "sim").glob("*.blog")):
            (logs / f"{i:02d}-{f.name}").write_bytes(f.read_bytes() + b"\0" * i)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    for k in range(8):
        proc = subprocess.Popen([sys.executable, "-m", "cli", "ingest", str(logs), "-a",
                                 str(tmp_path / f"a{k}"), "-j", "2"], cwd=ROOT, env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        try:
            kids: list[str] = []
            while len(kids) < 2 and proc.poll() is None:
                time.sleep(0.02)
                kids = Path(f"/proc/{proc.pid}/task/{proc.pid}/children").read_text().split()
            time.sleep(0.3 + 0.1 * (k % 7))
            try:
                os.kill(int(kids[0]), signal.SIGKILL)
            except (ProcessLookupError, IndexError):
                continue  # the run was over
            _out, stderr = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
        if proc.returncode == 0:
            continue  # the worker had just finished its last chunk
        lines = stderr.splitlines()
        assert proc.returncode == 1 and len(lines) == 1, (k, stderr)
        assert "worker process ended abruptly" in lines[0] and "checking logs" in lines[0]


# -- files the commands write, read, and print to (round 42) -------------------------------------
# A matrix over every command that takes a log or writes a file found: demo's log in a
# read-only directory named its temporary folder (".d.blog.0ptuaxjx"), simulate's the
# temporary "LOG.tmp", and simulate's full disk no file at all; `review` to an ASCII stdout
# (LC_ALL=C PYTHONUTF8=0) was "internal error: UnicodeEncodeError" when a name is not ASCII;
# the summary table lost its columns with a wide name (CJK, emoji); a log named "-x.blog" was
# "No such option: -x", the file never named; a house-rules file, key or --continues log
# with a name too long for any file exited 1, as a full disk does, not 2.

NAMES = ("Zoë Ñandú", "王芳🃏")


def cli(*args: object, cwd: Path = ROOT, env: dict[str, str] | None = None, timeout: float = 120,
        **popen: object) -> subprocess.CompletedProcess[str]:
    done: subprocess.CompletedProcess[str] = subprocess.run(  # type: ignore[call-overload]
        [sys.executable, "-m", "cli", *map(str, args)], capture_output=True, text=True,
        cwd=cwd, timeout=timeout, stdin=subprocess.DEVNULL,
        env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}, **popen)
    return done


@pytest.fixture(scope="module")
def names_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A legal match whose players have an accented and a wide (CJK, emoji) name."""
    import msgspec

    from buraco_log import events as ev
    from buraco_log import log

    events = log.read_events(ROOT / "examples" / "sim" / "classic-2p-000000.blog")
    start = events[0]
    assert isinstance(start, ev.MatchStarted)
    events[0] = msgspec.structs.replace(start, players=tuple(ev.Player(name=n) for n in NAMES))
    path = tmp_path_factory.mktemp("names") / "names.blog"
    with log.Writer(path, validate=False, batched=True) as w:  # one fsync, not 539
        for e in events:
            w.append(e)
    return path


def test_demo_and_simulate_in_a_read_only_directory_name_the_log(read_only: Path) -> None:
    line = one_error_line(cli("demo", "-o", read_only / "d.blog"), 2)
    assert line == f"buraco-log: error: {read_only / 'd.blog'}: Read-only file system", line
    line = one_error_line(cli("simulate", "--matches", "1", "-o", read_only, "--no-progress"), 2)
    log_name = read_only / "classic-2p-000000.blog"
    assert line == f"buraco-log: error: {log_name}: Read-only file system", line


def test_simulate_that_cannot_write_a_log_names_it_and_leaves_nothing(tmp_path: Path) -> None:
    """Its files may not grow past 4 KiB (a log is about 9): the write fails as on a full
    disk (EFBIG), and said so naming no file."""
    import resource
    import signal

    def cap() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))

    out = tmp_path / "sim"
    done = cli("simulate", "--matches", "1", "-o", out, "--no-progress", preexec_fn=cap)
    line = one_error_line(done, 1)
    assert line == f"buraco-log: error: {out / 'classic-2p-000000.blog'}: File too large", line
    assert not out.exists()  # no LOG.tmp left, nor the directory the run made


def test_review_to_an_ascii_stdout_writes_the_names_as_the_other_commands_do(
        names_log: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "cli", "review", str(names_log), "--seat", "1",
                           "--budget", "1x1", "--no-progress"], capture_output=True, cwd=ROOT,
                          timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT),
                                            "PYTHONIOENCODING": "ascii"})
    assert done.returncode == 0, done.stderr
    assert f"review of seat 1 ({NAMES[1]}, side 1)".encode() in done.stdout


def test_the_summary_table_keeps_its_columns_with_wide_names(names_log: Path) -> None:
    from cli.safetext import columns

    done = cli("show", names_log)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    start = lines.index("hands")
    rows = lines[start + 2:start + 6]
    assert any(NAMES[1] in r for r in rows) and any(NAMES[0] in r for r in rows), rows
    # the 'ended' column starts at one terminal column in every row
    starts = {columns(r[:r.index("went out")]) for r in rows}
    header = lines[start + 1]
    assert starts == {columns(header[:header.index("ended")])}, rows
    players = [r for r in lines if r.startswith("  seat ")]
    assert len({columns(r[:r.index(" side ")]) for r in players}) == 1, players


def test_columns_counts_wide_and_combining_characters() -> None:
    from cli.safetext import columns, pad

    assert [columns(t) for t in ("abc", "Zoë", "王芳🃏", "e\u0301", "")] == [3, 3, 6, 1, 0]
    assert pad("王", 4) == "王  " and pad("toolong", 3) == "toolong"


def test_a_log_named_like_an_option_is_named_in_the_usage_error(tmp_path: Path) -> None:
    (tmp_path / "-x.blog").write_bytes((ROOT / "examples" / "sim" /
                                        "classic-2p-000000.blog").read_bytes())
    line = one_error_line(cli("show", "-x.blog", cwd=tmp_path), 2)
    assert line == ("buraco-log: usage: No such option: -x; -x.blog is a file: name it "
                    "./-x.blog, or put -- before it (see `buraco-log show --help`)"), line
    assert cli("show", "--", "-x.blog", cwd=tmp_path).returncode == 0


@pytest.mark.parametrize("args", [["rules", "show"], ["audit", ROOT / "examples" / "sim" /
                                                      "classic-2p-000000.blog", "--continues"]],
                         ids=["rules-file", "continues"])
def test_a_name_too_long_for_a_file_is_a_usage_error(tmp_path: Path, args: list[object]) -> None:
    name = tmp_path / ("n" * 300 + ".toml")
    line = one_error_line(cli(*args, name), 2)
    assert line.endswith(f"{name}: File name too long"), line


# -- the matrix: every command that reads a log, given what is no log, or printing nowhere -------

GOOD = ROOT / "examples" / "sim" / "classic-2p-000000.blog"
READERS: dict[str, list[str]] = {
    "show": ["show"], "replay": ["replay"], "explain": ["explain", "--at", "3"],
    "moves": ["moves"], "diff": ["diff", str(GOOD)], "view": ["view", "-o", "page.html"],
    "review": ["review", "--seat", "0", "--budget", "1x1"],
    "convert": ["convert", "-o", "out.jsonl"], "seal": ["seal"], "repair": ["repair"],
    "verify": ["verify"], "continues": ["audit", str(GOOD), "--continues"],
}
INPUTS = ("fifo", "/dev/zero", "a-directory", "dangling.blog", "n" * 300 + ".blog")
_KINDS = {"fifo": "a FIFO", "/dev/zero": "a character device", "a-directory": "a directory"}
PRINTERS: dict[str, list[str]] = {
    "show": ["show", str(GOOD)], "audit": ["audit", str(GOOD)], "rules": ["rules", "list"],
    "convert": ["convert", str(GOOD), "--to", "jsonl", "-o", "-"],
    "review": ["review", str(GOOD), "--seat", "0", "--budget", "1x1", "--no-progress"],
    "help": ["show", "--help"],
}


@pytest.fixture
def odd_files(tmp_path: Path) -> Path:
    os.mkfifo(tmp_path / "fifo")  # no writer ever opens it: reading it would wait for ever
    (tmp_path / "a-directory").mkdir()
    (tmp_path / "dangling.blog").symlink_to("nowhere.blog")
    return tmp_path


def _refuses_input(where: Path, command: str, name: str) -> None:
    args = READERS[command]
    argv = [*args[:1], name, *args[1:]] if command != "continues" else [*args, name]
    line = one_error_line(cli(*argv, cwd=where, timeout=30), 2)
    assert line.startswith("buraco-log: error: ") and name in line, line
    if command != "continues" and name in INPUTS[:3]:  # in the log reader's words, every one
        # (show said "skipped, never opened", view and review "is a directory, not a log")
        assert line.endswith(f"{name}: not a regular file ({_KINDS[name]}): not read as a log "
                             "[log.filetype]")
    assert sorted(p.name for p in where.iterdir()) == ["a-directory", "dangling.blog", "fifo"]


def _stdout_fails(command: str, how: str) -> None:
    if how == "closed":
        done = subprocess.run([sys.executable, "-m", "cli", *PRINTERS[command]], cwd=ROOT,
                              stderr=subprocess.PIPE, text=True, timeout=60,
                              env={**os.environ, "PYTHONPATH": str(ROOT)},
                              preexec_fn=lambda: os.close(1))
        said = "<stdout>: standard output is closed"
    else:
        with open("/dev/full", "w") as full:
            done = subprocess.run([sys.executable, "-m", "cli", *PRINTERS[command]], cwd=ROOT,
                                  stdout=full, stderr=subprocess.PIPE, text=True, timeout=60,
                                  env={**os.environ, "PYTHONPATH": str(ROOT)})
        said = "<stdout>: No space left on device"
    assert one_error_line(done, 1) == f"buraco-log: error: {said}"


@pytest.mark.parametrize(("command", "name"), [("show", "fifo"), ("view", "a-directory"),
                                               ("review", "/dev/zero"),
                                               ("diff", "n" * 300 + ".blog")],
                         ids=["show-fifo", "view-dir", "review-zero", "diff-long"])
def test_a_sample_of_inputs_that_are_no_log(odd_files: Path, command: str, name: str) -> None:
    _refuses_input(odd_files, command, name)


@pytest.mark.slow
@pytest.mark.parametrize("command", list(READERS))
def test_every_reader_refuses_every_input_that_is_no_log(odd_files: Path, command: str) -> None:
    for name in INPUTS:
        _refuses_input(odd_files, command, name)


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full")
def test_a_sample_of_standard_outputs_that_cannot_be_written() -> None:
    _stdout_fails("review", "full")


@pytest.mark.slow
@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full")
@pytest.mark.parametrize("command", list(PRINTERS))
def test_every_printer_on_a_closed_or_full_standard_output(command: str) -> None:
    for how in ("closed", "full"):
        _stdout_fails(command, how)
