"""Site settings of the audit, so that a site which commits its deals can make requiring a
commitment its default (docs/audit-settings.md names them; the archive reads the same name).

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
import tomllib
from collections.abc import Mapping

import msgspec

from buraco_log.errors import BuracoLogError

REQUIRE_COMMITMENT_ENV = "BURACO_LOG_REQUIRE_COMMITMENT"
CONFIG_ENV = "BURACO_LOG_CONFIG"
SITE_CONFIG = "/etc/buraco-log/config.toml"
SECTION = "audit"
SETTINGS = ("require_commitment",)
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
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise SettingsError(f"{path}: the config file is not a regular file")
        data = os.read(fd, _MAX_CONFIG + 1)
    finally:
        os.close(fd)
    if len(data) > _MAX_CONFIG:
        raise SettingsError(f"{path}: the config file is larger than {_MAX_CONFIG} bytes")
    try:
        return tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise SettingsError(f"{path}: not a valid TOML config file: {exc}") from None


def _flag(text: str, where: str) -> bool:
    low = text.strip().lower()
    if low in _TRUE:
        return True
    if low in _FALSE:
        return False
    raise SettingsError(f"{where}: {text!r} is not one of 1/0, true/false, yes/no, on/off")


def require_commitment(flag: bool | None = None,
                       environ: Mapping[str, str] | None = None) -> Setting:
    """Whether deals no commitment backs are findings, and where that was decided."""
    if flag is not None:
        return Setting(flag, "--require-commitment" if flag else "--no-require-commitment")
    env = os.environ if environ is None else environ
    raw = env.get(REQUIRE_COMMITMENT_ENV)
    if raw is not None and raw.strip():
        return Setting(_flag(raw, REQUIRE_COMMITMENT_ENV), f"{REQUIRE_COMMITMENT_ENV}={raw}")
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
        if "require_commitment" in section:
            value = section["require_commitment"]
            if not isinstance(value, bool):
                raise SettingsError(f"{path}: [{SECTION}] require_commitment must be true or "
                                    f"false, not {value!r}")
            return Setting(value, f"{path}: [{SECTION}] require_commitment")
    return Setting(False, "default")
