"""`buraco-log view`: a match as one self-contained HTML replay page."""

from __future__ import annotations

import contextlib
import itertools
import os
import sys
import webbrowser
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Protocol

import typer

from buraco_log.errors import BuracoLogError, LogFormatError, ReplayError
from buraco_log.log import HEADER_SIZE
from buraco_log.outpaths import no_directory, written_in_place
from buraco_log.signing.check import Signing
from buraco_log.view import Banner, Mark, Page, page_for_log, write_page
from buraco_log.view.links import Rows, match_pages
from cli.common import (
    EXIT_USAGE,
    fail,
    from_stdin,
    guarded,
    refuse_input_as_output,
    rule_last,
)
from cli.paths import directory_name, named_path, special_file, why_missing
from cli.safetext import terminal_safe

if TYPE_CHECKING:
    from buraco_log.audit import Integrity, SigningOptions


def default_output(log: Path, seat: int | None) -> Path:
    """``match.blog`` -> ``match.html`` beside it (``match.seat1.html`` for a seat's copy)."""
    stem = log.name
    for suffix in (".jsonl", ".blog"):
        if stem.endswith(suffix):
            stem = stem[: -len(suffix)]
            break
    else:
        stem = log.stem or log.name
    return log.with_name(stem + ("" if seat is None else f".seat{seat}") + ".html")


def why_not_open(env: Mapping[str, str] = os.environ, platform: str = sys.platform
                 ) -> str | None:
    """Why ``--open`` must not start a browser here, or None when it may.

    Never in CI or under a test run (a browser there would hang the run or open on someone's
    desktop), never when BURACO_LOG_NO_BROWSER is set, and on X11/Wayland systems only with a
    display (a terminal browser would wait on a terminal nobody watches); $BROWSER names the
    browser to use, as Python's webbrowser reads it."""
    if _set(env, "BURACO_LOG_NO_BROWSER"):
        return "BURACO_LOG_NO_BROWSER is set"
    if _set(env, "CI"):
        return "running in CI"
    if env.get("PYTEST_CURRENT_TEST"):
        return "running under a test"
    if platform not in ("darwin", "win32") and not (env.get("DISPLAY")
                                                     or env.get("WAYLAND_DISPLAY")):
        return "no display"
    return None


_UNSET: frozenset[str] = frozenset({"", "0", "false", "no", "off"})


def _set(env: Mapping[str, str], name: str) -> bool:
    """Whether the switch ``name`` is on: any value but an empty one or a "no" that the
    other BURACO_LOG_* switches read as off (`BURACO_LOG_NO_BROWSER=0`, `CI=false` kept the
    browser closed, "is set")."""
    return env.get(name, "").strip().lower() not in _UNSET


def open_page(target: Path) -> None:
    """Open the written page in a web browser, or say on stderr why not and where it is."""
    uri = target.resolve().as_uri()
    why = why_not_open()
    if why is None and webbrowser.open(uri):
        return
    typer.echo(f"buraco-log: note: not opening a browser ({why or 'none found'}); "
               f"open {uri}", err=True)


MAX_PAGE_EVENTS = 100_000
"""The most events `view` puts on one page by default: a page of 100,000 events is about 14 MB
and opens in a few seconds; one of a million was 142 MB, 35 s and 2 GB of the browser's
memory to open (and 1.8 GB and 50 s of CPU to write)."""


def _more_events_than(path: Path, limit: int) -> bool:
    """Whether the log holds more than ``limit`` events, read no further than that (whatever
    the damage: the page's own read says what is wrong)."""
    from buraco_log.audit import LogStream

    stream = iter(LogStream(path))
    try:
        return sum(1 for _ in itertools.islice(stream, limit + 1)) > limit
    finally:
        close = getattr(stream, "close", None)
        if close is not None:
            close()  # the file, at once


