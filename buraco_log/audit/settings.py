"""Site settings of the audit, so that a site which commits its deals can make requiring a
commitment its default (docs/audit-settings.md names them; the archive reads the same name).

``require_signatures`` (``--require-signatures``, ``BURACO_LOG_REQUIRE_SIGNATURES``) and
``keys`` (``--keys``, ``BURACO_LOG_KEYS``), the trusted public keys of docs/signing.md, are
taken the same way.

``require_commitment`` is taken from, first to last: the command line
(``--require-commitment`` / ``--no-require-commitment``), the environment variable
``BURACO_LOG_REQUIRE_COMMITMENT``, then ``require_commitment`` in the ``[audit]`` section of
the config file (``BURACO_LOG_CONFIG`` names it; otherwise the user's
``$XDG_CONFIG_HOME/buraco-log/config.toml``, then the site's ``/etc/buraco-log/config.toml``);
the default is false.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping

import msgspec

from buraco_log.errors import BuracoLogError

REQUIRE_COMMITMENT_ENV = "BURACO_LOG_REQUIRE_COMMITMENT"
CONFIG_ENV = "BURACO_LOG_CONFIG"
SITE_CONFIG = "/etc/buraco-log/config.toml"
SECTION = "audit"
REQUIRE_SIGNATURES_ENV = "BURACO_LOG_REQUIRE_SIGNATURES"
KEYS_ENV = "BURACO_LOG_KEYS"
SETTINGS = ("require_commitment", "require_signatures", "keys")
"""The settings the ``[audit]`` section may hold (any other key is refused, not ignored)."""

_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off")
_MAX_CONFIG = 1 << 20


class SettingsError(BuracoLogError, ValueError):
    """A setting that cannot be read: names the variable or file and the setting."""

    code = "settings.invalid"


class Setting(msgspec.Struct, frozen=True):
    """A setting's value and where it came from (for messages and ``--format json``)."""

    value: bool
    source: str


def config_files(environ: Mapping[str, str]) -> list[str]:
    """The config files read, in order: ``BURACO_LOG_CONFIG`` alone when set."""
    named = environ.get(CONFIG_ENV)
    if named:
        return [named]
    home = environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return [os.path.join(home, "buraco-log", "config.toml"), SITE_CONFIG]


