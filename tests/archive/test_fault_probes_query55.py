"""Fault probes of the query sandbox, as a hostile or careless user of a club's shared archive
would try it: a committed file read by a reader of another format, an error message the user
writes, naming a committed file."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from buraco_log.archive import query, store
from buraco_log.errors import ArchiveError

SLOW = pytest.mark.slow


def _part(archive: Path) -> str:
    return store.committed_files(str(archive))["matches"][0]


# Before: each said "ARCHIVE/matches/.../part-....parquet: damaged archive file: ...": the
# file is whole (its bytes are those its batch record keeps), the user read it as text, JSON
# or CSV, or wrote the words themselves. A referee told the archive is damaged restores a
# backup over a sound archive, or doubts every result drawn from it.
@pytest.mark.parametrize("sql", [
    "SELECT * FROM read_text('{p}')",
    "SELECT error('Corrupt file ''{p}''') AS e",
    pytest.param("SELECT * FROM read_json('{p}')", marks=SLOW),
    pytest.param("SELECT * FROM read_csv('{p}')", marks=SLOW),
    pytest.param("SELECT * FROM sniff_csv('{p}')", marks=SLOW),
    pytest.param("SELECT * FROM read_json_objects('{p}')", marks=SLOW),
])
def test_a_whole_file_read_as_another_format_is_not_called_damaged(three: Path,
                                                                   sql: str) -> None:
    part = _part(three)
    with pytest.raises(ArchiveError) as err:
        query(three, sql.format(p=part), timeout=30)
    message = str(err.value)
    assert "damaged" not in message, message
    assert message.startswith("query: ") and "\n" not in message, message


@pytest.mark.slow
def test_a_committed_file_whose_bytes_changed_is_still_named_damaged(three: Path,
                                                                      tmp_path: Path) -> None:
    """The other side: a file whose bytes are not those its record keeps is named damaged
    when the user's read of it fails, as before."""
    arch = tmp_path / "arch"
    shutil.copytree(three, arch)
    part = _part(arch)
    data = bytearray(Path(part).read_bytes())
    data[4:12] = b"\xff" * 8  # the first page's header, past the magic bytes
    Path(part).chmod(0o644)
    Path(part).write_bytes(bytes(data))
    with pytest.raises(ArchiveError) as err:
        query(arch, f"SELECT * FROM read_parquet('{part}')", timeout=30)
    assert str(err.value).startswith(f"{part}: damaged archive file"), err.value


def test_a_parquet_key_error_advises_no_pragma(three: Path) -> None:
    """Before: "No key with name "k" exists. Add it with PRAGMA add_parquet_key(...)", a
    statement the sandbox refuses; the archive's files are not encrypted."""
    sql = f"SELECT * FROM read_parquet('{_part(three)}', encryption_config = {{footer_key: 'k'}})"
    with pytest.raises(ArchiveError) as err:
        query(three, sql, timeout=30)
    message = str(err.value)
    assert 'No key with name "k" exists' in message, message
    assert "PRAGMA" not in message and "add_parquet_key" not in message, message
    assert "not encrypted" in message and "\n" not in message, message
