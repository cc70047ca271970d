"""Site keys: make, store, load, sign, verify. Ed25519 from ``cryptography`` (the ``signing``
extra), imported only when a key is used, so the rest of buraco_log never needs it.

Files (``buraco-log keys new``):

- ``NAME.key``: the private key, PEM (PKCS #8), encrypted when a passphrase is given; mode 0600.
- ``NAME.pub``: what a site publishes, JSON: ``key_id``, ``algorithm``, ``public_key`` (hex of
  the raw 32 bytes) and the validity window ``valid_from``/``valid_until`` (ISO 8601 UTC or null).

A keyring (``--keys``) is a directory of ``*.pub`` files plus an optional ``revoked`` file (one
key id a line, ``#`` comments), or a single file: one ``.pub``, or ``{"keys": [...],
"revoked": [...]}``.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import re
import secrets
import stat
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Final

import msgspec

from buraco_log import log
from buraco_log.errors import WRITE_FAILURES, BuracoLogError
from buraco_log.journal import append_all
from buraco_log.signing import record

ALGORITHM: Final = "ed25519"
INSTALL_HINT: Final = "signing needs the 'signing' extra: pip install 'buraco-log[signing]'"


class SigningError(BuracoLogError, ValueError):
    """A key that cannot be made, read or used (one line, naming the file)."""

    code = "sign"
    exit_status = 2  # a key, keyring, receipt or option the user gave cannot be used


class KeyWriteError(SigningError):
    """A key pair the file system could not take (a full disk, a quota, EIO): no fault of
    what the user gave, so exit 1, as for every output that cannot be written."""

    exit_status = 1


def _crypto() -> Any:
    """The Ed25519 module of ``cryptography``, or one line saying what to install."""
    try:
        from cryptography.hazmat.primitives.asymmetric import ed25519
    except ImportError:
        raise SigningError(INSTALL_HINT) from None
    return ed25519


class PublicKey(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A published key. The window bounds when matches signed with it may start."""

    key_id: str
    public_key: str  # hex, 32 bytes
    algorithm: str = ALGORITHM
    valid_from: str | None = None  # ISO 8601, UTC
    valid_until: str | None = None

    def raw(self) -> bytes:
        """The 32 bytes of the public key (``ValueError`` if ``public_key`` is not hex)."""
        return record.from_hex(self.public_key)

    def window(self) -> tuple[int | None, int | None]:
        """The validity window in milliseconds since the epoch (the unit of events' ``at``)."""
        return _ms(self.valid_from), _ms(self.valid_until)


class _Ring(msgspec.Struct, forbid_unknown_fields=True):
    keys: list[PublicKey] = []
    revoked: list[str] = []


_EPOCH: Final = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
_MS: Final = dt.timedelta(milliseconds=1)
# ISO 8601 times Python's parser refuses: a leap second (23:59:60 UTC, as a bulletin dates
# it) and the day's end (24:00). Each is read as POSIX time counts it: the next second,
# the next day's midnight.
_LEAP_SECOND: Final = re.compile(r"([T ]\d\d:?\d\d:?)60(?=$|[.,Z+-])")
_DAY_END: Final = re.compile(r"([T ])24(?=(?::?00(?::?00(?:[.,]0+)?)?)?(?:$|[Z+-]))")


def _datetime(text: str) -> dt.datetime:
    """``text`` (ISO 8601) as an aware datetime: UTC when it names no zone."""
    try:
        when = dt.datetime.fromisoformat(text)
    except ValueError:
        if _LEAP_SECOND.search(text):
            when = dt.datetime.fromisoformat(_LEAP_SECOND.sub(r"\g<1>59", text, 1))
            when += dt.timedelta(seconds=1)
        elif _DAY_END.search(text):
            when = dt.datetime.fromisoformat(_DAY_END.sub(r"\g<1>00", text, 1))
            when += dt.timedelta(days=1)
        else:
            raise
    return when if when.tzinfo is not None else when.replace(tzinfo=dt.UTC)


