"""Key rotation (several trusted keys, validity by key id), the revoked list, the settings that
require signatures and name the keys, `keys new` and the missing extra, for real."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import msgspec
import pytest

pytest.importorskip("cryptography")

from buraco_log.audit import SettingsError, settings, signing_options
from buraco_log.signing import keys
from tests.signing.helpers import audit, match, rules_of, write_signed

OLD = keys.Signer.generate()
NEW = keys.Signer.generate()
REPO = Path(__file__).resolve().parents[2]
T2026 = 1_767_225_600_000  # 2026-01-01T00:00:00Z in ms
T2027 = 1_798_761_600_000  # 2027-01-01T00:00:00Z


def _publish(directory: Path, *pubs: keys.PublicKey, revoked: str = "") -> Path:
    directory.mkdir(exist_ok=True)
    for p in pubs:
        (directory / f"{p.key_id}.pub").write_bytes(msgspec.json.encode(p))
    if revoked:
        (directory / "revoked").write_text(revoked)
    return directory


def _signed_at(tmp_path: Path, name: str, signer: keys.Signer, at: int) -> Path:
    events = match(key_id=signer.key_id)
    events[0] = msgspec.structs.replace(events[0], at=at)
    path = tmp_path / f"{name}.blog"
    write_signed(path, events, signer, batch=64)
    return path


def test_rotation_each_match_verifies_with_the_key_valid_when_it_started(tmp_path: Path) -> None:
    ring = keys.load_keyring([_publish(
        tmp_path / "keys",
        OLD.public(valid_until="2027-01-01T00:00:00+00:00"),
        NEW.public(valid_from="2027-01-01"))])
    old_match = _signed_at(tmp_path, "old", OLD, T2026)
    new_match = _signed_at(tmp_path, "new", NEW, T2027 + 1)
    assert audit(old_match, ring, required=True).ok  # still verifies after the key retired
    assert audit(new_match, ring, required=True).ok
    late = _signed_at(tmp_path, "late", OLD, T2027)  # the old key after its retirement
    assert rules_of(audit(late, ring)) == ["sign.key_window"]
    early = _signed_at(tmp_path, "early", NEW, T2026)  # the new key before its window
    assert rules_of(audit(early, ring)) == ["sign.key_window"]


def test_a_revoked_key_is_a_finding_whatever_the_date(tmp_path: Path) -> None:
    path = _signed_at(tmp_path, "m", OLD, T2026)
    ring = keys.load_keyring([_publish(tmp_path / "keys", OLD.public(), NEW.public(),
                                       revoked=f"# leaked\n{OLD.key_id}\n")])
    assert rules_of(audit(path, ring)) == ["sign.revoked"]
    single = tmp_path / "ring.json"
    single.write_text(json.dumps({"keys": [msgspec.to_builtins(OLD.public())],
                                  "revoked": [OLD.key_id]}))
    assert rules_of(audit(path, keys.load_keyring([single]))) == ["sign.revoked"]
    assert audit(path, keys.load_keyring([tmp_path / "keys" / f"{OLD.key_id}.pub"])).ok


def test_a_match_signed_by_a_key_not_published_is_untrusted(tmp_path: Path) -> None:
    path = _signed_at(tmp_path, "m", NEW, T2026)
    ring = keys.load_keyring([_publish(tmp_path / "keys", OLD.public())])
    assert rules_of(audit(path, ring)) == ["sign.untrusted"]


def test_require_signatures_and_keys_come_from_flag_environment_then_config(
        tmp_path: Path) -> None:
    keydir = _publish(tmp_path / "keys", OLD.public())
    cfg = tmp_path / "config.toml"
    cfg.write_text('[audit]\nrequire_signatures = true\nkeys = "keys"\n')
    env = {"BURACO_LOG_CONFIG": str(cfg)}
    assert settings.require_signatures(None, env).value is True
    assert settings.keys((), env).value == (str(keydir),)
    assert settings.require_signatures(False, env).source == "--no-require-signatures"
    env2 = {**env, "BURACO_LOG_REQUIRE_SIGNATURES": "0", "BURACO_LOG_KEYS": "/k1:/k2"}
    assert settings.require_signatures(None, env2).value is False
    assert settings.keys((), env2).value == ("/k1", "/k2")
    opts = signing_options(environ=env)
    assert opts.require_signatures and opts.keyring is not None
    assert OLD.key_id in opts.keyring.keys


def test_bad_signing_settings_are_one_line_errors(tmp_path: Path) -> None:
    cfg = tmp_path / "config.toml"
    cfg.write_text("[audit]\nrequire_signatures = 1\n")
    with pytest.raises(SettingsError, match="require_signatures must be true or false"):
        settings.require_signatures(None, {"BURACO_LOG_CONFIG": str(cfg)})
    cfg.write_text("[audit]\nkeys = 3\n")
    with pytest.raises(SettingsError, match="keys must be a path"):
        settings.keys((), {"BURACO_LOG_CONFIG": str(cfg)})
    none = {"BURACO_LOG_CONFIG": str(tmp_path / "empty.toml")}
    (tmp_path / "empty.toml").write_text("")
    with pytest.raises(SettingsError, match="needs the site's trusted public keys"):
        signing_options(require_signatures=True, environ=none)
    with pytest.raises(keys.SigningError, match="No such file or directory"):
        signing_options(keys=[str(tmp_path / "missing")], environ=none)


def _cli(*args: str, cwd: Path, extra_env: dict[str, str] | None = None
         ) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO), **(extra_env or {})}
    return subprocess.run([sys.executable, "-m", "cli.main", *args], capture_output=True,
                          text=True, cwd=cwd, env=env, timeout=120)


def test_keys_new_writes_a_0600_private_key_and_a_public_file(tmp_path: Path) -> None:
    (tmp_path / "pw").write_text("correct horse\n")
    out = _cli("keys", "new", "site", "--dir", "k", "--passphrase-file", "pw", cwd=tmp_path)
    assert out.returncode == 0 and out.stderr == "" and "encrypted" in out.stdout
    assert stat.S_IMODE((tmp_path / "k" / "site.key").stat().st_mode) == 0o600
    pub = json.loads((tmp_path / "k" / "site.pub").read_text())
    signer = keys.load_signer(tmp_path / "k" / "site.key", b"correct horse")
    assert pub["key_id"] == signer.key_id and pub["public_key"] == signer.public_key.hex()
    again = _cli("keys", "new", "site", "--dir", "k", cwd=tmp_path)
    assert again.returncode != 0 and again.stdout == ""
    assert len(again.stderr.splitlines()) == 1 and "already exists" in again.stderr
    bad = _cli("keys", "new", "../x", cwd=tmp_path)
    assert bad.returncode == 2 and len(bad.stderr.splitlines()) == 1


def test_without_the_extra_a_key_command_says_what_to_install(tmp_path: Path) -> None:
    """``cryptography`` hidden: one line naming the extra, and the core still imports."""
    code = (
        "import sys; sys.modules['cryptography'] = None\n"
        "import buraco_log.log, buraco_log.audit, buraco_log.signing\n"
        "from cli.main import run\n"
        "sys.argv = ['buraco-log', 'keys', 'new', 'site', '--dir', 'k']\n"
        "run()\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=120)
    assert out.returncode != 0 and out.stdout == ""
    assert out.stderr.count("\n") == 1 and "pip install 'buraco-log[signing]'" in out.stderr
    assert not (tmp_path / "k" / "site.key").exists()


def test_the_core_never_imports_cryptography() -> None:
    code = ("import sys, buraco_log.log, buraco_log.jsonl, buraco_log.audit, "
            "buraco_log.signing, buraco_log.reducer\n"
            "assert 'cryptography' not in sys.modules, 'imported'\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=120)
    assert out.returncode == 0, out.stderr


_KEY_ON_A_FULL_DISK = """
import resource, signal, sys
from buraco_log.signing import keys
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG
limit = int(sys.argv[2])
resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
try:
    keys.write_key_pair(sys.argv[1], "club", passphrase=b"a long passphrase")
except keys.SigningError as exc:
    print("refused:", exc)
"""


@pytest.mark.parametrize("limit", [40, 200])
def test_a_key_pair_that_cannot_be_written_whole_leaves_no_file(tmp_path: Path,
                                                                limit: int) -> None:
    """A full disk (the file size limit, RLIMIT_FSIZE) cuts the private key short (40 bytes)
    or lets it through and stops the public one (200): the pair is refused, neither file is
    left, and the next try makes a whole pair that loads."""
    out = subprocess.run(
        [sys.executable, "-c", _KEY_ON_A_FULL_DISK, str(tmp_path), str(limit)],
        capture_output=True, text=True, timeout=60, cwd=REPO, check=True,
    )
    assert out.stdout.startswith("refused:"), out.stdout + out.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == []
    made = keys.write_key_pair(tmp_path, "club", passphrase=b"a long passphrase")
    assert keys.load_signer(made.private, b"a long passphrase").key_id == made.key_id
