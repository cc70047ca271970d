"""The query's process confined by the kernel (Linux Landlock): what the statement check
and DuckDB's settings refuse, the kernel refuses too, should either ever let one through.

DuckDB's sandbox lets a query open the committed files, with no read-only form of it: a
``COPY ... TO`` a committed file's path overwrote it wherever the process could write it
(root can, whatever the file's mode), held back by the statement check alone, a list of what
is refused. Each probe here takes the check away (a stand-in for a hole in it) and finds the
archive unchanged, no file written outside it, none read outside it, and no TCP connection
made. Without Landlock (an older kernel, not Linux) they skip. A signal to a query inside a
function DuckDB cannot interrupt is answered within a second."""

from __future__ import annotations

import os
import signal
import socket
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from buraco_log.archive import confine, store, views
from tests.archive.filetree import tree_digest as _digest
from tests.archive.query_started import QUERY_STARTED, wait_for
from tests.command_line import sigint_default

REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(confine.abi() < 1, reason="no Landlock in this kernel")


def _writable_part(arch: Path) -> str:
    """A committed file of ``arch``, made writable by its owner: what root may write anyway,
    so that the probe means the same for any user running the tests."""
    part = next(p for files in store.committed_files(str(arch)).values() for p in files)
    os.chmod(part, stat.S_IRUSR | stat.S_IWUSR | stat.S_IRGRP | stat.S_IROTH)
    return part


# The command line with the statement check taken away (the child the query runs in is a
# fork of this process, so it inherits the stand-in).
UNCHECKED = ("import sys\n"
             "from buraco_log.archive import views\n"
             "views.check_sql = lambda sql: None\n"
             "{extra}"
             "from cli.main import run\n"
             "sys.argv = ['buraco-log', *sys.argv[1:]]\n"
             "run()\n")


def _unchecked(*args: str, extra: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", UNCHECKED.format(extra=extra), *args],
                          capture_output=True, text=True, timeout=120, cwd=REPO,
                          env={**os.environ, "COLUMNS": "200"})


def test_a_confined_process_cannot_overwrite_a_committed_file(arch: Path) -> None:
    """In a forked process confined as `query` confines its child, the locked connection runs
    the COPY the statement check refuses (it overwrote the file before): refused by the
    kernel, the file and the archive unchanged, and nothing written outside it either."""
    part = _writable_part(arch)
    before = _digest(arch)
    outside = arch.parent / "outside.csv"
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        os.close(read_end)
        said = b""
        try:
            confine.confine()
            con = views.connect(arch)
            for target in (part, str(outside)):
                try:
                    con.execute(f"COPY (SELECT 42 AS x) TO '{target}' "
                                "(FORMAT csv, USE_TMP_FILE false)")
                    said += b"written;"
                except Exception as exc:  # reported to the parent
                    said += str(exc).encode()[:2000] + b";"  # a long basetemp path
            try:
                Path(outside).write_text("x")
                said += b"python wrote;"
            except OSError as exc:
                said += f"python: {exc.strerror};".encode()
        finally:
            os.write(write_end, said)
            os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as f:
        said = f.read().decode()
    os.waitpid(pid, 0)
    assert "written" not in said, said
    assert "Permission denied" in said.split(";")[0], said
    assert "python: Permission denied" in said, said
    assert _digest(arch) == before
    assert not outside.exists()


@pytest.mark.slow
def test_query_with_no_statement_check_leaves_the_archive_unchanged(arch: Path) -> None:
    """`query` itself, its statement check taken away: the COPY over a committed file is
    refused by the kernel, one line, exit 1 (before: the file was overwritten, and the
    command failed on a result that was no SELECT's, "internal error")."""
    part = _writable_part(arch)
    before = _digest(arch)
    r = _unchecked("query", str(arch),
                   f"COPY (SELECT 42 AS x) TO '{part}' (FORMAT csv, USE_TMP_FILE false)")
    assert _digest(arch) == before, r.stderr
    assert r.returncode == 1 and "Permission denied" in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr


@pytest.mark.slow
def test_query_makes_no_tcp_connection(arch: Path) -> None:
    """The query's process, the statement check taken away and a connection tried in its
    place, reaches no TCP port (before: it connected to the listening one)."""
    with socket.create_server(("127.0.0.1", 0)) as server:
        server.settimeout(0.5)
        port = server.getsockname()[1]
        extra = ("import socket\n"
                 "def check(sql):\n"
                 "    try:\n"
                 f"        socket.create_connection(('127.0.0.1', {port}), timeout=2).close()\n"
                 "    except OSError as exc:\n"
                 "        raise views.ArchiveError(f'connect: {exc.strerror}') from None\n"
                 "views.check_sql = check\n")
        r = _unchecked("query", str(arch), "SELECT 1", extra=extra)
        with pytest.raises(TimeoutError):
            server.accept()[0].close()
    assert r.returncode == 1 and "connect: Permission denied" in r.stderr, r.stderr