def _ms(text: str | None) -> int | None:
    """A window's bound in milliseconds since the epoch, rounded up: a start (whole
    milliseconds) is inside ``valid_from <= start < valid_until`` exactly when it is inside
    the bounds rounded up. Integer arithmetic: no float rounds a bound by a millisecond."""
    if text is None:
        return None
    try:
        return -((_EPOCH - _datetime(text)) // _MS)
    except OverflowError:  # a zone that moves year 1 or 9999 off the calendar
        raise ValueError(f"{text!r} lies outside the calendar") from None


def _time_problem(text: str | None) -> str | None:
    """Why a window's bound is no time (said after the field's name), or None."""
    try:
        _ms(text)
    except (ValueError, TypeError) as exc:
        outside = "outside the calendar" in str(exc)
        return (f"{text!r} lies outside the calendar (years 1 to 9999)" if outside else
                f"{text!r} is not an ISO 8601 date or time (2027-01-01, "
                "2027-01-01T00:00:00Z, 2027-01-01T01:00:00+01:00)")
    return None


def _shown(text: str) -> str:
    """A window's bound as written, with its time in UTC beside it when it is a time written
    in another zone or in none: a referee compares it with the start's UTC time."""
    try:
        utc = _datetime(text).astimezone(dt.UTC).isoformat(timespec="seconds")
    except (ValueError, OverflowError):
        return text
    if len(text) == 10 or (text.endswith(("Z", "+00:00")) and utc.startswith(text[:19])):
        return text  # a date alone is a UTC date, beside a start said in UTC
    return f"{text} ({utc})"


def _when(ms: int) -> str:
    """A time the log records (ms since the epoch), as a validity window is written."""
    try:
        return dt.datetime.fromtimestamp(ms / 1000, dt.UTC).isoformat(timespec="seconds")
    except (OverflowError, OSError, ValueError):  # a forged time no calendar holds
        return f"{ms} ms after 1970"


def _gap(ms: int) -> str:
    """A span in the largest unit that keeps it readable."""
    seconds = ms // 1000
    for size, unit in ((86400 * 730, 86400 * 365), (86400 * 2, 86400), (3600 * 2, 3600),
                       (120, 60)):
        if seconds >= size:
            n = seconds // unit
            names = {86400 * 365: "years", 86400: "days", 3600: "hours", 60: "minutes"}
            return f"{n} {names[unit]}"
    return f"{seconds} s" if seconds else f"{ms} ms"


def verify(public_key: bytes, signature: bytes, message: bytes) -> bool:
    """True if ``signature`` is a valid Ed25519 signature of ``message`` by ``public_key``."""
    ed25519 = _crypto()
    from cryptography.exceptions import InvalidSignature

    try:
        ed25519.Ed25519PublicKey.from_public_bytes(public_key).verify(signature, message)
    except (InvalidSignature, ValueError):
        return False
    return True


class Signer:
    """A loaded private key: signs chain heads for :class:`buraco_log.log.Writer`."""

    def __init__(self, private_key: Any) -> None:
        self._key = private_key
        self.public_key: bytes = private_key.public_key().public_bytes_raw()
        self.key_id: str = record.key_id_of(self.public_key)

    @classmethod
    def generate(cls) -> Signer:
        """A new random key (``keys new`` saves one with :func:`write_key_pair`)."""
        return cls(_crypto().Ed25519PrivateKey.generate())

    def sign(self, message: bytes) -> bytes:
        """The Ed25519 signature of ``message`` (64 bytes)."""
        return bytes(self._key.sign(message))

    def sign_head(self, match_id: str, seq: int, head: bytes) -> record.SignedHead:
        """Sign the chain's ``head`` digest after event ``seq`` of ``match_id``: what a log's
        signature record and a receipt hold (a witness signs the heads it saw so)."""
        sig = self.sign(record.message(match_id, seq, head))
        return record.SignedHead(match_id, seq, head, self.key_id, sig)

    def public(self, valid_from: str | None = None, valid_until: str | None = None) -> PublicKey:
        """The key to publish (``NAME.pub``), with its validity window (ISO 8601)."""
        return PublicKey(self.key_id, self.public_key.hex(), ALGORITHM, valid_from, valid_until)

    def private_pem(self, passphrase: bytes | None = None) -> bytes:
        """The private key as PEM (PKCS #8), encrypted with ``passphrase`` if given."""
        from cryptography.hazmat.primitives import serialization as ser

        enc: Any = ser.BestAvailableEncryption(passphrase) if passphrase else ser.NoEncryption()
        return bytes(self._key.private_bytes(ser.Encoding.PEM, ser.PrivateFormat.PKCS8, enc))


def load_signer(path: str | os.PathLike[str], passphrase: bytes | None = None) -> Signer:
    """Read a private key file; one-line :class:`SigningError` naming the file on any problem."""
    ed25519 = _crypto()
    from cryptography.hazmat.primitives import serialization as ser

    path = os.fspath(path)
    data = read_small(path, "a private key file")
    if os.name == "posix" and b"-----BEGIN ENCRYPTED PRIVATE KEY-----" in data:
        # an encrypted key others may read is refused before it is opened, as ssh refuses
        # it: it said "give its passphrase" (or "a wrong passphrase"), and its leak only once
        # the right passphrase was given
        _private_mode(path)
    try:
        key = ser.load_pem_private_key(data, password=passphrase or None)
    except TypeError:
        raise SigningError(f"{path}: the key is encrypted: give its passphrase" if not passphrase
                           else f"{path}: the key is not encrypted: give no passphrase") from None
    except ValueError:
        raise SigningError(f"{path}: {_not_a_private_key(data, passphrase)}") from None
    except Exception as exc:  # UnsupportedAlgorithm: a PEM private key of a kind not read
        raise SigningError(f"{path}: not an Ed25519 private key: {exc}") from None
    if not isinstance(key, ed25519.Ed25519PrivateKey):
        kind = type(key).__name__.removeprefix("_").removesuffix("PrivateKey") or "another"
        raise SigningError(f"{path}: {_KINDS.get(kind, kind)} private key, not an Ed25519 one: "
                           "sign with the NAME.key 'buraco-log keys new' writes")
    if os.name == "posix":  # said of a key, not of a file that is none
        _private_mode(path)
    signer = Signer(key)
    _refuse_mismatched_pair(path, signer)
    return signer


def _refuse_mismatched_pair(path: str, signer: Signer) -> None:
    """Refuse ``NAME.key`` when the ``NAME.pub`` beside it publishes another key. `keys new
    --overwrite` names its two files one after the other (no file system replaces two names
    in one step): a kill or a power cut between the two left the new private key beside the
    old published one, and every log signed with it failed verification at the referee's,
    with nothing saying why. A ``NAME.pub`` that is no published key is no half of the pair."""
    if not path.endswith(".key"):
        return
    pub = path.removesuffix(".key") + ".pub"
    try:
        published = msgspec.json.decode(read_small(pub, "a published key"), type=PublicKey)
        raw = published.raw()
    except (SigningError, msgspec.MsgspecError, ValueError):  # none there, or not one
        return
    if raw != signer.public_key:
        raise SigningError(
            f"{path}: its public half (key {signer.key_id}) is not the key published beside "
            f"it in {pub} (key {published.key_id}): a `keys new --overwrite` cut short between "
            "the two files leaves such a pair, and logs signed with it would not verify with "
            f"that {os.path.basename(pub)}; run `buraco-log keys new --overwrite` again, or put "
            "back the NAME.pub of this key")


def _private_mode(path: str) -> None:
    """Refuse a private key file that its group or others may read or write."""
    try:
        mode = os.stat(path).st_mode
    except OSError as exc:  # gone since it was read
        raise SigningError(f"{path}: {exc.strerror or exc}") from None
    if mode & PRIVATE_BITS:
        raise SigningError(_permission_problem(path, mode, PRIVATE_BITS))


_KINDS: Final = {"RSA": "an RSA", "EC": "an elliptic-curve (EC)", "DSA": "a DSA",
                 "EllipticCurve": "an elliptic-curve (EC)", "X25519": "an X25519 (key agreement)",
                 "X448": "an X448 (key agreement)", "Ed448": "an Ed448"}


def _not_a_private_key(data: bytes, passphrase: bytes | None) -> str:
    """Why a file that cryptography would not load as a private key is none, said of what it
    holds: a published key or a PEM public key given where the private key is needed, an
    OpenSSH key, or (when encrypted) a passphrase that does not open it."""
    head = data.lstrip()[:64]
    if head.startswith(b"{") and _is_text(data):  # a raw key's first byte is '{' 1 in 256
        return ("a published key (NAME.pub), not a private key: sign with NAME.key, and "
                "give NAME.pub to the referees (--keys)")
    if head.startswith(b"-----BEGIN PUBLIC KEY") or head.startswith(b"-----BEGIN RSA PUBLIC"):
        return "a PEM public key, not a private key: sign with the NAME.key 'keys new' writes"
    if head.startswith(b"-----BEGIN OPENSSH PRIVATE KEY"):
        return ("an OpenSSH private key: buraco-log reads PEM PKCS #8 keys, as "
                "'buraco-log keys new' writes them")
    if b"ENCRYPTED" in head and passphrase:
        # keys new takes a passphrase file's first line without its line end; a program
        # passing the whole file passes the newline too
        hint = (": it ends with a line end, which 'keys new --passphrase-file' does not keep"
                if passphrase.endswith(b"\n") or passphrase.endswith(b"\r") else "")
        return f"a wrong passphrase: it does not open the key{hint}"
    if (why := _not_pem(data)) is not None:
        return why
    label = _PEM_LABEL.search(data)
    kind = label.group(1) if label is not None else b""
    if kind in (b"PRIVATE KEY", b"ENCRYPTED PRIVATE KEY"):  # no passphrase, or not encrypted
        return (f"a damaged PEM {kind.decode().lower()}: its armour is there, but what it "
                "holds does not decode (cut short, or changed)")
    if kind and not kind.endswith(b"PRIVATE KEY"):
        return f"a PEM {kind.decode()!r}, not a private key: {_PEM_HINT}"
    return "not a PEM private key, or a wrong passphrase"


def _is_text(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def other_encoding(data: bytes) -> str | None:
    """How a key, keyring, revocation list or receipt file is text in another encoding than
    the UTF-8 every one of them is, or None: UTF-16 or UTF-32, as Windows tools save text
    (PowerShell 5's ``>``, Notepad's "Unicode"), known by its byte order mark or by a NUL byte
    beside its first character. Such a file was said to be "not a PEM file" (a private key
    whose armour is there, in UTF-16), "not JSON: object keys must be strings (byte 1)", or
    with Python's codec error."""
    for mark, name in _MARKS:
        if data.startswith(mark):
            return (f"the file is {name} text (it starts with the byte order mark "
                    f"{mark.hex(' ').upper()}): {_AS_UTF8}")
    if data[:2] in _UTF16_STARTS:  # "{" or a PEM's "-" beside a NUL byte: no other text
        return f"the file is UTF-16 text (a NUL byte beside its first character): {_AS_UTF8}"
    return None


def cut_short(why: str, data: bytes) -> str:
    """msgspec's "Input data was truncated" of a key or receipt file, said as what it is: the
    file ends inside its JSON (a copy or a download stopped part way)."""
    if not why.startswith("Input data was truncated"):
        return why
    return (f"the file ends inside its JSON, after byte {len(data.rstrip())}: it was cut short "
            "(a copy or a download stopped part way?)")


_MARKS: Final = ((b"\xff\xfe\x00\x00", "UTF-32"), (b"\x00\x00\xfe\xff", "UTF-32"),
                 (b"\xff\xfe", "UTF-16"), (b"\xfe\xff", "UTF-16"))
_UTF16_STARTS: Final = frozenset(c + b"\0" for c in (b"{", b"[", b"-")) | frozenset(
    b"\0" + c for c in (b"{", b"[", b"-"))
_AS_UTF8: Final = "it must be UTF-8 (save it as UTF-8, without BOM)"


_PEM_HINT: Final = "buraco-log reads PEM PKCS #8 keys, as 'buraco-log keys new' writes them"
_HEX: Final = re.compile(rb"[0-9a-fA-F]+")
_PEM_LABEL: Final = re.compile(rb"-----BEGIN ([A-Z0-9 ]{1,40})-----")


def _not_pem(data: bytes) -> str | None:
    """What a key file without PEM armour holds (it said "or a wrong passphrase" of an empty
    file, a raw key or a DER one, given no passphrase at all), or None if it has armour."""
    if b"-----BEGIN " in data:
        return None
    text = data.strip()
    if not text:
        return "an empty file: no private key in it"
    if len(data) in (32, 64) or (len(text) in (64, 128) and _HEX.fullmatch(text)):
        shown = "hex digits" if _HEX.fullmatch(text) else "bytes"
        return (f"{len(text) if shown == 'hex digits' else len(data)} {shown} without PEM "
                f"armour (a raw key?): {_PEM_HINT}")
    if data[:1] == b"\x30" and any(b < 9 for b in data[:16]):  # ASN.1 SEQUENCE: DER
        return f"a binary (DER) file, not PEM: {_PEM_HINT}"
    if (encoding := other_encoding(data)) is not None:  # its armour there, in UTF-16
        return encoding
    return f"no '-----BEGIN' line: not a PEM file: {_PEM_HINT}"


class KeyFiles(msgspec.Struct, frozen=True):
    """What :func:`write_key_pair` made: the key id and the two files' paths."""

    key_id: str
    private: str
    public: str
    encrypted: bool
    # The directory the pair went to did not exist: this call made it (mode 0700). Said, so
    # that a typo in --dir does not leave a private key somewhere unlooked-for unsaid.
    made_directory: str | None = None
    # Hidden temporary files an interrupted `keys new` left in the directory (a private key
    # among them), removed by this one: said, since a copy of a secret key was lying there.
    removed_leftovers: tuple[str, ...] = ()


_TEMP_NAME: Final = re.compile(r"\.keys-new-[0-9a-f]{12}\.tmp")
"""The name of :func:`_new_temp`'s files, and only of them."""

_IMPORTED: Final = time.time()


def _process_started() -> float:
    """When this process started (seconds since the epoch), never later, a second early at
    most: from /proc where there is one (the kernel counts in clock ticks from a boot time it
    gives in whole seconds, rounded down), else when this module was imported."""
    try:
        with open("/proc/self/stat", "rb") as f:
            ticks = int(f.read().rsplit(b")", 1)[1].split()[19])  # field 22, starttime
        with open("/proc/stat", "rb") as f:
            boot = next(int(line.split()[1]) for line in f if line.startswith(b"btime "))
        return min(_IMPORTED, boot + ticks / os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, IndexError, StopIteration):
        return _IMPORTED


def clean_leftovers(directory: str) -> tuple[str, ...]:
    """Remove the temporary files an interrupted ``keys new`` left in ``directory``: a crash
    (SIGKILL, power) between giving a temporary its name and removing it, or while writing
    it, left a hidden 0600 ``.keys-new-*.tmp`` holding a private key for ever. Only regular
    files (never a link) of exactly that name, owned by this user and older than this process
    (so never the temporary of a ``keys new`` running beside this one) are removed. Their
    paths."""
    before = _process_started()
    removed = []
    try:
        names = sorted(os.listdir(directory))
    except OSError:
        return ()
    for name in names:
        if not _TEMP_NAME.fullmatch(name):
            continue
        path = os.path.join(directory, name)
        try:
            st = os.lstat(path)
            if (not stat.S_ISREG(st.st_mode) or st.st_uid != os.getuid()
                    or st.st_mtime >= before):
                continue
            os.unlink(path)
        except OSError:
            continue
        removed.append(path)
    return tuple(removed)


def _new_temp(directory: str, data: bytes, mode: int) -> str:
    """``data`` in a new hidden file of ``directory`` made with ``mode`` (O_EXCL: never an
    existing file, nor one a link leads to), written whole and synced; its path. The name is
    short whatever the key's: a name that fits as NAME.key must not fail as a temporary."""
    path = os.path.join(directory, f".keys-new-{secrets.token_hex(6)}.tmp")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0),
                 mode)
    try:
        if mode == 0o600:
            os.fchmod(fd, 0o600)  # whatever the umask
        append_all(fd, data)  # a full disk writes short
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(path)
        raise
    os.close(fd)
    return path


