"""The durability promises at the system-call level. A kill -9 cannot show a missing fsync (the
page cache survives a process kill), so each writing command and API runs under strace and the
order of its calls is checked (tests/log/syscalls.py): every byte written fsynced before the
acknowledgement or the exit, every temporary fsynced before its rename or link, and every
directory whose entries changed (a new log, a rename over one, a new folder) fsynced before the
answer. The checker itself is tested on written traces first, so that it can fail."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.log import syscalls as sc

REPO = Path(__file__).resolve().parents[2]
EX = REPO / "examples"
PY = sys.executable

needs_strace = pytest.mark.skipif(
    sc.STRACE is None and os.environ.get("CI") != "true",
    reason="strace is not installed (apt-get install strace): the system-call order is unchecked")


# The checker on written traces: each fault it must find, and the order it must accept.

_GOOD = """\
10 openat(AT_FDCWD</r>, "/r/.x.new", O_RDWR|O_CREAT|O_EXCL|O_CLOEXEC, 0666) = 3</r/.x.new>
10 pwrite64(3</r/.x.new>, "BURACOLG", 8, 0) = 8
10 fsync(3</r/.x.new>) = 0
10 rename("/r/.x.new", "/r/x") = 0
10 openat(AT_FDCWD</r>, "/r", O_RDONLY|O_CLOEXEC) = 4</r>
10 fsync(4</r>) = 0
10 write(1<pipe:[1]>, "done\\n", 5) = 5
10 +++ exited with 0 +++
"""


def _without(text: str, needle: str) -> str:
    return "".join(line for line in text.splitlines(True) if needle not in line)


def test_checker_accepts_write_fsync_rename_fsync_dir() -> None:
    v = sc.check(_GOOD, Path("/r"))
    assert v, v.faults
    assert (v.fsyncs, v.acks) == (2, 2)


@pytest.mark.parametrize(("drop", "fault"), [
    ("fsync(3", "rename .x.new -> x before fsync of .x.new"),
    ("fsync(4", "stdout: directory /r not fsynced after rename to x"),
])
def test_checker_finds_a_missing_fsync(drop: str, fault: str) -> None:
    v = sc.check(_without(_GOOD, drop), Path("/r"))
    assert fault in v.faults, v.faults


def test_checker_finds_a_new_folder_whose_parent_is_not_fsynced() -> None:
    text = ('10 mkdir("/r/a", 0777) = 0\n' + _GOOD.replace("/r/.x.new", "/r/a/.x.new")
            .replace('"/r/x"', '"/r/a/x"').replace("</r>", "</r/a>"))
    v = sc.check(text, Path("/r"))
    assert v.faults == ["stdout: directory /r not fsynced after mkdir a"], v.faults


def test_checker_finds_a_write_in_place_and_an_acknowledgement_before_fsync() -> None:
    text = """\
10 openat(AT_FDCWD</r>, "/r/x", O_WRONLY|O_CLOEXEC) = 3</r/x>
10 write(3</r/x>, "ab", 2) = 2
10 write(5</dev/null>, "ACK 1", 5) = 5
10 fsync(3</r/x>) = 0
10 +++ exited with 0 +++
"""
    v = sc.check(text, Path("/r"), existed={"/r/x"}, in_place=False)
    assert v.faults == ["/r/x written in place (write)", "ACK 1: /r/x not fsynced after write"]


def test_checker_holds_a_removed_journal_to_the_writes_made_before_the_next_one() -> None:
    text = """\
10 write(3</r/m.blog>, "a", 1) = 1
10 openat(4</r>, ".recorder.journal-2", O_RDWR|O_CREAT|O_EXCL, 0644) = 5</r/.recorder.journal-2>
10 fsync(5</r/.recorder.journal-2>) = 0
10 fsync(4</r>) = 0
10 write(3</r/m.blog>, "b", 1) = 1
10 unlinkat(4</r>, ".recorder.journal-1", 0) = 0
"""
    journal = r"\.recorder\.journal-\d+$"
    v = sc.check(text, Path("/r"), ack_unlink=journal)
    assert v.faults == ["unlinkat .recorder.journal-1: /r/m.blog not fsynced after write"]
    synced = text.replace("10 openat(4", "10 fsync(3</r/m.blog>) = 0\n10 openat(4")
    assert sc.check(synced, Path("/r"), ack_unlink=journal)


def test_checker_joins_an_interrupted_call() -> None:
    text = ("11 fsync(3</r/.x.new> <unfinished ...>\n10 write(1<pipe:[1]>, \"a\", 1) = 1\n"
            "11 <... fsync resumed>) = 0\n")
    assert [(c.pid, c.name) for c in sc.calls(text)] == [(10, "write"), (11, "fsync")]


# Real runs under strace.

def _cli(*args: object) -> list[str]:
    return [PY, "-m", "cli.main", *map(str, args)]


def _copy(*pairs: tuple[Path, str]) -> Callable[[Path], None]:
    def prepare(d: Path) -> None:
        for src, name in pairs:
            d.joinpath(name).parent.mkdir(exist_ok=True)
            shutil.copy(src, d / name)
    return prepare


def _nothing(d: Path) -> None:
    pass


def _torn(d: Path) -> None:
    shutil.copy(EX / "format" / "v2-unsealed.blog", d / "t.blog")
    with open(d / "t.blog", "ab") as f:
        f.write(b"\x05\x00\x00")


def _linked_log(d: Path) -> None:
    """out/classic-2p-000000.blog a link to a log in another folder: replaced where it leads."""
    (d / "other").mkdir()
    (d / "out").mkdir()
    shutil.copy(_V2, d / "other" / "real.blog")
    (d / "out" / "classic-2p-000000.blog").symlink_to(d / "other" / "real.blog")


def _two_classic_batches(d: Path) -> None:
    subprocess.run(_cli("simulate", "--rules", "classic", "--matches", "2", "-o", d / "s",
                        "-j", "1"), cwd=REPO, capture_output=True, check=True)
    for f in sorted((d / "s").iterdir()):
        subprocess.run(_cli("ingest", f, "-a", d / "arch", "-j", "1"), cwd=REPO,
                       capture_output=True, check=True)


_WRITER = """
import os, sys
from buraco_log.log import Writer, read_events
null = os.open("/dev/null", os.O_WRONLY)
with Writer(sys.argv[2]) as w:
    for i, e in enumerate(read_events(sys.argv[1])[:int(sys.argv[3])]):
        w.append(e)
        os.write(null, b"ACK append %d" % i)
