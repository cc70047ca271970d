"""`buraco-log review`: every decision of one seat, judged by the searching player."""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Sequence
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import msgspec
import typer

from buraco_log.errors import IllegalMoveError, LogFormatError, ReplayError
from buraco_log.events import AnyEvent, MatchStarted
from buraco_log.expert import DEFAULT_BUDGET, Budget, parse_budget
from buraco_log.outpaths import no_directory
from buraco_log.review import (
    DEFAULT_THRESHOLD,
    Review,
    review_events,
    review_page,
    safe_or_none,
    to_json,
    to_text,
)
from buraco_log.ruleids import describe
from cli.common import (
    EXIT_USAGE,
    fail,
    guarded,
    progress_shown,
    refuse_input_as_output,
    rule_last,
)
from cli.paths import directory_name, named_path, special_file, why_missing
from cli.safetext import terminal_safe, terminal_safe_lines
from cli.simulate_cmd import check_seed

if TYPE_CHECKING:
    from buraco_log.audit import Integrity


class ReviewFormat(StrEnum):
    text = "text"
    json = "json"
    html = "html"
    table = "table"  # the word every other command uses for text: the same


@guarded
def review(
    path: Annotated[Path, typer.Argument(help="A match log (binary, or .jsonl).",
                                         show_default=False, parser=named_path)],
    seat: Annotated[int, typer.Option("--seat", min=0, help="The seat to review.",
                                      show_default=False)],
    budget: Annotated[str, typer.Option(
        "--budget", help="Search per decision: SAMPLES, optionally followed by xCANDIDATES, "
        "rROUNDS and /MSms, e.g. 32, 96x5, 96x5r0 (play out to the end of the hand); a /MSms "
        "time cap makes the review not reproducible. At most 50 times the default's search "
        "(samples x candidates x rounds).")] = DEFAULT_BUDGET.text(),
    seed: Annotated[str, typer.Option("--seed", help="Seed: same seed and budget, same "
                                      "review.")] = "0",
    threshold: Annotated[float, typer.Option(
        "--threshold", help="Hand points (0 or more) a move must cost to be flagged (and its "
        "95% interval above 0).")] = DEFAULT_THRESHOLD,
    format: Annotated[ReviewFormat, typer.Option(
        "--format", "-f", help="text (or table) for people, json for programs, html: the "
        "match viewer's page with the review in it.")] = ReviewFormat.text,
    output: Annotated[str | None, typer.Option(
        "--output", "-o", metavar="FILE", help="Write here instead of stdout ('-': stdout).",
        show_default=False)] = None,
    jobs: Annotated[int, typer.Option("--jobs", "-j", min=0, help="Worker processes (0: one "
                                      "per CPU, at most 8).")] = 1,
    partial: Annotated[bool, typer.Option(
        "--partial", help="A log with an illegal event or damaged bytes: review the moves "
        "before the problem (and note it) instead of refusing the log; the exit status is "
        "still 1, as for every finding.")] = False,
    mistakes_only: Annotated[bool, typer.Option(
        "--mistakes-only", help="Text: list only the flagged moves.")] = False,
    progress: Annotated[bool | None, typer.Option(
        "--progress/--no-progress",
        help="Progress on stderr: a bar on a terminal, plain lines elsewhere "
        "(default: only when stderr is a terminal, not TERM=dumb).")] = None,
) -> None:
    """Review every decision one seat made in a match: for each draw or pile pickup, meld,
    lay-off and discard, the move played, the best alternative the expert found, and the
    estimated cost of the move played in hand points with a 95% interval (half the samples
    choose the best move, the other half measure the cost). Mistakes above the threshold are
    flagged and summed per hand.

    Each decision is searched from what that seat could see at the time, never the hidden
    cards. The output states its seed and budget; the same seed and budget give the same review,
    whatever --jobs is. --format html writes the match viewer's page with the review in it."""
    js = format is ReviewFormat.json
    if mistakes_only and format in (ReviewFormat.json, ReviewFormat.html):
        # said before the search: it was ignored, and every move came out as if not asked
        raise fail(f"--mistakes-only lists the text review's flagged moves; --format "
                   f"{format.value} holds every move"
                   + (' (each with "flagged")' if js else "") + ": drop one of them",
                   EXIT_USAGE, as_json=js)
    if not path.exists():
        raise fail(f"{path}: {why_missing(path)}", EXIT_USAGE, as_json=js)
    if (special := special_file(path)) is not None:
        raise fail(f"{path}: {special}", EXIT_USAGE, as_json=js)
    # a bad output is said before the search, not after minutes of it
    if output == "":  # an unset variable: it said ": is a directory; name the file"
        raise fail("--output '': an empty name; name the file (or '-' for stdout)", EXIT_USAGE,
                   as_json=js)
    if output is not None and (refusal := directory_name(output)):
        raise fail(refusal, EXIT_USAGE, as_json=js)
    refuse_input_as_output(output, path, as_json=js)
    if output not in (None, "-") and Path(output).is_dir():
        raise fail(f"{output}: is a directory; name the file", EXIT_USAGE, as_json=js)
    if output not in (None, "-") and not (Path(output).parent or Path(".")).is_dir():
        raise fail(f"{output}: {no_directory(Path(output).parent)}", EXIT_USAGE,
                   as_json=js)  # said now, not after the search (the page writer says so too)
    check_seed(seed, as_json=js)  # bytes that are not UTF-8 made an internal error
    try:
        b = parse_budget(budget)
    except ValueError as exc:
        raise fail(f"--budget: {exc}", EXIT_USAGE, as_json=js) from None
    # checked here, not by typer's min=0: nan failed "greater than or equal to 0", and inf
    # made the JSON review say Infinity (not JSON)
    if not (math.isfinite(threshold) and threshold >= 0):
        raise fail(f"--threshold {threshold:g}: out of range; give hand points, a finite "
                   "number 0 or more", EXIT_USAGE, as_json=js)
    threshold += 0.0  # -0 is 0: the JSON review said "threshold": -0.0
    from buraco_log.audit import not_started, read_log

    events, integ = read_log(path)
    if not_started(events, integ):
        # a header and no event, or an empty file (a header cut short while it was created):
        # a match not started, as every command says (it said "not a log", then "damaged")
        raise fail(f"{path}: the log holds no events yet (a match not started) [log.empty]: "
                   "no decision to review", EXIT_USAGE, as_json=js)
    if (integ.status in ("broken", "torn") and not events
            and not (integ.kind == "header" and not integ.offset)):  # damaged, not "not a log"
        raise fail(f"{path}, {_where(integ, path)}: the log is damaged before its first event "
                   f"({integ.kind}: {integ.message}): no event is intact, nothing to review",
                   as_json=js, error=_damage_error(integ, path))
    if integ.status == "unreadable" or not events:
        what = f" ({integ.message})" if integ.message else ""
        # a FIFO or device was never opened: no byte of it was read to name
        place = "" if integ.status == "unreadable" else f", byte {integ.offset or 0}"
        rule = f" [log.{integ.kind}]" if integ.kind else ""  # the rule, as `show` names it
        raise fail(f"{path}{place}: not a log: no event could be read{what}{rule}", EXIT_USAGE,
                   as_json=js)
    damaged = integ.status in ("broken", "torn")
    if damaged and not partial:
        raise fail(f"{path}: the log is damaged at {_where(integ, path)} ({integ.kind}: "
                   f"{_words(integ, seat)}); --partial reviews the {len(events)} events read "
                   "intact", as_json=js, error=_damage_error(integ, path, seat))
    if not isinstance(events[0], MatchStarted):  # it said "the match has seats 0 to -1"
        raise fail(f"{path}: seq 0 is illegal [match.not_started]: the log must open with "
                   f"MatchStarted, not {type(events[0]).__name__}: nothing to review",
                   as_json=js)
    players = len(events[0].players)
    tiles = events[0].rules.rendering == "tiles"  # Burako's rules are said in tiles
    if players == 0:
        raise fail(f"{path}: seq 0: the match start names no player: nothing to review",
                   as_json=js)
    if seat >= players:
        raise fail(f"{path}: --seat {seat}: the match has seats 0 to {players - 1}", EXIT_USAGE,
                   as_json=js)
    jobs = jobs or min(os.cpu_count() or 1, 8)
    show = progress_shown() if progress is None else progress
    from concurrent.futures.process import BrokenProcessPool  # here: multiprocessing, which

    from cli.signals import stopped_by, terminate_as_interrupt  # `--help` need not load

    met: list[int] = []
    try:
        # SIGTERM (kill, timeout) ends the search as Ctrl-C does, in one line: it killed the
        # process without a word
        with terminate_as_interrupt() as met:
            if show:
                result = _with_progress(events, seat, b, seed, threshold, jobs, partial)
            else:
                result = review_events(events, seat, budget=b, seed=seed, threshold=threshold,
                                       jobs=jobs, partial=partial, on_no_pool=_no_pool)
    except KeyboardInterrupt:
        how, status = stopped_by(met)
        raise fail(f"{path}: {how} during the search: no review was written", status,
                   as_json=js) from None
    except LogFormatError as exc:
        raise fail(f"{path}: {exc}", EXIT_USAGE, as_json=js) from None
    except BrokenProcessPool:  # a worker killed (the OOM killer, kill -9): not a defect
        raise fail(f"{path}: a worker process of the search ended abruptly (killed, or out of "
                   "memory): no review was written; --jobs 1 searches in this process",
                   as_json=js) from None
    except IllegalMoveError as exc:  # the rule, not the explanation: it names hidden cards
        raise fail(f"{path}: seq {exc.seq} is illegal [{exc.rule}]: "
                   f"{describe(exc.rule, tiles=tiles).rstrip('.')}; --partial reviews the "
                   "moves before it",
                   as_json=js, error=exc) from None
    if damaged and result.note is None:
        # the review itself says it is partial: its JSON said "note": null and its text
        # nothing, so a file handed on read as the review of the whole match
        result = msgspec.structs.replace(result, note=_damage_note(integ, path, len(events)))
    if format is ReviewFormat.html:
        from buraco_log.view import damage_banner, damage_mark

        # the page says where the review stops, as view's does; a seat's copy
        banner = damage_banner(integ, seat=seat)
        # and so does the table the reader steps to, out of sight of the banner
        marks = damage_mark(None, events[-1].seq, integ, "The review stops here.",
                            seat=seat) if banner else None
        try:
            text = review_page(events, result, banners=(banner,) if banner else (),
                               marks=marks)
        except ReplayError as exc:  # --partial, seq 0 illegal: the page has no table to show
            raise fail(f"{path}: {exc.message}", exc.exit_status, as_json=js) from None
    elif format is ReviewFormat.json:
        import json

        text = json.dumps(to_json(result), indent=2, sort_keys=True) + "\n"
    else:
        # the texts from the log escaped before they are laid out: a newline in a name
        # would otherwise start a line of its own. Not the seed: the header shows it as a
        # Python literal, escaped already (escaped twice it said 'a\\x0ab' for "a", newline, "b")
        safe = msgspec.structs.replace(
            result, match_id=safe_or_none(result.match_id), rules=safe_or_none(result.rules),
            player=safe_or_none(result.player),  # blanks are no name: "(\\x09, side 0)"
            note=None if result.note is None else terminal_safe(result.note))
        text = terminal_safe_lines(to_text(safe, all_moves=not mistakes_only))
    if output in (None, "-"):
        sys.stdout.write(text)
        sys.stdout.flush()
    else:
        target = Path(output)
        from buraco_log.view import write_page

        write_page(target, text)
        typer.echo(terminal_safe(f"wrote {target} ({result.decisions} decisions, "
                                 f"{result.mistakes} mistakes)"), err=True)
    # --partial: the review of what could be read, and a note of where it stops.
    if result.note:
        typer.echo(terminal_safe(f"buraco-log: note: {rule_last(f'{path}: {result.note}')}"),
                   err=True)
    if damaged and result.note != _damage_note(integ, path, len(events)):
        typer.echo(terminal_safe(f"buraco-log: note: {path}: "
                                 f"{_damage_note(integ, path, len(events))}"), err=True)
    if result.note or damaged:
        # written, but the log has a finding: exit 1, as `view`, `replay` and `audit` do, so
        # that `review --partial LOG && echo clean` never says clean of a damaged log
        raise typer.Exit(1)