def _put(temp: str, path: str, overwrite: bool) -> None:
    """Give the whole file ``temp`` the name ``path`` in one step: a reader sees no key or the
    whole key, never part of one. Without ``overwrite`` an existing ``path`` (a file or a
    link, made meanwhile too) stays as it is, as a new log's name does (:func:`log.place_new`:
    a hard link, or a rename that never replaces where the file system makes no links)."""
    if overwrite:
        os.replace(temp, path)
        return
    if not log.place_new(temp, path):
        os.unlink(temp)


def _sync_directory(directory: str) -> None:
    """The new names made durable (a crash just after must not lose the pair)."""
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def write_key_pair(directory: str | os.PathLike[str], name: str, *,
                   passphrase: bytes | None = None, valid_from: str | None = None,
                   valid_until: str | None = None, signer: Signer | None = None,
                   overwrite: bool = False) -> KeyFiles:
    """Make a key pair: ``NAME.key`` (mode 0600 from its creation) and ``NAME.pub``.

    Each file is written whole under a hidden temporary name, the private one created with
    ``O_EXCL`` and mode 0600 (never readable by others, not even for a moment), and then
    given its name in one step: a crash leaves no half-written key. Refuses to overwrite
    either file unless ``overwrite`` (``keys new --overwrite``), which replaces each in one step,
    the private one first (its temporary, a secret, is never the one a kill between the two
    leaves); a kill between the two leaves the new key beside the old published one, a pair
    :func:`load_signer` refuses, naming both files.

    ``directory`` is made (mode 0700) when it does not exist but its parent does, and the
    result says so (``made_directory``); a missing parent is refused: a typo in the path must
    not put a private key in a tree of new directories nobody looks in. The temporaries an
    interrupted call left there are removed first (:func:`clean_leftovers`;
    ``removed_leftovers``).
    """
    for text in (valid_from, valid_until):
        if (why := _time_problem(text)) is not None:
            raise SigningError(f"validity {why}")
    if (why := _empty_window(valid_from, valid_until)) is not None:
        raise SigningError(why)
    signer = signer or Signer.generate()
    directory = os.fspath(directory)
    if os.path.exists(directory) and not os.path.isdir(directory):
        raise SigningError(f"{directory}: not a directory (--dir names where the keys go)")
    fresh = not os.path.lexists(directory)
    if fresh:
        parent = os.path.dirname(directory.rstrip(os.sep)) or os.curdir
        if not os.path.isdir(parent):
            raise SigningError(
                f"{directory}: no such directory, and its parent {parent} does not exist either "
                "(a typo?): a key pair is made in an existing directory or a new one inside "
                "it; create the directories first")
    removed = () if fresh else clean_leftovers(directory)
    priv, pub = os.path.join(directory, f"{name}.key"), os.path.join(directory, f"{name}.pub")
    for p in (priv, pub) if not overwrite else ():
        if os.path.lexists(p):  # a dangling symbolic link too: the key would go where it points
            raise SigningError(f"{p}: already exists (refusing to overwrite a key; --overwrite "
                               "replaces it)")
    published = signer.public(valid_from, valid_until)
    temps: list[str] = []
    placed: list[str] = []  # removed again if the pair cannot be written whole
    writing = directory  # what a failure names: a write's own error names no file
    try:
        if fresh:
            os.mkdir(directory, 0o700)
        writing = priv
        temps.append(_new_temp(directory, signer.private_pem(passphrase), 0o600))
        writing = pub
        temps.append(_new_temp(directory, msgspec.json.format(
            msgspec.json.encode(published), indent=2) + b"\n", 0o644))
        for temp, path in zip(temps, (priv, pub), strict=True):
            writing = path
            _put(temp, path, overwrite)
            placed.append(path)
        _sync_directory(directory)
    except OSError as exc:
        # A half-written key would block every later try ("already exists") and is no key.
        for p in [*temps, *(placed if not overwrite else ())]:
            with contextlib.suppress(OSError):
                os.unlink(p)
        if fresh:  # an empty directory a failed `keys new` made (a name too long) is litter
            with contextlib.suppress(OSError):
                os.rmdir(directory)
        if isinstance(exc, FileExistsError) and not overwrite:  # made meanwhile
            raise SigningError(f"{writing}: already exists (refusing to overwrite a key; "
                               "--overwrite replaces it)") from None
        cls = KeyWriteError if exc.errno in WRITE_FAILURES else SigningError
        # the file being made, never its temporary name (gone by now)
        raise cls(f"{writing}: {exc.strerror or exc}; no key was kept") from None
    return KeyFiles(signer.key_id, priv, pub, bool(passphrase),
                    os.path.abspath(directory) if fresh else None, removed)


