"""Fault probes, archive: many processes on one archive at once, as a site's cron jobs overlap
(real subprocesses on one real archive): two ingests of overlapping logs, an ingest while a
compact runs, a report while a compact or a drop runs, a verify while an ingest commits, a
day dropped while it is ingested again, one of them SIGKILLed while another runs. Afterwards
every table holds the rows of a one-shot ingest of the same logs (sorted row hashes), verify
is clean, no temporary is left and no match is stored twice; a writer that refuses says so
in one line naming the lock and the process that holds it.

Found: `verify` while an ingest committed called that run's files "leftover files of an
interrupted ingest or compact", and a writer refused by a lock whose file named nothing (a
`compact --dry-run`, ingests creating the archive, a lock taken an instant before) named no
process. And a Ctrl-C (or SIGTERM) that came as any command exited, its work done, was a
KeyboardInterrupt inside the interpreter's own exit: "Exception ignored in: <module
'threading'>", a traceback, and exit 0."""

from __future__ import annotations

import fcntl
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from buraco_log.archive import connect, ingest, store
from buraco_log.archive.compact import compact
from buraco_log.archive.fixity import verify_archive
from buraco_log.errors import ArchiveError
from tests.archive.corpus import make_corpus
from tests.archive.tablehashes import TABLES, rows
from tests.command_line import sigint_default

ROOT = Path(__file__).resolve().parents[2]

# -- a signal as the command exits ---------------------------------------------------------------

# The command line, sent SIGNAL by itself once the command has ended and the interpreter exits:
# from the threading module's exit hooks (where a process pool's threads are joined), or from
# an exit hook run before the command line's own last one.
AT_EXIT = """
import atexit, os, signal, sys, threading
where, sig = sys.argv[1], int(sys.argv[2])
sys.argv = ["buraco-log", *sys.argv[3:]]
from cli.entry import run
if where == "threading":
    threading._register_atexit(lambda: os.kill(os.getpid(), sig))
else:
    atexit.register(lambda: os.kill(os.getpid(), sig))
run()
"""

SAID = {signal.SIGINT: ("interrupted", 130), signal.SIGTERM: ("terminated (SIGTERM)", 143)}


def _signalled_at_exit(where: str, signum: int, *args: str | Path
                       ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", AT_EXIT, where, str(int(signum)),
                           *map(str, args)], cwd=ROOT, capture_output=True, text=True,
                          timeout=120, preexec_fn=sigint_default)


def _said_at_exit(run: subprocess.CompletedProcess[str], signum: int) -> None:
    how, status = SAID[signal.Signals(signum)]
    assert "Traceback" not in run.stderr and "Exception ignored" not in run.stderr, run.stderr
    assert run.returncode == status, (run.returncode, run.stderr)
    assert run.stderr == (f"buraco-log: error: {how} as it exited, after the command had "
                          "ended (exit status 0): its work is done and its output whole\n")


def test_a_ctrl_c_as_a_command_exits_is_one_line_and_130() -> None:
    """Before: "Exception ignored in: <module 'threading'>", its traceback, and exit 0."""
    run = _signalled_at_exit("threading", signal.SIGINT, "rules", "list")
    assert "classic" in run.stdout  # the command's output, whole
    _said_at_exit(run, signal.SIGINT)


@pytest.mark.slow  # an ingest a run: about 2 s each on the shared machine
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
@pytest.mark.parametrize("where", ["threading", "atexit"])
def test_a_signal_as_an_ingest_with_two_workers_exits_is_said(three: Path, tmp_path: Path,
                                                              where: str, signum: int) -> None:
    """The moment archive50's sweep once met (exit 0, nothing said): the ingest's work done
    and its summary written, the interpreter exiting. Before: exit 0 and a traceback for
    SIGINT, death without a word (-15) for SIGTERM at the threading hooks."""
    logs = sorted((three.parent / "logs").iterdir())
    target = tmp_path / "a"
    run = _signalled_at_exit(where, signum, "ingest", *logs, "--archive", target, "-j", "2")
    assert run.stdout.startswith("3 logs: 3 matches added"), run.stdout
    _said_at_exit(run, signum)
    fix = verify_archive(str(target))
    assert fix.ok and not fix.leftovers and len(store.manifests(str(target))) == 1


# -- a writer refused names the lock and its holder ----------------------------------------------