@guarded
def view(
    path: Annotated[Path, typer.Argument(help="A match log (binary, or .jsonl).",
                                         show_default=False, parser=named_path)],
    output: Annotated[str | None, typer.Option(
        "--output", "-o", metavar="FILE", help="The page to write ('-': stdout). Default: the "
        "log's name with .html, beside it.", show_default=False)] = None,
    seat: Annotated[int | None, typer.Option(
        "--seat", min=0, help="A player's copy: only what this seat could see (no hidden "
        "card anywhere in the file).")] = None,
    at: Annotated[int | None, typer.Option(
        "--at", min=0, help="Open the page at this seq.")] = None,
    open_: Annotated[bool, typer.Option(
        "--open", help="Open the page in a web browser ($BROWSER, or the system's); not when "
        "BURACO_LOG_NO_BROWSER is set, in CI, or without a display.")] = False,
    ignore_integrity: Annotated[bool, typer.Option(
        "--ignore-integrity", help="Forensics: a log whose checksum or integrity chain fails "
        "is shown as far as its records decode, not only its intact part; the page's banner "
        "says where it failed (exit 1 all the same).")] = False,
    max_events: Annotated[int, typer.Option(
        "--max-events", min=1, metavar="N", help="Refuse a log of more events than this "
        "(exit 2, no page written): a page of a million events is 140 MB, which a browser "
        "takes half a minute and 2 GB to open.")] = MAX_PAGE_EVENTS,
    keys: Annotated[list[Path] | None, typer.Option(
        "--keys", help="The site's trusted public keys, as `audit --keys` takes them: the page "
        "says whether the signatures verify (without keys: not checked). Default: "
        "BURACO_LOG_KEYS, or [audit] keys in the config file.", show_default=False,
        parser=named_path)] = None,
    receipt: Annotated[list[Path] | None, typer.Option(
        "--receipt", help="A player's signed receipt (JSON; repeat the option), as `audit "
        "--receipt` takes it: the page says whether the log extends it. Needs --keys.",
        show_default=False, parser=named_path)] = None,
) -> None:
    """Write a self-contained HTML replay page of a match: step through every event, see the
    table, the melds, the pile and the score sheet. Works offline, makes no network request.

    A log that fails the audit opens at the last legal table with a banner naming the refused
    seq and rule; a damaged log shows its intact events and where the damage starts. Either
    way the page is written and the exit status is 1, as for every finding; with --at a seq
    before the illegal event, the page opens there and the exit status is 0, the event noted
    on stderr, as `replay --at` answers it (damage stays 1)."""
    if not path.exists():
        raise fail(f"{path}: {why_missing(path)}", EXIT_USAGE)
    if (special := special_file(path)) is not None:
        raise fail(f"{path}: {special}", EXIT_USAGE)
    if output == "":  # an unset variable: it said ".: is a directory; name the page's file"
        raise fail("--output '': an empty name; name the page's file (or '-' for stdout)",
                   EXIT_USAGE)
    if open_ and output is not None and (output == "-" or written_in_place(output)):
        # /dev/stdout, a FIFO: a stream, as -o - is (a browser was sent /dev/stdout)
        raise fail(f"--open needs a file to open; it cannot go with -o {output}", EXIT_USAGE)
    if output is None and from_stdin(path):  # beside a temporary file: lost at once
        raise fail("<stdin>: a log read from standard input has no name to put the page "
                   "beside: name the page with -o FILE (or -o - for standard output)",
                   EXIT_USAGE)
    if output is not None and (refusal := directory_name(output, "the page's file")):
        raise fail(refusal, EXIT_USAGE)
    refuse_input_as_output(output if output is not None else default_output(path, seat), path)
    signing = _signing_options(keys, receipt, output if output is not None
                               else default_output(path, seat))
    if _more_events_than(path, max_events):  # before the whole log is read and replayed
        raise fail(f"{path}: the log holds more than {max_events:,} events, too many for one "
                   "page (a browser needs about 35 s and 2 GB for a million); show the table "
                   "at any point with `buraco-log replay LOG --at SEQ` (or --hand N), or raise "
                   "the limit with --max-events N", EXIT_USAGE)
    from cli.signals import stopped_by, terminate_as_interrupt

    met: list[int] = []
    try:
        with terminate_as_interrupt() as met:  # SIGTERM killed it without a word
            if ignore_integrity:
                from buraco_log.view.salvaged import page_anyway

                page = page_anyway(path, seat=seat, at=at, signing=signing)
            else:
                page = page_for_log(path, seat=seat, at=at, signing=signing)
    except KeyboardInterrupt:
        how, status = stopped_by(met)
        raise fail(f"{path}: {how} while the page was built: no page was written",
                   status) from None
    except ReplayError as exc:  # --at past the end (2), or past an illegal event (1)
        raise fail(f"{path}: {exc.message}", exc.exit_status) from None
    except ValueError as exc:  # a seat the match does not have
        raise fail(f"{path}: {exc}", EXIT_USAGE) from None
    except LogFormatError as exc:  # not one event could be read: not a log (2), damaged (1)
        if exc.kind == "empty" or (exc.kind == "torn" and (exc.offset or 0) < HEADER_SIZE):
            # a header alone, or an empty file: a match not started (as `audit`, `replay`
            # say), not damage
            raise fail(f"{path}: the log holds no events yet (a match not started): no table "
                       "to show [log.empty]", EXIT_USAGE) from None
        raise fail(str(exc) if str(exc).startswith(str(path)) else f"{path}: {exc}",
                   exc.exit_status if exc.kind in ("damage", "torn") else EXIT_USAGE,
                   error=exc) from None  # error: the line ends with its rule
    for b in page.banners:  # the page opens anyway; say why it stops short, as replay does
        typer.echo(terminal_safe(f"buraco-log: note: {rule_last(f'{path}: {b.text}')}"),
                   err=True)
    html = page.html
    if output == "-":
        sys.stdout.write(html)
        sys.stdout.flush()
    else:
        target = Path(output) if output is not None else default_output(path, seat)
        if target.is_dir():
            raise fail(f"{target}: is a directory; name the page's file", EXIT_USAGE)
        write_page(target, html)
        typer.echo(terminal_safe(f"wrote {target} ({len(html.encode('utf-8')):,} bytes)"),
                   err=True)
        if open_:
            open_page(target)
    if _finding(page.banners, at):  # the page is written, but the log has a finding: exit
        # 1, as `show`, `replay` and `audit` do for it (a referee's script must not read it as
        # clean)
        raise typer.Exit(1)