def _read_config(path: str, required: bool) -> dict[str, object] | None:
    """A config file's TOML, or None when it does not exist (and need not). Opened without
    blocking and only if a regular file: a FIFO named as the config never hangs the audit."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        if required:
            raise SettingsError(f"{path} (named by {CONFIG_ENV}): no such file") from None
        return None
    except OSError as exc:
        raise SettingsError(f"{path}: cannot read the config file: {exc.strerror}") from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise SettingsError(f"{path}: the config file is not a regular file")
        if os.name == "posix" and mode & 0o002:
            # as a trusted key or keys directory others may write is refused: whoever may
            # write it chooses the keys an audit trusts and whether it requires signatures
            raise SettingsError(
                f"{path}: a config file that others may write (mode {stat.S_IMODE(mode):04o}): "
                "anyone on the machine could choose the keys the audit trusts, or take "
                f"require_signatures out; chmod o-w {path}")
        try:
            data = os.read(fd, _MAX_CONFIG + 1)
        except BlockingIOError:  # a kernel file that looks regular but waits (/proc/kmsg)
            raise SettingsError(f"{path}: the config file is not readable without waiting "
                                "(a special file)") from None
        except OSError as exc:
            raise SettingsError(f"{path}: cannot read the config file: {exc.strerror}"
                                ) from None
    finally:
        os.close(fd)
    if len(data) > _MAX_CONFIG:
        raise SettingsError(f"{path}: the config file is larger than {_MAX_CONFIG} bytes")
    import tomllib  # here: only a config file that exists needs it

    try:
        return tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise SettingsError(f"{path}: not a valid TOML config file: {exc}") from None
    except RecursionError:  # tomllib recurses once per level of nested arrays or tables
        raise SettingsError(f"{path}: not a valid TOML config file: nested too deeply"
                            ) from None


def _flag(text: str, where: str) -> bool:
    low = text.strip().lower()
    if low in _TRUE:
        return True
    if low in _FALSE:
        return False
    raise SettingsError(f"{where}: {text!r} is not one of 1/0, true/false, yes/no, on/off")


def _from_config(name: str, env: Mapping[str, str]) -> tuple[object, str] | None:
    """The value of setting ``name`` in the first config file that has it, and where."""
    named = bool(env.get(CONFIG_ENV))
    for path in config_files(env):
        data = _read_config(path, required=named)
        if data is None or SECTION not in data:
            continue
        section = data[SECTION]
        if not isinstance(section, dict):
            raise SettingsError(f"{path}: [{SECTION}] must be a table of settings")
        unknown = sorted(set(section) - set(SETTINGS))
        if unknown:
            raise SettingsError(f"{path}: [{SECTION}] has no setting {unknown[0]!r} (known: "
                                f"{', '.join(SETTINGS)})")
        if name in section:
            return section[name], path
    return None


def _bool_setting(name: str, env_name: str, flag: bool | None,
                  environ: Mapping[str, str] | None) -> Setting:
    option = "--" + name.replace("_", "-")
    if flag is not None:
        return Setting(flag, option if flag else "--no-" + option[2:])
    env = os.environ if environ is None else environ
    raw = env.get(env_name)
    if raw is not None and raw.strip():
        return Setting(_flag(raw, env_name), f"{env_name}={raw}")
    found = _from_config(name, env)
    if found is not None:
        value, path = found
        if not isinstance(value, bool):
            raise SettingsError(f"{path}: [{SECTION}] {name} must be true or "
                                f"false, not {value!r}")
        return Setting(value, f"{path}: [{SECTION}] {name}")
    return Setting(False, "default")


def require_commitment(flag: bool | None = None,
                       environ: Mapping[str, str] | None = None) -> Setting:
    """Whether deals no commitment backs are findings, and where that was decided."""
    return _bool_setting("require_commitment", REQUIRE_COMMITMENT_ENV, flag, environ)


def require_signatures(flag: bool | None = None,
                       environ: Mapping[str, str] | None = None) -> Setting:
    """Whether a log must be signed by a trusted key up to its end (docs/signing.md), and
    where that was decided. Requiring signatures also requires a commitment."""
    return _bool_setting("require_signatures", REQUIRE_SIGNATURES_ENV, flag, environ)


class KeysSetting(msgspec.Struct, frozen=True):
    """The trusted keys (files or directories) and where they were named; empty: none."""

    value: tuple[str, ...]
    source: str


def keys(given: tuple[str, ...] | list[str] = (),
         environ: Mapping[str, str] | None = None) -> KeysSetting:
    """The trusted public keys: ``--keys`` (repeatable), else ``BURACO_LOG_KEYS`` (paths
    separated by ``os.pathsep``), else ``keys`` in ``[audit]`` (a path or a list of paths)."""
    if given:
        return KeysSetting(tuple(given), "--keys")
    env = os.environ if environ is None else environ
    raw = env.get(KEYS_ENV)
    named = tuple(p for p in (raw or "").split(os.pathsep) if p.strip())
    if named:  # ":" names no path: as unset, not "no keys" over the config file's
        return KeysSetting(named, f"{KEYS_ENV}={raw}")
    found = _from_config("keys", env)
    if found is not None:
        value, path = found
        paths = [value] if isinstance(value, str) else value
        if not isinstance(paths, list) or not paths or not all(
                isinstance(p, str) and p for p in paths):
            raise SettingsError(f"{path}: [{SECTION}] keys must be a path or a list of paths, "
                                f"not {value!r}")
        base = os.path.dirname(os.path.abspath(path))  # relative to the config file
        return KeysSetting(tuple(os.path.join(base, p) for p in paths),
                           f"{path}: [{SECTION}] keys")
    return KeysSetting((), "default")