def test_a_writer_refused_by_one_whose_lock_names_nothing_names_its_process(arch: Path) -> None:
    """A dry run holds the lock without writing its name in it. Before: "another ingest or
    compact is running on this archive", no process, nothing to look for."""
    before = sorted(p.name for p in (arch / store.BATCHES).iterdir())
    with store.locked(str(arch), None), pytest.raises(ArchiveError) as caught:
        compact(str(arch))
    assert str(caught.value) == (
        f"{arch}: another ingest or compact is running on this archive (process "
        f"{os.getpid()}), holding its lock file .lock: one writer at a time, run it again "
        "once that one ends [archive.locked]")
    assert sorted(p.name for p in (arch / store.BATCHES).iterdir()) == before


# -- verify while a writer is at work ------------------------------------------------------------

def _mid_commit(arch: Path) -> list[str]:
    """What an ingest has on disk at its commit point (staged, its intent written), as
    relative paths."""
    batch = store.new_batch_id()
    stage = Path(store.mark_stage(str(arch), batch, "ingest"))
    rel = f"matches/preset=classic/month=2026-12/part-{batch}.parquet"
    (stage / rel).parent.mkdir(parents=True)
    (stage / rel).write_bytes(b"PAR1 staged PAR1")
    store.note_intent(str(arch), batch, "ingest", [batch], [rel])
    return sorted([f"{store.STAGING}/{batch}/{rel}", f"{store.STAGING}/{batch}/{store.RUN_KIND}",
                   f"{store.BATCHES}/{batch}.intent"])


def test_verify_names_the_writer_at_work_rather_than_an_interrupted_run(arch: Path) -> None:
    """Before: the files of the ingest at work were "leftover files of an interrupted ingest
    or compact, which ... the next ingest or compact removes" (a site's check of verify's
    leftovers alarmed at every nightly ingest it overlapped). Once that run is gone (killed),
    the same files are an interrupted run's, as before."""
    with store.locked(str(arch), "ingest"):
        made = _mid_commit(arch)
        fix = verify_archive(str(arch))
        assert fix.ok and sorted(fix.leftovers) == made
        assert fix.writer == f"ingest (process {os.getpid()})"
    fix = verify_archive(str(arch))
    assert sorted(fix.leftovers) == made and fix.writer is None


# An ingest held at its commit point (its parts in place, its record not yet written) until a
# line comes on its standard input; it says "placed" there.
PAUSED = """
import os, sys
from buraco_log.archive import store
real = store._atomic_json
def paused(path, data):
    if os.path.dirname(path).endswith(store.BATCHES) and "fingerprints" in data:
        print("placed", flush=True)
        sys.stdin.readline()
    real(path, data)
store._atomic_json = paused
sys.argv = ["buraco-log", *sys.argv[1:]]
from cli.entry import run
run()
"""


def cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cli", *map(str, args)], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)


@pytest.mark.slow  # three commands in processes of their own
def test_verify_of_an_archive_an_ingest_is_committing_to_says_it_is_at_work(
        arch: Path, three: Path) -> None:
    logs = sorted((three.parent / "logs").iterdir())
    extra = arch.parent / "extra.blog"
    make_corpus(str(arch.parent / "more"), 4, seed="archive56-paused", jobs=1)
    shutil.copy(sorted((arch.parent / "more").iterdir())[-1], extra)
    p = subprocess.Popen([sys.executable, "-c", PAUSED, "ingest", str(extra), *map(str, logs),
                          "--archive", str(arch)], cwd=ROOT, text=True, stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert p.stdout is not None and p.stdout.readline() == "placed\n"
        text, as_json = cli("verify", arch), cli("verify", arch, "-f", "json")
        refused = cli("compact", arch, "--dry-run")
    finally:
        out, err = p.communicate("\n", timeout=300)
    assert p.returncode == 0 and "1 match added" in out, (out, err)
    assert text.returncode == 0 and text.stderr == "", text.stderr
    assert f"of the ingest (process {p.pid}) at work on the archive now, not committed yet" \
        in text.stdout and "interrupted" not in text.stdout, text.stdout
    doc = json.loads(as_json.stdout)
    assert doc["ok"] and doc["leftovers"] and doc["writer"] == f"ingest (process {p.pid})"
    assert refused.returncode == 1 and refused.stderr == (
        f"buraco-log: error: {arch}: another ingest is running on this archive (process "
        f"{p.pid}), holding its lock file .lock: one writer at a time, run it again once that "
        "one ends [archive.locked]\n")
    done = cli("verify", arch)
    assert done.returncode == 0 and "leftover" not in done.stdout and "at work" not in \
        done.stdout, done.stdout


# -- processes at once on one archive ------------------------------------------------------------



def start(*args: str | Path) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "cli", *map(str, args)], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            stdin=subprocess.DEVNULL)