# -- trust ---------------------------------------------------------------------------------------


def _lower_id(k: PublicKey) -> PublicKey:
    """``k`` with its key id in lower case: the id is hex, and its case is presentation (as in
    a receipt or a revoked file); a published key in capitals was refused as one whose "key id
    does not match the public key", and the log's records would not have found it."""
    return k if k.key_id.islower() or not k.key_id else msgspec.structs.replace(
        k, key_id=k.key_id.lower())


def key_problem(k: PublicKey) -> str | None:
    """Why a published key cannot be trusted as written, or None."""
    if k.algorithm != ALGORITHM:
        return f"key {k.key_id}: algorithm {k.algorithm!r} is not {ALGORITHM}"
    try:
        raw = k.raw()
    except ValueError:
        return f"key {k.key_id}: the public key is not hexadecimal"
    for field, text in (("valid_from", k.valid_from), ("valid_until", k.valid_until)):
        if (why := _time_problem(text)) is not None:
            return f"key {k.key_id}: {field} is malformed: {why}"
    if len(raw) != 32:  # before the id: a key of another size has no id to match
        return (f"key {k.key_id}: the public key is {len(raw)} bytes; an Ed25519 public key "
                "is 32")
    if record.key_id_of(raw) != k.key_id:
        return f"key {k.key_id}: the key id does not match the public key"
    if (weak := _weak_point(raw)) is not None:
        return f"key {k.key_id}: {weak}"
    if (why := _empty_window(k.valid_from, k.valid_until)) is not None:
        return f"key {k.key_id}: {why}"
    return None


