"""`buraco-log keys new`: where a key pair goes, how it is written, and when it replaces one.

Before: `keys new site -d kyes/site` made every missing directory of a mistyped path, silently,
and put the private key there; NAME.key was created under its own name and then written, so a
reader (or a crash) could meet a half-written key; an existing key could not be replaced at
all (the help said so, and the brief of `--force` had no option behind it).
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from tests.log.cli_run import assert_error, run

pytest.importorskip("cryptography")

from buraco_log.signing import keys


def test_a_directory_whose_parent_is_missing_is_refused_and_nothing_is_made(
        tmp_path: Path) -> None:
    typo = tmp_path / "kyes" / "site"
    assert_error(run("keys", "new", "site", "-d", typo), 2, str(typo),
                 f"its parent {tmp_path / 'kyes'} does not exist")
    assert list(tmp_path.iterdir()) == []


def test_a_new_directory_is_made_private_and_said(tmp_path: Path) -> None:
    r = run("keys", "new", "site", "-d", "k", cwd=tmp_path)
    assert r.code == 0 and r.err == "", r
    assert r.out.rstrip().endswith(f"; made the directory {tmp_path / 'k'} (mode 0700)")
    assert stat.S_IMODE((tmp_path / "k").stat().st_mode) == 0o700
    # the library's result is what -f json prints
    assert keys.write_key_pair(tmp_path / "j", "other").made_directory == str(tmp_path / "j")
    assert keys.write_key_pair(tmp_path / "j", "more").made_directory is None  # it was there
    assert sorted(p.name for p in (tmp_path / "j").iterdir()) == [
        "more.key", "more.pub", "other.key", "other.pub"]  # no temporary file left


def test_the_private_key_is_named_only_once_it_is_whole_and_private(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every way the key file can get its name, watched: it must already hold the whole key,
    mode 0600, and it must never be opened for writing under that name."""
    priv = str(tmp_path / "site.key")
    seen: list[str] = []
    real_open, real_link, real_replace, real_rename = os.open, os.link, os.replace, os.rename

    def opened(path: Any, flags: int, mode: int = 0o777, *a: Any, **k: Any) -> int:
        if os.fspath(path) == priv and flags & (os.O_WRONLY | os.O_RDWR):
            seen.append("opened for writing under its name")
        return real_open(path, flags, mode, *a, **k)

    def named(real: Any) -> Any:
        def name(src: Any, dst: Any, *a: Any, **k: Any) -> Any:
            if os.fspath(dst) == priv:
                data = Path(src).read_bytes()
                seen.append(f"named: whole {data.rstrip().endswith(b'-----END PRIVATE KEY-----')}"
                            f", mode {stat.S_IMODE(os.stat(src).st_mode):o}")
            return real(src, dst, *a, **k)
        return name

    monkeypatch.setattr(os, "open", opened)
    monkeypatch.setattr(os, "link", named(real_link))
    monkeypatch.setattr(os, "replace", named(real_replace))
    monkeypatch.setattr(os, "rename", named(real_rename))
    old = os.umask(0)  # the most a careless shell allows
    try:
        files = keys.write_key_pair(tmp_path, "site")
    finally:
        os.umask(old)
    assert seen == ["named: whole True, mode 600"]
    assert stat.S_IMODE(os.stat(files.private).st_mode) == 0o600
    # the published key stays one a keyring trusts (others may not write it), umask 0 or not
    assert stat.S_IMODE(os.stat(files.public).st_mode) & keys.TRUSTED_BITS == 0
    keys.load_keyring([tmp_path])


def test_an_existing_key_is_kept_without_force_and_replaced_whole_with_it(
        tmp_path: Path) -> None:
    first = keys.write_key_pair(tmp_path, "site")
    before = (tmp_path / "site.key").read_bytes()
    assert_error(run("keys", "new", "site", "-d", tmp_path), 2, "already exists",
                 "--overwrite replaces it")
    assert (tmp_path / "site.key").read_bytes() == before
    forced = run("keys", "new", "site", "-d", tmp_path, "--force", "-f", "json")
    assert forced.code == 0, forced
    new_id = json.loads(forced.out)["key_id"]
    assert new_id != first.key_id
    assert keys.load_signer(tmp_path / "site.key").key_id == new_id
    assert stat.S_IMODE((tmp_path / "site.key").stat().st_mode) == 0o600
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site.key", "site.pub"]


def test_force_replaces_a_link_itself_never_the_file_it_leads_to(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.write_bytes(b"not yours")
    (tmp_path / "k").mkdir()
    (tmp_path / "k" / "site.key").symlink_to(elsewhere)
    with pytest.raises(keys.SigningError, match="already exists"):
        keys.write_key_pair(tmp_path / "k", "site")
    assert run("keys", "new", "site", "-d", tmp_path / "k", "--force").code == 0
    assert elsewhere.read_bytes() == b"not yours"
    assert not (tmp_path / "k" / "site.key").is_symlink()


def test_a_receipt_given_as_the_trusted_keys_is_named_as_a_receipt(tmp_path: Path) -> None:
    from buraco_log.signing.record import Receipt, receipt_json
    from tests.log.cli_run import EXAMPLES

    signer = keys.Signer.generate()
    receipt = tmp_path / "r.json"
    receipt.write_bytes(receipt_json(Receipt.of(signer.sign_head("m", 3, bytes(32)), 1)))
    # it said: not a buraco-log key file: Object contains unknown field `match_id`
    assert_error(run("audit", EXAMPLES / "format" / "v2.blog", "--keys", receipt), 2,
                 f"{receipt}: a player's receipt, not a published key: give it with --receipt")


def test_a_start_just_outside_a_keys_window_says_when_and_by_how_much(tmp_path: Path) -> None:
    """A site clock a minute and a half slow starts a match before its new key's window: the
    finding said only "valid from ..., after the match started", so a referee could not tell
    a clock set wrong from a key used out of its time."""
    signer = keys.Signer.generate()
    ring = keys.Keyring([signer.public("2027-01-01T00:00:00+00:00", "2028-01-01")])
    new_year = 1_798_761_600_000  # 2027-01-01T00:00:00Z, in ms
    assert ring.window_problem(signer.key_id, new_year - 90_000) == (
        f"key {signer.key_id} is valid from 2027-01-01T00:00:00+00:00, after the match started "
        "(2026-12-31T23:58:30+00:00, 90 s earlier)")
    later = ring.window_problem(signer.key_id, new_year + 400 * 86_400_000)
    assert later is not None and later.endswith("(2028-02-05T00:00:00+00:00, 35 days later)")
    assert ring.window_problem(signer.key_id, new_year) is None


def test_a_key_pair_is_written_where_the_file_system_makes_no_hard_links(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import errno

    def link(src: object, dst: object, *args: object, **kwargs: object) -> None:
        raise PermissionError(errno.EPERM, "Operation not permitted", dst)

    monkeypatch.setattr(os, "link", link)  # as FAT answers it
    files = keys.write_key_pair(tmp_path, "site")
    assert stat.S_IMODE(os.stat(files.private).st_mode) == 0o600
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site.key", "site.pub"]
    before = Path(files.private).read_bytes()
    with pytest.raises(keys.SigningError, match="already exists"):  # never replaced
        keys.write_key_pair(tmp_path, "site")
    assert Path(files.private).read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site.key", "site.pub"]
