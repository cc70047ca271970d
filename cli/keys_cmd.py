"""`buraco-log keys new`: a site's signing key pair (docs/signing.md)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated

import typer

from buraco_log.outpaths import dangling_link, rename_target
from cli.common import (
    CONTEXT,
    EXIT_USAGE,
    STDOUT_NAME,
    Format,
    drop_stdout,
    emit_json,
    fail,
    guarded,
)
from cli.paths import named_path
from cli.safetext import terminal_safe

PASSPHRASE_ENV = "BURACO_LOG_KEY_PASSPHRASE"

app = typer.Typer(help="Site signing keys: make a key pair to sign match logs with.",
                  context_settings=CONTEXT)


MAX_PASSPHRASE_FILE = 64 * 1024


def _read_small(path: Path, as_json: bool = False) -> bytes:
    """A passphrase file's bytes, read as every key file is (signing.keys.read_small): a
    regular file only (a FIFO would wait for a writer, a device such as /dev/zero never ends),
    opened without blocking, at most 64 KiB; else one line naming the file (exit 2)."""
    from buraco_log.signing.keys import SigningError, read_small

    try:
        return read_small(path, "a passphrase file", MAX_PASSPHRASE_FILE)
    except SigningError as exc:
        raise fail(str(exc), EXIT_USAGE, as_json=as_json) from None


def _has_terminal() -> bool:
    """Can the prompt read from the controlling terminal (as getpass does, echo off)?"""
    try:
        os.close(os.open("/dev/tty", os.O_RDWR | os.O_NOCTTY))
    except OSError:
        return False
    return True


def _piped_passphrase(as_json: bool = False) -> bytes:
    """The passphrase and its confirmation, a line each, from standard input when there is no
    terminal, asked again (as the terminal prompt does) while a line is empty or the two
    differ. Each line is read bounded: getpass's own fallback read a stream without line ends
    (/dev/zero) into memory without end."""
    if sys.stdin is None:  # started with standard input closed (`<&-`, a daemon, cron): it
        # was an internal error, the prompt written before it
        raise fail("--passphrase: no terminal to ask on, and standard input is closed: give "
                   f"--passphrase-file FILE or set {PASSPHRASE_ENV}", EXIT_USAGE,
                   as_json=as_json)

    def line(what: str) -> bytes:
        typer.echo(f"{what}: ", err=True, nl=False)
        got = sys.stdin.buffer.readline(MAX_PASSPHRASE_FILE + 1)
        if not got or len(got) > MAX_PASSPHRASE_FILE:
            typer.echo("", err=True)  # the error's line is its own, not the prompt's
        if not got:
            raise EOFError
        if len(got) > MAX_PASSPHRASE_FILE:
            raise fail(f"--passphrase: a line of standard input longer than "
                       f"{MAX_PASSPHRASE_FILE // 1024} KiB is no passphrase", EXIT_USAGE,
                       as_json=as_json)
        return got.rstrip(b"\n").rstrip(b"\r")

    while True:
        first = line("Passphrase")
        if not first:
            continue
        if line("Repeat for confirmation") == first:
            typer.echo("", err=True)
            return first
        typer.echo("Error: The two entered values do not match.", err=True)


def _passphrase(prompt: bool, passphrase_file: Path | None, as_json: bool = False
                ) -> bytes | None:
    """The passphrase asked for (None: none); ``as_json``: a refusal is a JSON error on
    stdout too, as every error of ``-f json`` is."""
    if prompt and passphrase_file is not None:
        raise fail("use either --passphrase or --passphrase-file, not both", EXIT_USAGE,
                   as_json=as_json)
    if passphrase_file is not None:
        # the first line, as the help says (the whole file made a passphrase with newlines)
        text = _read_small(passphrase_file, as_json).split(b"\n", 1)[0].rstrip(b"\r")
        if not text:  # asked for encryption: an empty line must not give a plain key
            raise fail(f"{passphrase_file}: its first line is empty: no passphrase to encrypt "
                       "the key with", EXIT_USAGE, as_json=as_json)
    elif prompt:
        try:
            text = (typer.prompt("Passphrase", hide_input=True, confirmation_prompt=True,
                                 err=True).encode() if _has_terminal()
                    else _piped_passphrase(as_json))
        except (typer.Abort, EOFError):  # input ended before two equal passphrases came
            raise fail("--passphrase: no passphrase was entered twice alike before the input "
                       f"ended (programs give --passphrase-file or {PASSPHRASE_ENV})",
                       EXIT_USAGE, as_json=as_json) from None
    else:
        # the bytes as given: a passphrase that is not UTF-8 is still a passphrase
        text = os.fsencode(os.environ.get(PASSPHRASE_ENV, ""))
    return text or None


@app.command("new")
@guarded
def new(
    name: Annotated[str, typer.Argument(help="The key's name: writes NAME.key and NAME.pub.",
                                        show_default=False)],
    directory: Annotated[Path, typer.Option("--dir", "-d", help="Where to write.",
                                            parser=named_path)] = Path("."),
    passphrase: Annotated[bool, typer.Option(
        "--passphrase", help="Ask for a passphrase that encrypts the private key (or set "
        f"{PASSPHRASE_ENV}).")] = False,
    passphrase_file: Annotated[Path | None, typer.Option(
        "--passphrase-file", help="Read the passphrase from this file's first line.",
        show_default=False, parser=named_path)] = None,
    valid_from: Annotated[str | None, typer.Option(
        "--valid-from", help="ISO 8601 time from which matches may be signed with the key.",
        show_default=False)] = None,
    valid_until: Annotated[str | None, typer.Option(
        "--valid-until", help="ISO 8601 time the key retires: matches that start later "
        "are not trusted with it.", show_default=False)] = None,
    format: Annotated[Format, typer.Option(
        "--format", "-f", help="table for people, json for programs.")] = Format.table,
    overwrite: Annotated[bool, typer.Option(
        "--overwrite", help="Replace an existing NAME.key and NAME.pub (the old key is lost: "
        "logs it signed verify only with its NAME.pub kept elsewhere).")] = False,
    force: Annotated[bool, typer.Option(
        "--force", hidden=True, help="--overwrite.")] = False,
) -> None:
    """Make an Ed25519 key pair: NAME.key (private, mode 0600, encrypted with a passphrase if
    given) and NAME.pub (what the site publishes). Never overwrites a key without --overwrite.

    --dir is made (mode 0700, and said) when its parent exists; a missing parent is refused,
    so that a typo does not put a private key somewhere unlooked-for."""
    from buraco_log.signing.keys import clean_leftovers, write_key_pair

    if ("/" in name or name in ("", ".", "..") or name.startswith(".")
            or not name.isprintable()):  # a newline or an escape in a file name misleads
        # named as every error names a file (`k\xff`, not Python's `'k\udcff'`), and why
        raise fail(f"{name or repr(name)}: a key name is a plain file name: printable, "
                   "no '/', not starting with '.'", EXIT_USAGE, as_json=format is Format.json)
    if directory.is_symlink() and not directory.exists():  # it said "DIR/NAME.key: No such
        # file or directory", naming a file never asked for: a private key is not made
        # through a link to nowhere, as it is not under a missing parent
        try:
            rename_target(directory)
        except OSError as exc:  # a loop
            raise fail(f"{directory}: {exc.strerror}", EXIT_USAGE,
                       as_json=format is Format.json) from None
        raise fail(f"{directory}: {dangling_link(directory)}; --dir names an existing "
                   "directory, or a new one in an existing directory", EXIT_USAGE,
                   as_json=format is Format.json)
    secret = _passphrase(passphrase, passphrase_file, format is Format.json)
    # before the pair is made or refused: any later `keys new` there removes them
    _said_removed(clean_leftovers(str(directory)) if directory.is_dir() else (), directory)
    files = write_key_pair(directory, name, passphrase=secret, valid_from=valid_from,
                           valid_until=valid_until,
                           overwrite=overwrite or force)  # --force: its old name
    _said_removed(files.removed_leftovers, directory)
    try:
        if format is Format.json:
            emit_json(files)
            sys.stdout.flush()
            return
        typer.echo(terminal_safe(f"key {files.key_id}: private {files.private} (mode 0600"
                                 + (", encrypted" if files.encrypted else ", NOT encrypted")
                                 + f"), public {files.public}"
                                 + (f"; made the directory {files.made_directory} (mode 0700)"
                                    if files.made_directory else "")))
        sys.stdout.flush()
    except BrokenPipeError:
        raise  # the reader left (`| head`): quiet, as every command
    except OSError as exc:  # stdout full or closed: the pair is made all the same, and a
        # program that took exit 1 for "no key" met "already exists" when it tried again
        drop_stdout()
        raise fail(f"{exc.filename or STDOUT_NAME}: {exc.strerror or exc}; the key pair was "
                   f"made all the same: key {files.key_id}, {files.private} and "
                   f"{files.public}") from None


def _said_removed(removed: tuple[str, ...], directory: Path) -> None:
    """One line on stderr for the temporaries removed: a copy of a secret key lay there."""
    if not removed:
        return
    n = len(removed)
    typer.echo(terminal_safe(
        f"buraco-log: note: removed {n} temporary file{'s' if n != 1 else ''} an interrupted "
        f"`keys new` left in {directory} (a private key may have been in "
        f"{'them' if n != 1 else 'it'}): " + ", ".join(os.path.basename(p) for p in removed)),
        err=True)


def register(root: typer.Typer) -> None:
    """Add the ``keys`` group to ``root``."""
    root.add_typer(app, name="keys")