"""

_RECORDER = """
import os, sys
from buraco_log.log import read_events
from buraco_log.recorder import Recorder
null = os.open("/dev/null", os.O_WRONLY)
r = Recorder(sys.argv[2], sync=sys.argv[3])
for i, e in enumerate(read_events(sys.argv[1])[:4]):
    r.append("m1", e)
    os.write(null, b"ACK group commit %d" % i)
r.close()
"""

_DROP = """
import glob, os, sys
from buraco_log.archive import store
batch = sorted(os.path.basename(p)[:-5] for p in glob.glob(sys.argv[1] + "/_batches/*.json"))[0]
store.drop_batches(sys.argv[1], [batch])
"""

_V2 = EX / "format" / "v2.blog"
_CLASSIC = EX / "golden" / "classic.jsonl"
# Not data: a lock file's holder note, the saved ratings (report computes them when missing),
# the recorder's saved table list (a start without it reads the directory).
_NOT_DATA = r"/\.lock$|/\.readers$|/_ratings(/|$)|/\.\.?recorder\.(lock|state)"
# With sync="journal" the journal holds an acknowledged event: its log is written back later.
_JOURNALLED = _NOT_DATA + r"|\.blog$|\.blog\.\w+\.new$"

Case = tuple[Callable[[Path], None], Callable[[Path], list[str]], bool, str]
CASES: dict[str, Case] = {
    "Writer.append": (_copy((_V2, "src.blog")),
                      lambda d: [PY, "-c", _WRITER, str(d / "src.blog"), str(d / "new.blog"), "5"],
                      True, _NOT_DATA),
    "seal": (_copy((EX / "format" / "v2-unsealed.blog", "u.blog")),
             lambda d: _cli("seal", d / "u.blog"), False, _NOT_DATA),
    "repair": (_torn, lambda d: _cli("repair", d / "t.blog"), True, _NOT_DATA),
    "convert": (_copy((_CLASSIC, "c.jsonl")), lambda d: _cli("convert", d / "c.jsonl", "-o",
                                                           d / "c.blog"), False, _NOT_DATA),
    "convert --overwrite": (_copy((_CLASSIC, "c.jsonl"), (_V2, "c.blog")),
                            lambda d: _cli("convert", d / "c.jsonl", "-o", d / "c.blog",
                                           "--overwrite"), False, _NOT_DATA),
    "convert to jsonl": (_copy((_V2, "c.blog")), lambda d: _cli("convert", d / "c.blog", "-o",
                                                              d / "c.jsonl"), False, _NOT_DATA),
    "demo -o": (_nothing, lambda d: _cli("demo", "-o", d / "m.blog"), False, _NOT_DATA),
    "demo -o jsonl --overwrite": (_copy((_V2, "m.jsonl")),
                                  lambda d: _cli("demo", "-o", d / "m.jsonl", "--overwrite"),
                                  False, _NOT_DATA),
    "simulate -o": (_nothing, lambda d: _cli("simulate", "--matches", "2", "-o", d / "out",
                                             "-j", "2"), False, _NOT_DATA),
    "simulate -o --overwrite": (_copy((_V2, "out/classic-2p-000000.blog")),
        lambda d: _cli("simulate", "-o", d / "out", "-j", "1", "--overwrite"), False, _NOT_DATA),
    "simulate -o --overwrite through a link": (
        _linked_log, lambda d: _cli("simulate", "-o", d / "out", "-j", "1", "--overwrite"),
        False, _NOT_DATA),
    "keys new": (_nothing, lambda d: _cli("keys", "new", "site"), False, _NOT_DATA),
    "ingest": (_copy((_CLASSIC, "c.jsonl")),
               lambda d: _cli("ingest", d / "c.jsonl", "-a", d / "a" / "arch", "-j", "1"),
               False, _NOT_DATA),
    "compact": (_two_classic_batches, lambda d: _cli("compact", d / "arch"), False, _NOT_DATA),
    "drop": (_two_classic_batches, lambda d: [PY, "-c", _DROP, str(d / "arch")], False,
             _NOT_DATA),
    "view -o": (_copy((_V2, "m.blog")), lambda d: _cli("view", d / "m.blog", "-o", d / "m.html"),
                False, _NOT_DATA),
    "recorder fsync": (_copy((_V2, "src.blog")), lambda d: [PY, "-c", _RECORDER,
                                                          str(d / "src.blog"),
                                                          str(d / "logs" / "x"), "fsync"],
                       True, _NOT_DATA),
    "recorder syncfs": (_copy((_V2, "src.blog")), lambda d: [PY, "-c", _RECORDER,
                                                           str(d / "src.blog"),
                                                           str(d / "logs" / "x"), "syncfs"],
                        True, _NOT_DATA),
    "recorder journal": (_copy((_V2, "src.blog")), lambda d: [PY, "-c", _RECORDER,
                                                            str(d / "src.blog"),
                                                            str(d / "logs" / "x"), "journal"],
                         True, _JOURNALLED),
}


def traced(tmp_path: Path, name: str) -> sc.Verdict:
    prepare, argv, in_place, ignore = CASES[name]
    d = tmp_path / "w"
    d.mkdir()
    prepare(d)
    before = sc.snapshot(d)
    out = tmp_path / "trace"
    env = dict(os.environ, PYTHONPATH=str(REPO), COLUMNS="200")
    p = sc.trace(argv(d), out, cwd=d, env=env)
    assert p.returncode == 0, p.stderr[-800:]
    v = sc.check(out.read_text(errors="replace"), d, existed=before, in_place=in_place,
                 ignore=ignore)
    assert v.acks, "no acknowledgement seen: the trace was not read"
    assert v.fsyncs, "no fsync at all"
    return v


@needs_strace
def test_a_new_log_is_durable_before_each_append_returns(tmp_path: Path) -> None:
    """The default run's twin of the list below: a brand-new log's name, then each event."""
    v = traced(tmp_path, "Writer.append")
    assert v, v.faults
    assert v.fsyncs == 5 + 2  # one per append, the header's, the directory's after its link


@pytest.mark.slow
@needs_strace
@pytest.mark.parametrize("name", list(CASES))
def test_every_writing_command_syncs_before_it_answers(tmp_path: Path, name: str) -> None:
    v = traced(tmp_path, name)
    assert v, "\n".join(v.faults)


_JOURNAL_RUN = """
import os, sys, time
from buraco_log.log import read_events
from buraco_log.recorder import Recorder
events = read_events(sys.argv[1])[:int(sys.argv[4])]
r = Recorder(sys.argv[2], sync="journal", checkpoint_every=float(sys.argv[3]))
for e in events:
    r.append("m1", e)
    r.append("m2", e)
    time.sleep(float(sys.argv[5]))