_P: Final = 2**255 - 19
_D: Final = -121665 * pow(121666, -1, _P) % _P
_SQRT_M1: Final = pow(2, (_P - 1) // 4, _P)
_Y8: Final = 0x05FC536D880238B13933C6D305ACDFD5F098EFF289F4C345B027B2C28F95E826
_SMALL_ORDER_Y: Final = frozenset({0, 1, _P - 1, _Y8, _P - _Y8})
"""The y of the 8 points of order dividing 8 (libsodium's list; each y with both signs of
x, but x = 0 for y = 1 and y = p - 1): the whole torsion subgroup, so a set lookup decides
what three doublings did, each with two modular inverses (10^5 published keys took minutes)."""


def _weak_point(raw: bytes) -> str | None:
    """Why the 32 bytes are no safe Ed25519 public key, or None: not a canonical point of
    the curve, or a point of small order. A small-order key verifies signatures nobody made
    (R the identity, S zero: the check [S]B = R + [k]A holds for any message whose k the
    order divides), so trusting one trusts forgeries; ``keys new`` never makes one."""
    y = int.from_bytes(raw, "little") & ((1 << 255) - 1)
    if y >= _P:
        return "the public key is not a canonical curve point encoding (y is not below 2^255-19)"
    u, v = (y * y - 1) % _P, (_D * y * y + 1) % _P
    x = u * pow(v, 3, _P) * pow(u * pow(v, 7, _P), (_P - 5) // 8, _P) % _P
    if (v * x * x - u) % _P:
        x = x * _SQRT_M1 % _P
    if (v * x * x - u) % _P or (x == 0 and raw[31] >> 7):
        return "the public key is not a point of the Ed25519 curve"
    if y in _SMALL_ORDER_Y:
        return ("the public key is a point of small order (a weak key): it would verify "
                "signatures anyone can forge")
    return None


def _empty_window(valid_from: str | None, valid_until: str | None) -> str | None:
    """Why a validity window holds no time at all (from at or after until), or None."""
    start, end = _ms(valid_from), _ms(valid_until)
    if start is not None and end is not None and start >= end:
        return (f"valid_from {valid_from} is not before valid_until {valid_until}: the key "
                "would be valid for no match")
    return None


def _same_key(a: PublicKey, b: PublicKey) -> bool:
    """Whether two checked published keys are one key with one window, however written: a
    key list republished by another tool over the years writes a bound as a date or as its
    midnight, or the key's hex in capitals, and was refused as "different windows"."""
    return a == b or (a.raw() == b.raw() and a.window() == b.window())


def _twice(key_id: str, one_file: bool = False) -> str:
    return (f"key {key_id} is published twice with different validity windows: which one "
            "counts would depend on the order "
            + ("its entries are read (both in this file)" if one_file
               else "the files are read"))


class Keyring:
    """Trusted public keys by id, with validity windows, and the revoked key ids."""

    def __init__(self, keys: Iterable[PublicKey] = (), revoked: Iterable[str] = (), *,
                 checked: bool = False) -> None:
        """``checked``: every key has passed :func:`key_problem` already (``load_keyring``
        checks each as it reads it, naming its file), so it is not checked twice."""
        self.keys: dict[str, PublicKey] = {}
        for k in map(_lower_id, keys):
            if not checked and (why := key_problem(k)) is not None:
                raise SigningError(why)
            if not _same_key(self.keys.setdefault(k.key_id, k), k):
                raise SigningError(_twice(k.key_id))
        # key ids are hex: a revocation in capitals must revoke all the same
        self.revoked: frozenset[str] = frozenset(r.strip().lower() for r in revoked)

    def problem(self, key_id: str, started_at: int | None) -> str | None:
        """Why signatures by ``key_id`` on a match started at ``started_at`` (ms) are not
        trusted, or None if they are."""
        return self._unknown(key_id) or self.window_problem(key_id, started_at)

    def _unknown(self, key_id: str) -> str | None:
        """Why ``key_id`` is no trusted key at all (revoked, or never published), or None."""
        if key_id in self.revoked:
            return f"key {key_id} is revoked"
        if key_id not in self.keys:
            return f"key {key_id} is not among the trusted keys"
        return None

    def window_problem(self, key_id: str, started_at: int | None) -> str | None:
        """Why a match started at ``started_at`` (ms) lies outside the validity window of the
        trusted key ``key_id``, or None if it lies inside (or the key is not trusted)."""
        key = self.keys.get(key_id)
        if key is None:
            return None
        start, end = key.window()
        if start is None and end is None:
            return None
        if started_at is None:
            return f"key {key_id} has a validity window and the match start has no time"
        # the start's own time and how far outside: a few seconds is a site clock set
        # wrong, months a key used out of its time (both said as they are, the referee judges)
        if start is not None and started_at < start:
            return (f"key {key_id} is valid from {_shown(key.valid_from or '')}, after the "
                    f"match started ({_when(started_at)}, {_gap(start - started_at)} earlier)")
        if end is not None and started_at >= end:
            return (f"key {key_id} was retired at {_shown(key.valid_until or '')}, before the "
                    f"match started ({_when(started_at)}, {_gap(started_at - end)} later)")
        return None

    def check(self, signed: record.SignedHead, started_at: int | None) -> str | None:
        """None if ``signed`` is a valid signature by a key trusted for this match, else why."""
        return self.problem(signed.key_id, started_at) or self.check_signature(signed)

    def check_signature(self, signed: record.SignedHead) -> str | None:
        """None if ``signed`` is a valid signature by a trusted key that is not revoked,
        whatever the key's validity window; else why not. A player's receipt is judged so: a
        head the site's key signed is the site's word, and the match start that decides the
        window is the very thing a changed log may have changed."""
        why = self._unknown(signed.key_id)
        if why is not None:
            return why
        try:
            message = signed.message()
        except ValueError as exc:  # no site signs such a head (a match id over 64 KiB)
            return f"no signature of key {signed.key_id} can cover this head: {exc}"
        if not verify(self.keys[signed.key_id].raw(), signed.signature, message):
            return f"the signature does not verify for key {signed.key_id}"
        return None


MAX_FILE: Final = 1 << 20
"""Largest key, keyring or revoked file read (a published key is about 250 bytes)."""


def read_small(path: str | os.PathLike[str], what: str, limit: int = MAX_FILE, *,
               others: int = 0) -> bytes:
    """The bytes of a small file a site or a player gives (a key, a keyring, a receipt).

    A regular file only, opened without blocking: a FIFO would wait forever for a writer and a
    device such as /dev/zero never ends. At most ``limit`` bytes; one-line
    :class:`SigningError` naming the file otherwise. ``others``: permission bits (of group and
    others) the file must not have (:data:`PRIVATE_BITS`, :data:`TRUSTED_BITS`)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        try:  # before fdopen, which refuses a directory with a bare "Is a directory"
            mode = os.fstat(fd).st_mode
        except OSError:
            os.close(fd)
            raise
        if not stat.S_ISREG(mode):
            os.close(fd)
            kind = ("a directory" if stat.S_ISDIR(mode) else "a FIFO" if stat.S_ISFIFO(mode)
                    else "a device or socket")
            raise SigningError(f"{os.fspath(path)}: not a regular file ({kind}): not {what}")
        with os.fdopen(fd, "rb") as f:
            if os.name == "posix" and mode & others:
                raise SigningError(_permission_problem(os.fspath(path), mode, others))
            data = f.read(limit + 1)
    except OSError as exc:
        raise SigningError(f"{os.fspath(path)}: {exc.strerror or exc}") from None
    if data is None:  # a "regular" file of the kernel's that would wait (/proc/kmsg)
        raise SigningError(f"{os.fspath(path)}: not readable without waiting (a special file): "
                           f"not {what}")
    if len(data) > limit:
        raise SigningError(f"{os.fspath(path)}: larger than {limit:,} bytes: not {what}")
    return data


PRIVATE_BITS: Final = 0o077
"""A private key file that its group or others may read or write is refused, as ssh refuses
one: anyone on the machine could have copied it (or swapped it for a key of their own)."""

TRUSTED_BITS: Final = 0o002
"""A trusted key, keyring or revoked file that anyone (others) may write is refused:
anyone on the machine could add a key to trust or take a revocation out."""


def _permission_problem(path: str, mode: int, others: int) -> str:
    shown = f"mode {stat.S_IMODE(mode):04o}"
    if others == PRIVATE_BITS:
        return (f"{path}: a private key that others may read or write ({shown}): it may have "
                f"leaked; chmod 600 {path} (and revoke the key if anyone else could read it)")
    return (f"{path}: a trusted key file that others may write ({shown}): anyone could add a "
            f"key to trust or take a revocation out; chmod o-w {path}")


def _read_key_file(path: Path) -> _Ring:
    """A ``.pub`` file or a keyring file, as a ring. The decodes are typed (never a free-form
    JSON value), so deep nesting fails at its first level instead of recursing."""
    data = read_small(path, "a buraco-log key file", others=TRUSTED_BITS)
    ring = _decode_key_file(path, data)
    refuse_duplicate_key(path, data, "file")
    return ring


def refuse_duplicate_key(path: str | os.PathLike[str], data: bytes, what: str) -> None:
    """Refuse JSON (already decoded by msgspec) in which one object names a key twice:
    msgspec keeps the last value, other readers the first, so a keyring's second
    ``"revoked": []`` took a revocation out unseen (or a ``.pub``'s ``valid_until`` its end),
    while the file still showed it to a person or another tool."""
    from buraco_log.jsonl import duplicate_key

    if (key := duplicate_key(data)) is not None:
        raise SigningError(f"{path}: duplicate key {key!r}: JSON parsers disagree on which "
                           f"value counts, so the {what} is refused")


def _decode_key_file(path: Path, data: bytes) -> _Ring:
    try:
        try:
            return _Ring(keys=[msgspec.json.decode(data, type=PublicKey)])
        except msgspec.ValidationError as as_key:
            try:
                return msgspec.json.decode(data, type=_Ring)
            except msgspec.ValidationError as as_ring:
                if _is_receipt(data):  # it said "unknown field `match_id`"
                    raise SigningError(f"{path}: a player's receipt, not a published key: give "
                                       "it with --receipt, and the site's NAME.pub with --keys"
                                       ) from None
                if "at `$.revoked[" in str(as_ring):  # {"key_id": ..., "at": ...}
                    raise SigningError(f"{path}: \"revoked\" lists key ids (16 hex digits, "
                                       f"as text): {as_ring}; a revocation has no date: every "
                                       "signature by a revoked key is a finding, whatever its "
                                       "date") from None
                ring = b'"keys"' in data or b'"revoked"' in data
                raise SigningError(f"{path}: not a buraco-log key file: "
                                   f"{as_ring if ring else as_key}") from None
    except msgspec.DecodeError as exc:
        if b"PRIVATE KEY-----" in data:  # NAME.key instead of NAME.pub: say so, not 'not JSON'
            raise SigningError(f"{path}: a private key, not a published key: trust the site's "
                               "NAME.pub (and keep NAME.key secret)") from None
        if b"-----BEGIN " in data:  # a PEM public key (openssl pkey -pubout): no key id, window
            raise SigningError(f"{path}: a PEM file, not a buraco-log published key: trust the "
                               "NAME.pub that 'buraco-log keys new' writes (key id, public key, "
                               "validity window)") from None
        if data.startswith((b"ssh-ed25519 ", b"ssh-rsa ", b"ecdsa-sha2-")):
            raise SigningError(f"{path}: an OpenSSH public key, not a buraco-log published key: "
                               "trust the NAME.pub that 'buraco-log keys new' writes (key id, "
                               "public key, validity window)") from None
        if not data.strip():  # "Input data was truncated" says nothing of an empty file
            raise SigningError(f"{path}: an empty file: no published key in it") from None
        if (encoding := other_encoding(data)) is not None:
            raise SigningError(f"{path}: {encoding}") from None
        if data.startswith(b"\xef\xbb\xbf"):
            raise SigningError(f"{path}: the file starts with a byte order mark (EF BB BF): a "
                               "published key is UTF-8 JSON without one (save it without BOM)"
                               ) from None
        from buraco_log.jsonl import json_problem

        raise SigningError(f"{path}: not JSON: {cut_short(json_problem(data, exc), data)}"
                           ) from None


def _is_receipt(data: bytes) -> bool:
    """Whether ``data`` is a receipt (or a list of them), as ``--receipt`` reads one."""
    try:
        msgspec.json.decode(data, type=record.Receipt | list[record.Receipt])
    except msgspec.MsgspecError:
        return False
    return True


def _checked(ring: _Ring, path: Path) -> _Ring:
    """``ring`` read from ``path``, each key and revocation checked, errors naming the file."""
    ring.keys = [_lower_id(k) for k in ring.keys]
    for k in ring.keys:
        if (why := key_problem(k)) is not None:
            raise SigningError(f"{path}: {why}")
    ring.revoked = [_revoked_id(r, f"{path}, revoked") for r in ring.revoked]
    return ring


_KEY_ID = re.compile(r"[0-9a-f]{16}")


def _revoked_id(text: str, where: str) -> str:
    """A revoked key id as written (any case, spaces around it); a line that is not one is an
    error: a mistyped revocation that is skipped leaves the key trusted."""
    key_id = text.strip().lower()
    first, *rest = key_id.split(None, 1) or [""]
    if rest and _KEY_ID.fullmatch(first):  # "KEYID 2026-03-01": a date a revocation lacks
        raise SigningError(f"{where}: {text.strip()!r} is not a key id alone: a revoked "
                           "line holds the key id and nothing else (a revocation has no date: "
                           "every signature by a revoked key is a finding, whatever its date, "
                           "as a leaked key can sign a match dated before it)"
                           + ("; put a note after #" if ", line " in where else ""))
    if not _KEY_ID.fullmatch(key_id):
        raise SigningError(f"{where}: {text.strip()!r} is not a key id (16 hex digits): a "
                           "revocation that is not understood would leave the key trusted")
    return key_id


def _revoked_lines(path: Path) -> list[str]:
    data = read_small(path, "a list of revoked key ids", others=TRUSTED_BITS)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SigningError(f"{path}: {other_encoding(data) or f'not UTF-8 text: {exc}'}"
                           ) from None
    # a byte order mark (an editor's, with CRLF line ends) is no part of the first line: it
    # made the first key id, or a comment, "not a key id" and the whole keyring refused
    text = text.removeprefix("\ufeff")
    out: list[str] = []
    for number, line in enumerate(text.splitlines(), 1):
        line = line.split("#", 1)[0]
        if line.strip():
            out.append(_revoked_id(line, f"{path}, line {number}"))
    return out


def _trusted_directory(path: Path) -> None:
    """Refuse a keys directory that anyone may write, as a key file that anyone may write is
    refused: anyone could drop a ``.pub`` into it to be trusted (the sticky bit stops only
    the removal of others' files, not the adding of one)."""
    mode = path.stat().st_mode
    if os.name == "posix" and mode & TRUSTED_BITS:
        raise SigningError(f"{path}: a trusted keys directory that others may write (mode "
                           f"{stat.S_IMODE(mode):04o}): anyone could add a key to trust; "
                           f"chmod o-w {path}")


def _misnamed_revocations(directory: Path) -> None:
    """Refuse a keys directory holding a revocation list under another name than ``revoked``
    (``revoked.txt`` as a site publishes it, ``REVOKED``): it was skipped without a word, and
    every key it revokes trusted. An editor's backup (``revoked~``, hidden files) or a
    directory is none."""
    with contextlib.suppress(OSError):
        for name in sorted(os.listdir(directory)):
            if (name != "revoked" and not name.startswith(".") and not name.endswith("~")
                    and name.lower().startswith(("revoked", "revocation"))
                    and not (directory / name).is_dir()):
                raise SigningError(
                    f"{directory / name}: a keys directory reads its revocations from the "
                    "file named 'revoked' alone, so this one would be skipped and the keys it "
                    "revokes trusted: rename it 'revoked' (or move it out of the directory)")


def load_keyring(paths: Sequence[str | os.PathLike[str]]) -> Keyring:
    """Trusted keys from directories and files (see the module's docstring)."""
    keys: dict[str, tuple[PublicKey, Path]] = {}
    revoked: list[str] = []

    def add(ring: _Ring, path: Path) -> None:
        nonlocal revoked
        for k in _checked(ring, path).keys:
            first, where = keys.setdefault(k.key_id, (k, path))
            if not _same_key(first, k):  # said of one file's entries, or of two files
                raise SigningError(f"{path}: {_twice(k.key_id, where == path)}"
                                   + ("" if where == path else f" (also in {where})"))
        revoked += ring.revoked

    for p in map(Path, paths):
        if p.is_dir():
            _trusted_directory(p)
            for f in sorted(p.glob("*.pub")):
                if not f.name.startswith("."):  # hidden: an editor's lock or swap file
                    add(_read_key_file(f), f)
            _misnamed_revocations(p)
            if os.path.lexists(p / "revoked"):  # a link to nowhere is an error, not no list
                revoked += _revoked_lines(p / "revoked")
        elif p.name == "revoked":  # a path missing or unreadable: read_small says why
            revoked += _revoked_lines(p)
        else:
            add(_read_key_file(p), p)
    if not keys:  # every signature would be 'untrusted': a finding blaming the log for a typo
        raise SigningError(f"{', '.join(str(p) for p in paths)}: no published key (*.pub) to "
                           "trust: give the site's public keys")
    return Keyring([k for k, _ in keys.values()], revoked, checked=True)


__all__ = ["INSTALL_HINT", "KeyFiles", "Keyring", "PublicKey", "Signer", "SigningError",
           "load_keyring", "load_signer", "read_small", "verify", "write_key_pair"]