def _damage_note(integ: Integrity, path: Path, intact: int) -> str:
    """Where a damaged log's review stops, in the review and on stderr."""
    return (f"the log is damaged at {_where(integ, path)} ({integ.kind}): the review covers "
            f"the {intact} events read intact")


def _words(integ: Integrity, seat: int) -> str:
    """The reader's words on the damage, as a seat's review may say them: not where they may
    quote the damaged event (a JSON line's ``["8d"] is not a card``: a card another seat
    drew), as the review names an illegal event's rule, not its cards."""
    from buraco_log.view import said_on_a_seats_page

    if said_on_a_seats_page(integ, seat):
        return integ.message or "damaged"
    return "what was read there is left out: it may name a card this seat did not see"


def _damage_error(integ: Integrity, path: Path, seat: int | None = None) -> LogFormatError:
    """The damage as the log reader's error, for the refusal's line and JSON object: its rule
    (``log.chain``), byte offset and seq, as `replay` and `moves` give them (the line had no
    rule, and the JSON error no rule, offset or seq)."""
    line = integ.record if integ.format == "jsonl" else None
    offset = integ.offset
    if offset is None and line is not None:
        offset = _line_offset(path, line)
    said = integ.message or "damaged" if seat is None else _words(integ, seat)
    return LogFormatError(said, path=str(path), offset=offset, line=line,
                          seq=integ.seq, kind=integ.kind or "damage")