if sys.argv[6] == "crash":
    os._exit(0)
r.close()
"""
_JOURNAL_OPEN = """
import sys
from buraco_log.recorder import Recorder
Recorder(sys.argv[1], sync="journal").close()
"""
_JOURNAL = r"\.recorder\.journal-\d+$"


@pytest.mark.slow
@needs_strace
@pytest.mark.parametrize("when", ["checkpoints while it runs", "write-back on a restart"])
def test_a_journal_goes_only_once_the_logs_hold_its_events_durably(tmp_path: Path,
                                                                    when: str) -> None:
    """The journal is the only durable copy of the moves it holds: each log written back, its
    name and the folder's entries all fsynced before the journal is removed or cut."""
    env = dict(os.environ, PYTHONPATH=str(REPO))
    d = tmp_path / "w"
    d.mkdir()
    out = tmp_path / "trace"
    if when == "write-back on a restart":  # acknowledged in the journal alone, then a crash
        subprocess.run([PY, "-c", _JOURNAL_RUN, str(_V2), str(d / "x"), "1000", "6", "0",
                        "crash"], env=env, check=True, timeout=120)
        argv = [PY, "-c", _JOURNAL_OPEN, str(d / "x")]
    else:
        argv = [PY, "-c", _JOURNAL_RUN, str(_V2), str(d / "x"), "0.05", "12", "0.03", "close"]
    before = sc.snapshot(d)
    p = sc.trace(argv, out, env=env)
    assert p.returncode == 0, p.stderr[-800:]
    v = sc.check(out.read_text(errors="replace"), d, existed=before, ignore=_NOT_DATA,
                 ack_unlink=_JOURNAL)
    assert re.search(r'unlink(at)?\(.*\.recorder\.journal-\d+"', out.read_text(errors="replace")), \
        "no journal was removed"
    # a new log is linked into place once written, not synced: the journal holds its events
    faults = [f for f in v.faults if not re.match(r"linkat \.\w+\.blog\.\w+\.new -> ", f)]
    assert not faults, "\n".join(faults)