# A batch drop (a library call: there is no command for it) in a process of its own, its
# refusal one line as a command's.
DROP = """
import sys
from buraco_log.archive import store
from buraco_log.errors import ArchiveError
try:
    print(len(store.drop_batches(sys.argv[1], sys.argv[2:])))
except ArchiveError as exc:
    sys.exit(f"buraco-log: error: {exc}")
"""


def start_drop(a: Path, *batches: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-c", DROP, str(a), *batches], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def ended(p: subprocess.Popen[str], others: list[subprocess.Popen[str]]) -> tuple[bool, str]:
    """Whether ``p`` ran (exit 0), or refused in one line naming the lock and one of
    ``others`` by its process id (exit 1); and its standard output."""
    out, err = p.communicate(timeout=300)
    assert "Traceback" not in err, err
    if p.returncode == 0:
        return True, out
    lines = err.splitlines()
    assert p.returncode == 1 and len(lines) == 1, (p.args, p.returncode, err)
    assert lines[0].endswith("holding its lock file .lock: one writer at a time, run it again "
                             "once that one ends [archive.locked]"), lines
    assert any(f"(process {o.pid})" in lines[0] for o in others), (lines, [o.pid for o in others])
    return False, out


def waits_only(err: str) -> bool:
    """Whether a reader's standard error says nothing but a long wait for a writer (on a
    loaded machine, a wait at the readers' gate can pass the 2 s after which it is said)."""
    return all(line.startswith("buraco-log: note: ") and ": waiting for the " in line
               for line in err.splitlines())


def settled(arch: Path, want: dict[str, list[int]]) -> None:
    """The archive as a one-shot ingest leaves it: its rows, a clean verify with nothing
    left over, no temporary, no match twice."""
    got = rows(arch)
    for t in TABLES:
        assert got[t] == want[t], (t, len(got[t]), len(want[t]))
    fix = verify_archive(str(arch))
    assert fix.ok and not fix.leftovers and fix.writer is None, (fix.problems, fix.leftovers)
    left = [p for p in arch.rglob("*") if ".tmp-" in p.name or p.name.endswith(".intent")
            or (store.STAGING in p.parts and p.is_file())]
    assert not left, left
    con = connect(arch)
    try:
        assert con.execute("SELECT count(*) = count(DISTINCT game_id) FROM matches").fetchone() \
            == (True,)
    finally:
        con.close()


class Site:
    """Logs of four days (two matches a day), archives made once: ``fed`` (one batch a
    day, as a nightly job leaves it), and the one-shot ingests to compare with."""

    def __init__(self, base: Path) -> None:
        logs = make_corpus(str(base / "logs"), 8, seed="archive56", jobs=1)
        self.days = []
        for d in range(4):
            day = base / f"day-{d + 1}"
            day.mkdir()
            for log in logs[2 * d:2 * d + 2]:
                os.link(log, day / os.path.basename(log))
            self.days.append(day)
        self.fed = base / "fed"
        batches = [ingest([str(day)], self.fed).batches for day in self.days]
        self.last = batches[-1][0]  # ids of one second sort by their random part, not by time
        self.all = self._one(base / "one", self.days)
        self.but_last = self._one(base / "but-last", self.days[:-1])

    @staticmethod
    def _one(arch: Path, days: list[Path]) -> dict[str, list[int]]:
        ingest([str(d) for d in days], arch)
        return rows(arch)

    def copy(self, tmp: Path) -> Path:
        arch = tmp / "arch"
        shutil.copytree(self.fed, arch)
        return arch


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Site:
    return Site(tmp_path_factory.mktemp("site56"))


def _cleaned_up(arch: Path) -> None:
    """What a compact or drop left for readers still reading (after its 5 s wait, on a
    loaded machine): the next clean-up removes it."""
    if store.postponed_parts(str(arch)):
        compact(str(arch))


def two_ingests_of_overlapping_logs(site: Site, tmp: Path, delay: float,
                                    _rng: random.Random) -> None:
    """Into a new archive: days 1-3 and days 2-4 at once."""
    arch = tmp / "new"
    first = start("ingest", *site.days[:3], "--archive", arch)
    time.sleep(delay)
    second = start("ingest", *site.days[1:], "--archive", arch)
    ran = [ended(first, [second])[0], ended(second, [first])[0]]
    for done, days in zip(ran, (site.days[:3], site.days[1:]), strict=True):
        if not done:  # run again, as its line says, once both have ended
            ingest([str(d) for d in days], arch)
    settled(arch, site.all)


def an_ingest_while_compact_runs(site: Site, tmp: Path, delay: float,
                                 _rng: random.Random) -> None:
    arch = tmp / "arch"
    for day in site.days[:3]:
        ingest([str(day)], arch)
    writer = start("compact", arch)
    time.sleep(delay)
    second = start("ingest", site.days[3], "--archive", arch)
    compacted, ingested = ended(writer, [second])[0], ended(second, [writer])[0]
    if not compacted:  # each refused one run again, once both have ended
        compact(str(arch))
    if not ingested:
        ingest([str(site.days[3])], arch)
    _cleaned_up(arch)
    settled(arch, site.all)


def _report(arch: Path) -> dict[str, Any]:
    got: dict[str, Any] = json.loads(subprocess.run(
        [sys.executable, "-m", "cli", "report", str(arch), "-f", "json"], cwd=ROOT,
        capture_output=True, text=True, timeout=300, check=True).stdout)
    got.pop("archive")
    return got


def a_report_while_compact_or_drop_runs(site: Site, tmp: Path, delay: float,
                                        rng: random.Random) -> None:
    """The report is the old archive's or the new one's, whole; never an error."""
    arch = site.copy(tmp)
    last = site.last
    before = _report(arch)
    dropping = rng.random() < 0.5
    writer = start_drop(arch, last) if dropping else start("compact", arch)
    time.sleep(delay)
    reader = start("report", arch, "-f", "json")
    out, err = reader.communicate(timeout=300)
    assert reader.returncode == 0 and waits_only(err), err
    assert ended(writer, [])[0]
    _cleaned_up(arch)
    settled(arch, site.but_last if dropping else site.all)
    after = _report(arch)
    got = json.loads(out)
    got.pop("archive")
    assert got in (before, after), "a report of neither the old archive nor the new"


def a_verify_while_an_ingest_runs(site: Site, tmp: Path, delay: float,
                                  _rng: random.Random) -> None:
    arch = tmp / "arch"
    ingest([str(d) for d in site.days[:2]], arch)
    writer = start("ingest", *site.days[2:], "--archive", arch)
    time.sleep(delay)
    while True:
        check = start("verify", arch, "-f", "json")
        out, err = check.communicate(timeout=300)
        assert check.returncode == 0 and waits_only(err), err
        doc = json.loads(out)
        assert doc["ok"], doc["problems"]
        # files of no commit are said only as the writer's at work
        assert not doc["leftovers"] or doc["writer"] == f"ingest (process {writer.pid})", doc
        if writer.poll() is not None:
            break
    assert ended(writer, [])[0]
    settled(arch, site.all)


def a_day_dropped_while_it_is_ingested_again(site: Site, tmp: Path, delay: float,
                                             rng: random.Random) -> None:
    """The last day's batch dropped, and its logs ingested, at once: the archive ends as the
    two run one after the other, in the order they held the lock."""
    arch = site.copy(tmp)
    day = site.last
    dropper_first = rng.random() < 0.5
    first = start_drop(arch, day) if dropper_first else start("ingest", site.days[3],
                                                              "--archive", arch)
    time.sleep(delay)
    second = start("ingest", site.days[3], "--archive", arch) if dropper_first else \
        start_drop(arch, day)
    dropper, ingester = (first, second) if dropper_first else (second, first)
    ingested, said = ended(ingester, [dropper])
    dropped = ended(dropper, [ingester])[0]
    if not dropped:  # the ingest held the lock first: the day was stored already
        assert "2 already stored" in said, said
        store.drop_batches(str(arch), [day])  # run again, as its line says
        settled(arch, site.but_last)
    elif not ingested:  # the drop held it first: the ingest, run again, stores the day
        assert ingest([str(site.days[3])], arch).added == 2
        settled(arch, site.all)
    else:  # one after the other, without meeting
        settled(arch, site.all if "2 matches added" in said else site.but_last)


def _total(arch: Path) -> Any:
    return json.loads(subprocess.run(
        [sys.executable, "-m", "cli", "query", str(arch), TOTAL, "-f", "json"], cwd=ROOT,
        capture_output=True, text=True, timeout=300, check=True).stdout)


TOTAL = "SELECT count(*) AS n, sum(events) AS e FROM matches"


def one_killed_while_another_runs(site: Site, tmp: Path, delay: float,
                                  rng: random.Random) -> None:
    """A compact, an ingest or a drop SIGKILLed at a random moment while a query reads:
    the query's rows are the old archive's or the new one's; the killed command, run again,
    ends as a run never cut."""
    arch = site.copy(tmp)
    kind = rng.choice(["compact", "ingest", "drop"])
    last = site.last
    if kind == "ingest":  # the last day dropped first: the ingest stores it again
        store.drop_batches(str(arch), [last])
    before = _total(arch)
    writer = (start("compact", arch) if kind == "compact" else
              start("ingest", site.days[3], "--archive", arch) if kind == "ingest" else
              start_drop(arch, last))
    reader = start("query", arch, TOTAL, "-f", "json")
    time.sleep(delay)
    writer.kill()
    writer.communicate(timeout=300)
    out, err = reader.communicate(timeout=300)
    assert reader.returncode == 0 and waits_only(err), err
    if kind == "compact":
        compact(str(arch))  # run again: it finishes what the killed one began
    elif kind == "ingest":
        ingest([str(site.days[3])], arch)
    elif last in {m["batch"] for m in store.manifests(str(arch))}:
        store.drop_batches(str(arch), [last])
    else:
        compact(str(arch))  # a clean-up: what the killed drop left behind
    _cleaned_up(arch)
    settled(arch, site.but_last if kind == "drop" else site.all)
    assert json.loads(out) in (before, _total(arch)), (out, before)


CASES: dict[str, Callable[[Site, Path, float, random.Random], None]] = {
    "two-ingests": two_ingests_of_overlapping_logs,
    "ingest-during-compact": an_ingest_while_compact_runs,
    "report-during-compact-or-drop": a_report_while_compact_or_drop_runs,
    "verify-during-ingest": a_verify_while_an_ingest_runs,
    "drop-during-ingest": a_day_dropped_while_it_is_ingested_again,
    "killed-during-query": one_killed_while_another_runs,
}


@pytest.mark.slow  # six kinds, six moments each: about 150 processes
@pytest.mark.parametrize("kind", sorted(CASES))
def test_processes_at_once_on_one_archive_end_as_a_one_shot_ingest(
        site: Site, tmp_path: Path, kind: str) -> None:
    rng = random.Random(f"archive56-{kind}")
    for i, delay in enumerate((0.0, 0.15, 0.4, 0.8, 1.3, rng.uniform(0, 2.5))):
        work = tmp_path / f"{i}"
        work.mkdir()
        try:
            CASES[kind](site, work, delay, rng)
        except AssertionError as exc:
            raise AssertionError(f"{kind} at {delay:.2f} s: {exc}") from None
        shutil.rmtree(work)


# -- a wait for another process is said ---------------------------------------------------------

def test_a_long_wait_at_the_gate_or_for_the_readers_names_the_lock_and_its_holder(
        arch: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Before: a query held at the readers' gate up to 8 s, and a compact waiting up to 5 s
    for the queries still reading, said nothing of what they waited for."""
    said: list[str] = []
    monkeypatch.setattr(store, "on_wait", said.append)
    monkeypatch.setattr(store, "WAIT_SAID", 0.05)
    with store.locked(str(arch), "compact"):
        gate = os.open(arch / store.BATCHES, os.O_RDONLY | os.O_DIRECTORY)
        try:
            fcntl.flock(gate, fcntl.LOCK_EX)  # the writer waiting for readers holds the gate
            with pytest.raises(store.GateTimeout), store.reading(str(arch), within=0.12):
                pass
        finally:
            os.close(gate)
    assert said == [f"{arch}: waiting for the compact (process {os.getpid()}) to remove the "
                    "files it replaced: it holds the readers' gate (_batches/); a reader waits "
                    "at most 8 s"]
    said.clear()
    reader = _reading(arch)
    try:
        with store.locked(str(arch), "compact"), store._readers_gone(str(arch), 0.12) as alone:
            assert not alone
    finally:
        _done(reader)
    assert said == [f"{arch}: waiting for the readers still reading files this run would "
                    f"remove (query, report or verify: process {reader.pid}, holding the "
                    "readers' lock .readers): at most 0.12 s, then the files are left for the "
                    "next clean-up"]


def _reading(arch: Path) -> subprocess.Popen[bytes]:
    """A reader of ``arch`` in a process of its own (``flock`` holding the readers' lock
    shared while ``cat`` waits for its input to end: the lock is the flock process's alone)."""
    reader = subprocess.Popen(["flock", "-s", "-o", str(arch / store.READERS), "cat"],
                              stdin=subprocess.PIPE, stdout=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while not _held(arch / store.READERS):
        assert time.monotonic() < deadline and reader.poll() is None
        time.sleep(0.01)
    return reader


def _done(reader: subprocess.Popen[bytes]) -> None:
    assert reader.stdin is not None
    reader.stdin.close()
    reader.wait(timeout=30)


def _held(path: Path) -> bool:
    fd = os.open(path, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return False
    except BlockingIOError:
        return True
    finally:
        os.close(fd)


# A compact (as the lock file names it) holding the readers' gate for a few seconds, as one
# waiting for a long query holds it; it says "held" once it does.
GATE_HOLDER = """
import fcntl, os, sys, time
from buraco_log.archive import store
with store.locked(sys.argv[1], "compact"):
    gate = os.open(os.path.join(sys.argv[1], store.BATCHES), os.O_RDONLY | os.O_DIRECTORY)
    fcntl.flock(gate, fcntl.LOCK_EX)
    print("held", flush=True)
    time.sleep(float(sys.argv[2]))
"""


@pytest.mark.slow  # waits of several seconds, in processes of their own
def test_a_query_at_the_gate_and_a_compact_waiting_for_a_reader_say_whom_they_wait_for(
        site: Site, tmp_path: Path) -> None:
    arch = site.copy(tmp_path)
    reader = _reading(arch)
    try:
        done = cli("compact", arch)  # merges, then waits 5 s for the reader, in vain
    finally:
        _done(reader)
    assert done.returncode == 0 and "left in place for the queries still reading" in done.stdout
    assert done.stderr == (
        f"buraco-log: note: {arch}: waiting for the readers still reading files this run would "
        f"remove (query, report or verify: process {reader.pid}, holding the readers' lock "
        ".readers): at most 5 s, then the files are left for the next clean-up\n")
    writer = subprocess.Popen([sys.executable, "-c", GATE_HOLDER, str(arch), "6"], cwd=ROOT,
                              text=True, stdout=subprocess.PIPE)
    try:
        assert writer.stdout is not None and writer.stdout.readline() == "held\n"
        query = cli("query", arch, TOTAL, "-f", "json")
    finally:
        writer.communicate(timeout=60)
    assert query.returncode == 0 and json.loads(query.stdout)[0]["n"] == 8
    assert query.stderr == (
        f"buraco-log: note: {arch}: waiting for the compact (process {writer.pid}) to remove "
        "the files it replaced: it holds the readers' gate (_batches/); a reader waits at most "
        "8 s\n")
    compact(str(arch))  # the files left for the reader
    settled(arch, site.all)


# -- a Ctrl-C once the batches are committed -----------------------------------------------------

def test_a_ctrl_c_after_the_commit_says_what_is_committed(three: Path, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """A Ctrl-C while the ingest, its batch committed, looked for stronger copies of stored
    matches (a read of the committed files). Before: the KeyboardInterrupt left the library,
    and the command line said "interrupted: nothing was committed; run the same command
    again" of a committed batch."""
    ingest_module = sys.modules["buraco_log.archive.ingest"]
    real = ingest_module._stronger_copies

    def cut(*args: Any) -> Any:
        os.kill(os.getpid(), signal.SIGINT)  # Python's handler raises KeyboardInterrupt
        return real(*args)

    monkeypatch.setattr(ingest_module, "_stronger_copies", cut)
    log = sorted((three.parent / "logs").iterdir())[0]
    try:
        report = ingest([str(log)], tmp_path / "a")
    except KeyboardInterrupt:  # as before: the command line took it for nothing committed
        pytest.fail("the Ctrl-C after the commit left the library")
    assert report.interrupted and report.added == 1 and len(report.batches) == 1
    assert [m["batch"] for m in store.manifests(str(tmp_path / "a"))] == report.batches