def _where(integ: Integrity, path: Path) -> str:
    """Where the damage starts: the byte offset, the line of a JSON Lines log (whose reader
    gives no offset: it said "byte None"), and the first seq not read."""
    offset = integ.offset
    line = integ.record if integ.format == "jsonl" else None
    if offset is None and line is not None:
        offset = _line_offset(path, line)
    parts = [f"byte {offset if offset is not None else 0}"]
    if line is not None:
        parts.append(f"line {line}")
    if integ.seq is not None:
        parts.append(f"seq {integ.seq}")
    return ", ".join(parts)


def _line_offset(path: Path, line: int) -> int | None:
    """The byte offset at which line ``line`` (from 1) of the file starts (read in blocks: a
    line of a gigabyte was read whole into memory)."""
    from buraco_log.jsonl import line_start

    return line_start(path, line)


def _with_progress(events: Sequence[AnyEvent], seat: int, b: Budget, seed: str,
                   threshold: float, jobs: int, partial: bool) -> Review:
    from cli.progress import progress

    with progress("review", "decisions", None) as update:
        return review_events(events, seat, budget=b, seed=seed, threshold=threshold,
                             jobs=jobs, progress=update, partial=partial, on_no_pool=_no_pool)


def register(app: typer.Typer) -> None:
    """Add ``review`` to the top level of ``app``."""
    app.command("review")(review)


def _no_pool(exc: OSError) -> None:
    """Said when ``-j N``'s workers cannot be started (``ulimit -n``, ``ulimit -u``)."""
    typer.echo(f"buraco-log: note: worker processes could not be started ({exc.strerror or exc}"
               "): the decisions are searched in this process, as with -j 1", err=True)
