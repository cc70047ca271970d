"""Fault probes, an ingest whose batch cannot be written (a file size limit, as a full disk):
one line naming the archive and the file, nothing of the batch left behind, and the same
command run again with room stores exactly what a clean ingest stores. Real processes."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from buraco_log.archive import ingest, query, store
from buraco_log.errors import ArchiveError
from tests.archive.conftest import Corpus
from tests.archive.ingest_sums import checksums

ROOT = Path(__file__).resolve().parents[2]

LIMITED = """
import resource, signal, sys
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG
resource.setrlimit(resource.RLIMIT_FSIZE, (int(sys.argv[1]), resource.RLIM_INFINITY))
sys.argv = ["buraco-log", *sys.argv[2:]]
from cli.main import run
run()
"""


@pytest.fixture
def logs(corpus: Corpus, tmp_path: Path) -> Path:
    d = tmp_path / "logs"
    d.mkdir()
    for p in corpus.good[:6]:
        shutil.copy(p, d)
    return d


def test_a_batch_that_cannot_be_written_is_one_line_and_leaves_nothing(
        logs: Path, tmp_path: Path) -> None:
    """Before: 'buraco-log: error: Error writing bytes to file. Detail: [errno 27] File too
    large', naming neither the archive nor the file, with the staged files left behind."""
    arch = tmp_path / "a"
    r = subprocess.run([sys.executable, "-c", LIMITED, "4096", "ingest", str(logs),
                        "--archive", str(arch), "--jobs", "1"], cwd=ROOT, capture_output=True,
                       text=True, timeout=120, check=False, stdin=subprocess.DEVNULL)
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr[-800:]
    assert r.stderr.count("\n") == 1, r.stderr
    assert r.stderr.startswith(f"buraco-log: error: {arch}: batch "), r.stderr
    assert "was not committed" in r.stderr and f"writing {arch}/{store.STAGING}/" in r.stderr
    assert "File too large" in r.stderr
    left = sorted(str(p.relative_to(arch)) for p in arch.rglob("*") if p.is_file())
    assert left == sorted([store.LOCK, store.MARKER, store.READERS]), left
    assert not any((arch / store.STAGING).iterdir())
    again = subprocess.run([sys.executable, "-m", "cli.main", "ingest", str(logs), "--archive",
                            str(arch), "--jobs", "1"], cwd=ROOT, capture_output=True, text=True,
                           timeout=120, check=False, stdin=subprocess.DEVNULL)
    assert again.returncode == 0, again.stderr
    ref = tmp_path / "ref"
    ingest([str(logs)], ref)
    expected: dict[str, Any] = checksums(ref)
    assert checksums(arch) == expected


def test_ratings_that_cannot_be_written_say_the_batches_are_committed(
        logs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Before: the bare 'No space left on device' of the writer, with its temporary left."""
    real = store.pq.write_table

    def write_table(table: Any, where: Any, **kwargs: Any) -> None:
        if Path(where).parent.name == store.RATINGS:
            Path(where).write_bytes(b"PAR1")  # part of it, then the disk is full
            raise OSError(28, "No space left on device")
        real(table, where, **kwargs)

    monkeypatch.setattr(store.pq, "write_table", write_table)
    arch = tmp_path / "a"
    with pytest.raises(ArchiveError, match=r"ratings could not be stored \(No space left on "
                                           r"device\); every batch of this run is committed"):
        ingest([str(logs)], arch)
    monkeypatch.undo()
    assert not [p for p in (arch / store.RATINGS).iterdir() if p.name.startswith(".tmp-")]
    assert query(arch, "SELECT count(*) AS n FROM matches").to_pylist() == [{"n": 6}]
    assert ingest([str(logs)], arch).already_stored == 6  # and it stores them now
    assert store.current_ratings(str(arch)) is not None
