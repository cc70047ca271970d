"""Fixtures: a simulated corpus with broken logs among it, and an archive made from it."""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

from buraco_log.archive import IngestReport, ingest
from buraco_log.log import read_events
from tests import brokenlogs
from tests.archive.corpus import make_corpus

N_MATCHES = 24


@dataclass
class Corpus:
    good: list[str]  # logs that must be archived
    bad: dict[str, str]  # path -> expected error code
    root: Path


@pytest.fixture(scope="session")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Corpus:
    root = tmp_path_factory.mktemp("corpus")
    good = make_corpus(str(root / "good"), N_MATCHES, jobs=2)
    bad_dir = root / "bad"
    bad_dir.mkdir()
    events = read_events(good[0])
    bad: dict[str, str] = {}
    illegal, _ = brokenlogs.with_illegal_discard(events)
    bad[str(brokenlogs.write(bad_dir / "illegal.blog", illegal))] = "legality"
    wrong, _ = brokenlogs.with_wrong_score(events)
    bad[str(brokenlogs.write(bad_dir / "wrong-score.blog", wrong))] = "scoring"
    bad[str(brokenlogs.write(bad_dir / "unfinished.blog", events[:-5]))] = "incomplete"
    tampered = bad_dir / "tampered.blog"
    shutil.copy(good[1], tampered)
    brokenlogs.tamper(tampered, 0)
    bad[str(tampered)] = "integrity"
    torn = bad_dir / "torn.blog"
    shutil.copy(good[2], torn)
    brokenlogs.tear(torn)
    bad[str(torn)] = "integrity"
    garbage = bad_dir / "garbage.blog"
    garbage.write_bytes(b"BURACOLG" + os.urandom(200))
    bad[str(garbage)] = "integrity"
    return Corpus(good=good, bad=bad, root=root)


@dataclass
class Archived:
    path: Path
    report: IngestReport
    corpus: Corpus


@pytest.fixture(scope="session")
def archived(corpus: Corpus, tmp_path_factory: pytest.TempPathFactory) -> Archived:
    """The whole corpus, good and bad, ingested with two workers. Tests must not change it."""
    path = tmp_path_factory.mktemp("archives") / "main"
    report = ingest([str(corpus.root)], path, jobs=2, chunk_size=4)
    return Archived(path, report, corpus)


@pytest.fixture(scope="session")
def three(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An archive of three batches (compact merges them), one simulated match each; its logs
    in ``../logs``. Read only: tests change :func:`arch`, a copy. A module needing another
    archive names its fixture otherwise (test_fault_probes_archive44 checks it)."""
    base = tmp_path_factory.mktemp("three")
    logs = make_corpus(str(base / "logs"), 3, seed="archive41", jobs=1)
    arch = base / "arch"
    for log in logs:
        assert ingest([log], arch).added == 1
    return arch


@pytest.fixture(scope="session")
def two_batches(corpus: Corpus, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two batches of one match each, from the corpus: a compact merges them. Read only: a
    module copies it to change it."""
    site = tmp_path_factory.mktemp("two") / "site"
    for log in corpus.good[:2]:
        assert ingest([log], site, jobs=1).added == 1
    return site


@pytest.fixture
def arch(three: Path, tmp_path: Path) -> Path:
    """A copy of :func:`three` to change."""
    copy = tmp_path / "arch"
    shutil.copytree(three, copy)
    return copy