def _signing_options(keys: Sequence[Path] | None, receipts: Sequence[Path] | None,
                     output: str | Path) -> SigningOptions:
    """The page's trusted keys and receipts, read as `audit` reads its --keys and --receipt
    (and their site settings); signatures are not required of a page (the page says what it
    finds either way). A key or receipt file named as the page is refused, not overwritten,
    as `audit --html` refuses it."""
    from buraco_log import audit
    from buraco_log.signing.keys import SigningError
    from cli.dispute_cmd import _refuse_evidence_as_page

    named_keys, named_receipts = [str(k) for k in keys or ()], [str(r) for r in receipts or ()]
    try:
        options = audit.signing_options(named_keys, named_receipts, False)
    except (audit.SettingsError, SigningError) as exc:
        raise fail(str(exc), EXIT_USAGE, error=exc) from None
    if str(output) != "-":  # the page is renamed over a receipt or key, as audit's --html
        _refuse_evidence_as_page(Path(output), named_receipts, named_keys, as_json=False)
    return options


def _finding(banners: Sequence[Banner], at: int | None) -> bool:
    """Whether the page's banners make its exit status 1. A seq asked for (``--at``) that the
    log holds before its first illegal event is answered, the banners noted, exit 0, as
    ``replay --at``, ``moves --at`` and ``explain --at`` answer it; the end (no ``--at``) stops
    short of that event, a finding. Damage is a finding either way: ``replay`` refuses a
    damaged log unless told to read it anyway."""
    return any(b.kind == "damaged" for b in banners) or (at is None and bool(banners))


def register(app: typer.Typer) -> None:
    """Add ``view`` to the top level of ``app``."""
    app.command("view")(view)


MATCH_PAGES = "matches"
"""The folder beside an HTML report that holds the pages of the matches it names."""


def report_pages(sections: Iterable[Rows], output: Path | None) -> dict[str, str]:
    """``report --format html -o FILE``: write the page of every match the report names whose
    log is still at its recorded path into ``matches/`` beside FILE; return the report's links
    (``source_path`` -> path relative to the report). On stdout there is no beside: no pages;
    nor for /dev/stdout, /dev/null or a FIFO (written in place), whose "beside" is /dev: as
    root, `-o /dev/stdout` made /dev/matches/ and its pages."""
    if output is None or written_in_place(output):
        return {}
    folder = output.parent / MATCH_PAGES
    folder.mkdir(exist_ok=True)
    links = match_pages(sections, folder)
    if not links:
        with contextlib.suppress(OSError):
            folder.rmdir()  # only if empty: nothing to link, nothing left behind
    return {src: f"{MATCH_PAGES}/{name}" for src, name in links.items()}