@pytest.mark.slow
def test_query_reads_no_file_outside_the_archive(arch: Path, tmp_path: Path) -> None:
    """The query's process, the statement check taken away and a read of a file outside the
    archive tried in its place (a file of the user's, and one of /etc), reads neither
    (before: it read them), and the query then runs as ever."""
    secret = tmp_path / "secret.txt"
    secret.write_text("s3cr3t\n")
    extra = ("def check(sql):\n"
             f"    for path in ({str(secret)!r}, '/etc/passwd'):\n"
             "        try:\n"
             "            open(path).read()\n"
             "        except OSError as exc:\n"
             "            print(path, exc.strerror, file=sys.stderr)\n"
             "        else:\n"
             "            print(path, 'read', file=sys.stderr)\n"
             "views.check_sql = check\n")
    r = _unchecked("query", str(arch), "SELECT count(*) AS n FROM matches", "-f", "csv",
                   extra=extra)
    assert f"{secret} Permission denied" in r.stderr, r.stderr
    assert "/etc/passwd Permission denied" in r.stderr, r.stderr
    assert r.returncode == 0 and r.stdout == "n\n3\n", r.stderr


@pytest.mark.slow
def test_the_output_is_written_beside_the_archive(arch: Path, tmp_path: Path) -> None:
    """Confined, `query -o` still writes its file, in the directory that holds the archive
    too, keeps an old output's mode, and a failed query leaves no temporary file there."""
    out = arch.parent / "wins.csv"
    out.write_text("old\n")
    out.chmod(0o600)
    before = _digest(arch)
    r = _unchecked("query", str(arch), "SELECT count(*) AS n FROM matches", "-f", "csv",
                   "-o", str(out))
    assert r.returncode == 0, r.stderr
    assert out.read_text() == "n\n3\n" and stat.S_IMODE(out.stat().st_mode) == 0o600
    r = _unchecked("query", str(arch), "SELECT error('no')", "-o", str(arch.parent / "x.csv"))
    assert r.returncode == 1
    assert sorted(p.name for p in arch.parent.iterdir()) == ["arch", "wins.csv"]
    assert _digest(arch) == before


# A query DuckDB cannot interrupt for seconds: inside one scalar function building one huge
# value, an interrupt waits for the whole chunk of rows.
UNHEEDING = "SELECT length(repeat('x', 500000000)) AS n FROM range(20)"


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_ends_a_query_within_a_second_inside_a_scalar_function(
        arch: Path, tmp_path: Path, sig: signal.Signals) -> None:
    """Ctrl-C (or SIGTERM) on a query inside `repeat` of 500 MB, with no time limit: one line
    and 130 (143) within about a second, no output file and no temporary one (before: DuckDB
    took the interrupt only when the function returned, 15 s and more on; with --timeout 0,
    the command ran until then)."""
    marker, out = tmp_path / "started", tmp_path / "out" / "n.csv"
    out.parent.mkdir()
    p = subprocess.Popen([sys.executable, "-c", QUERY_STARTED, str(marker), "query", str(arch),
                          UNHEEDING, "--timeout", "0", "--memory-limit", "2GB", "-f", "csv",
                          "-o", str(out)], cwd=REPO, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, preexec_fn=sigint_default)
    wait_for(marker, p)
    time.sleep(1.5)  # inside the first repeat
    assert p.poll() is None
    sent = time.monotonic()
    p.send_signal(sig)
    _, err = p.communicate(timeout=120)
    took = time.monotonic() - sent
    assert p.returncode == (130 if sig == signal.SIGINT else 143), err
    assert took < 3.0, f"{took:.1f} s after the signal"
    assert len(err.strip().splitlines()) == 1 and "nothing was written" in err, err
    assert list(out.parent.iterdir()) == []


@pytest.mark.slow
def test_a_query_process_killed_by_sigkill_is_said_in_one_line(arch: Path,
                                                                tmp_path: Path) -> None:
    """The query's process killed by SIGKILL (what the out-of-memory killer sends): one line
    saying so, the command dies of SIGKILL too, no output file nor temporary one (before:
    "buraco-log: error: Invalid argument", exit 1: the parent tried to reset SIGKILL's
    handler to die of it)."""
    marker, out = tmp_path / "started", tmp_path / "out" / "n.csv"
    out.parent.mkdir()
    p = subprocess.Popen([sys.executable, "-c", QUERY_STARTED, str(marker), "query", str(arch),
                          "SELECT sleep_ms(60000) AS s", "--timeout", "0", "-o", str(out)],
                         cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wait_for(marker, p)
    child = int(Path(f"/proc/{p.pid}/task/{p.pid}/children").read_text().split()[0])
    os.kill(child, signal.SIGKILL)
    _, err = p.communicate(timeout=60)
    assert p.returncode == -signal.SIGKILL, err
    assert err.strip().splitlines() == [
        "buraco-log: error: query: its process was killed (SIGKILL: the system's "
        f"out-of-memory killer, or kill -9); nothing was written to {out}"], err
    assert list(out.parent.iterdir()) == []