class _Finding(Protocol):
    @property
    def seq(self) -> int | None: ...
    @property
    def rule(self) -> str: ...
    @property
    def message(self) -> str: ...


def write_audit_page(target: Path, log: Path, findings: Sequence[_Finding],
                     signature: str | None = None) -> Page:
    """``audit --html``: the log's referee page, opened at the first finding that has a seq (a
    refused event or damage opens at the last table before it, as ``view`` does); each finding
    with a seq is marked at its event. ``signature``: the audit's line on the signatures
    (:func:`buraco_log.view.signature.status_line`; None: the page checks them without keys)."""
    seqs = [f.seq for f in findings if f.seq is not None]
    at = min(seqs) if seqs else None
    marks: dict[int, list[Mark]] = {}
    for f in findings:
        if f.seq is not None:
            marks.setdefault(f.seq, []).append(Mark("finding", f"[{f.rule}] {f.message}"))
    try:
        page = page_for_log(log, at=at, marks=marks, signature=signature)
    except ReplayError:  # the finding lies past the table's end (a refused event, damage)
        page = page_for_log(log, marks=marks, signature=signature)
    write_page(target, page.html)
    return page


def audit_html_usage(html: Path | None, paths: Sequence[Path], *, as_json: bool = False
                     ) -> None:
    """``audit --html FILE`` names one log (the page is that log's) and a file to write."""
    if html is None:
        return
    if str(html) == "-":  # it wrote a file named '-'
        raise fail("--html -: the audit's report is on standard output; name the page's file",
                   EXIT_USAGE, as_json=as_json)
    if len(paths) != 1 or paths[0].is_dir():
        raise fail("--html writes the page of one log: name one log file", EXIT_USAGE,
                   as_json=as_json)
    if html.is_dir():
        raise fail(f"{html}: is a directory; name the page's file", EXIT_USAGE, as_json=as_json)
    if not (html.parent or Path(".")).is_dir():  # said now, not after the audit's report
        raise fail(f"{html}: {no_directory(html.parent)}", EXIT_USAGE, as_json=as_json)
    refuse_input_as_output(html, paths[0], as_json=as_json)


class _Verdict(Protocol):
    @property
    def findings(self) -> Sequence[_Finding]: ...
    @property
    def signing(self) -> Signing: ...
    @property
    def events(self) -> int: ...
    @property
    def integrity(self) -> Integrity: ...


def audit_html(html: Path | None, log: Path, verdict: _Verdict) -> None:
    """Write the page ``audit --html`` asks for, and say on stderr where it opens."""
    if html is None:
        return
    if _more_events_than(log, MAX_PAGE_EVENTS):  # as `view` refuses it: 1.8 GB to write
        typer.echo(terminal_safe(
            f"buraco-log: note: {log}: no page written (the log holds more than "
            f"{MAX_PAGE_EVENTS:,} events, too many for one page; `buraco-log view LOG "
            "--max-events N` writes it all the same)"), err=True)
        return
    try:
        page = write_audit_page(html, log, verdict.findings, _audit_signature(log, verdict))
    except BuracoLogError as exc:  # nothing of the log could be read: no table to draw
        typer.echo(terminal_safe(f"buraco-log: note: {log}: no page written ({exc})"), err=True)
        return
    typer.echo(terminal_safe(f"wrote {html} (opens at seq {page.start})"), err=True)


def _audit_signature(log: Path, verdict: _Verdict) -> str:
    """The page's signing line from the audit's own verdict (its keys, its receipts): the
    page said nothing of the signatures, and a verified log read as an unsigned one."""
    from buraco_log.view.signature import status_line

    found = [f for f in verdict.findings if f.rule.startswith("sign.")]
    # the events read run from seq 0 without a gap (the reader refuses one as damage)
    return status_line(verdict.signing, found, verdict.events - 1 if verdict.events else None,
                       whole=verdict.integrity.status in ("sealed", "unsealed"))
