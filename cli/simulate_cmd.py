"""`buraco-log simulate`: bots play complete matches, written as sealed logs."""

from __future__ import annotations

import os
import time
from collections import Counter
from pathlib import Path
from typing import Annotated, Any

import typer

from buraco_log import log
from buraco_log.errors import RulesError
from buraco_log.outpaths import dangling_link, no_directory, rename_target
from buraco_log.rules import PRESETS, Rules
from buraco_log.simulate import (
    MatchSummary,
    check_bots,
    match_file,
    seat_bots,
    simulate_many,
)
from cli.common import (
    EXIT_USAGE,
    Format,
    OutAlias,
    emit_json,
    fail,
    guarded,
    progress_shown,
)
from cli.paths import not_a_file, plural
from cli.rules_cmd import load_rules
from cli.safetext import terminal_safe

MAX_MATCHES = 1_000_000
"""Most matches one run makes (days of work): a larger count is a typo, refused at once
rather than stuck checking that many file names before the first match."""


RulesOpt = Annotated[str, typer.Option(
    "--rules", help="Rules preset, or a house-rules TOML file.",
    autocompletion=lambda: list(PRESETS))]


def check_players(r: Rules, players: int, *, as_json: bool = False) -> None:
    """``--players N`` must be a count the rules seat."""
    if players not in r.player_counts:
        allowed = "/".join(map(str, r.player_counts))
        raise fail(f"--players {players}: {r.name} is played by {allowed}", EXIT_USAGE,
                   as_json=as_json)


def check_file_names(r: Rules, option: str, players: int, matches: int, *,
                     as_json: bool = False, first: int = 0) -> None:
    """The rules' name must make file names (a name of 100 CJK characters is 319 bytes with
    the suffix: it was refused as a data error, exit 1, naming no option)."""
    try:
        match_file(r, players, first + max(matches - 1, 0))
    except RulesError as exc:
        raise fail(f"--rules {option}: {exc}", EXIT_USAGE, as_json=as_json, error=exc) from None


def _log_names_in(out: Path, r: Rules, players: int, matches: int, first: int = 0) -> list[str]:
    """The names in ``out`` that this run would write (matches ``first`` on), in match order:
    the directory listed once (a million matches each looked up took 6 s before the first
    match began)."""
    if not out.is_dir():
        return []
    prefix = match_file(r, players, 0).removesuffix("000000.blog")
    found: dict[int, str] = {}
    with os.scandir(out) as entries:
        for entry in entries:
            digits = entry.name.removeprefix(prefix).removesuffix(".blog")
            if (entry.name.startswith(prefix) and digits.isascii() and digits.isdigit()
                    and first <= int(digits) < first + matches
                    and entry.name == match_file(r, players, int(digits))):
                found[int(digits)] = entry.name
    return [found[i] for i in sorted(found)]




def check_seed(seed: str, *, as_json: bool = False) -> None:
    """``--seed`` must be text: bytes that are not UTF-8 (a surrogate in the argument) made an
    internal error once the seed was hashed or written into the log."""
    try:
        seed.encode("utf-8")
    except UnicodeEncodeError:
        shown = seed.encode("utf-8", "surrogateescape").decode("ascii", "backslashreplace")
        raise fail(f"--seed {shown}: not UTF-8 text; give the seed as text", EXIT_USAGE,
                   as_json=as_json) from None


@guarded
def simulate(
    rules: RulesOpt = "classic",
    players: Annotated[int, typer.Option("--players", help="Number of players.")] = 2,
    matches: Annotated[int, typer.Option("--matches", help="How many matches.", min=1,
                                         max=MAX_MATCHES)] = 1,
    index: Annotated[int, typer.Option(
        "--index", min=0, max=MAX_MATCHES - 1,
        help="The first match's index in the batch: --index 137 remakes match 137 of a batch "
        "made with the same seed, rules, players and bots, the same bytes.")] = 0,
    seed: Annotated[str, typer.Option("--seed", help="Seed: same seed, same bytes.")] = "0",
    output: Annotated[str, typer.Option("--output", "-o", metavar="DIR",
                                        help="The directory the logs go to.")] = "sim",
    bot: Annotated[
        list[str] | None,
        typer.Option(
            "--bot",
            help="heuristic, random or expert (expert:SAMPLES for its search budget); repeat to "
            "seat different bots (repeated round the table). Default: heuristic at every seat.",
        ),
    ] = None,
    jobs: Annotated[int, typer.Option("--jobs", "-j", min=0, help="Worker processes (0: one "
                                      "per CPU, at most 8).")] = 0,
    progress: Annotated[
        bool | None,
        typer.Option(
            "--progress/--no-progress",
            help="Progress on stderr: a bar on a terminal, plain lines elsewhere "
            "(default: only when stderr is a terminal, not TERM=dumb).",
        ),
    ] = None,
    format: Annotated[Format, typer.Option("--format", "-f",
                                           help="table for people, json for programs.")
                      ] = Format.table,
    overwrite: Annotated[bool, typer.Option(
        "--overwrite", help="Replace logs of the same names already in the directory.")] = False,
    output_alias: OutAlias = None,
) -> None:
    """Simulate complete matches with bots and write each as a sealed log in the output directory.

    The deals are provably fair (committed seeds, revealed at the end) and every move is
    checked by the rules engine. The same arguments give the same files, whatever --jobs is.
    """
    js = format is Format.json
    output = output if output_alias is None else output_alias
    check_seed(seed, as_json=js)
    # the rules are the user's argument: a bad one is a usage error (exit 2)
    r = load_rules(rules, option="--rules", as_json=js)
    names = tuple(bot or ("heuristic",))
    for name in sorted(set(names)):
        try:
            check_bots((name,))  # unknown, or a time cap (the same seed, other bytes)
        except ValueError as exc:
            raise fail(f"--bot {name}: {exc}", EXIT_USAGE, as_json=js) from None
    check_players(r, players, as_json=js)
    check_file_names(r, rules, players, matches, as_json=js, first=index)
    if not output:  # an unset variable: Path("") is ".", and the logs went into the cwd
        raise fail("--output '': an empty name; name the directory the logs go to",
                   EXIT_USAGE, as_json=js)
    out = Path(output)
    if str(out) == "-":  # many files: no standard output to hold them
        raise fail("--output -: simulate writes one log per match into a directory; name the "
                   "directory", EXIT_USAGE, as_json=js)
    if out.exists() and not out.is_dir():
        raise fail(f"{out}: exists and is not a directory; --output names the directory the "
                   "logs go to", EXIT_USAGE, as_json=js)
    if out.is_symlink() and not out.exists():  # a loop of links, or a link to nothing: it
        # said "File exists", exit 1, naming neither
        try:
            target = rename_target(out)
        except OSError as exc:
            raise fail(f"{out}: {exc.strerror}", EXIT_USAGE, as_json=js) from None
        if not os.path.lexists(target.parent):  # made as a directory is, through the link
            raise fail(f"{out}: {dangling_link(out)}; {no_directory(target.parent)}",
                       EXIT_USAGE, as_json=js)
        try:  # the directory it names, made, as a link to a file it names is written
            target.mkdir()
        except OSError as exc:
            raise fail(f"{out}: {exc.strerror} (making {target}, which it names)", EXIT_USAGE,
                       as_json=js) from None
    if not os.path.lexists(out):  # made with its parents: one of them a file said "Not a
        # directory" in the system's words, naming none
        above = next((p for p in out.absolute().parents if os.path.lexists(p)), None)
        if above is not None and not above.is_dir():
            shown = next((p for p in out.parents if p.absolute() == above), above)
            raise fail(f"{out}: {no_directory(shown)}", EXIT_USAGE, as_json=js)
    names_there = _log_names_in(out, r, players, matches, index)
    if overwrite:  # a directory under a log's name is not replaced: os.replace said
        # "LOG.tmp: Is a directory", naming the temporary file and not the directory; nor a
        # FIFO, socket or device (os.replace swapped it for the log)
        taken = next((n for n in names_there if not_a_file(out / n)), None)
        if taken is not None:
            kind = not_a_file(out / taken)
            raise fail(f"{out / taken}: is {kind}; --overwrite replaces logs, not "
                       f"{plural(kind)}", EXIT_USAGE, as_json=js)
        for n in names_there:  # a log a writer holds: refused before any match is written
            lock = log.lock_to_replace(out / n)  # (write_match takes it again as it replaces)
            if lock is not None:
                lock.release()
    else:  # a log already there may be another match under the same name
        taken = next((n for n in names_there if os.path.lexists(out / n)), None)  # a
        # dangling link too: the log would be written where it leads
        if taken is not None:
            raise fail(f"{out / taken}: exists; refusing to replace it (--overwrite, or another "
                       "--output)", EXIT_USAGE, as_json=js)
    cpus = os.cpu_count() or 1
    jobs = max(1, min(jobs or min(cpus, 8), cpus, matches))  # more workers than CPUs: no faster
    show = progress_shown() if progress is None else progress
    start = time.perf_counter()
    try:
        if show:
            summaries = _with_progress(r, players, matches, seed, out, names, jobs, index)
        else:
            summaries = simulate_many(
                r, players, matches, seed=seed, out_dir=out, bots=names, jobs=jobs, first=index,
                on_no_pool=_no_pool,
            )
    except KeyboardInterrupt:  # it said "interrupted" alone: which run, and what is left
        from cli.signals import stopped_by

        how, status = stopped_by()
        new = len(_log_names_in(out, r, players, matches, index)) - len(names_there)
        kept = ("the finished logs stay" if overwrite else  # some names were there before
                "1 finished log stays" if new == 1 else f"{new:,} finished logs stay")
        raise fail(f"{out}: {how} while simulating {matches:,} "
                   f"match{'es' if matches != 1 else ''}: {kept}, each whole and sealed; "
                   "unfinished ones were removed", status, as_json=js) from None
    elapsed = time.perf_counter() - start
    report = _report(summaries, r.name, players, seat_bots(names, players), str(out), elapsed)
    if format is Format.json:
        emit_json(report)
        return
    said = f"{report['matches']} match{'es' if report['matches'] != 1 else ''}"  # "1 matches"
    if index:  # which of the batch
        last = index + report["matches"] - 1
        said += f" (index {index})" if last == index else f" (index {index} to {last})"
    typer.echo(terminal_safe(f"{said} of {r.name}, {players} players, written to {out}"))
    typer.echo(
        f"events {report['events']:,}  hands {report['hands']:,}  "
        f"({report['events_per_second']:,.0f} events/s, "
        f"{report['matches_per_second']:,.1f} matches/s)"
    )
    for name, wins in sorted(report["wins_by_bot"].items()):
        typer.echo(f"wins with {name} on the side: {wins}")


def _report(
    summaries: list[MatchSummary],
    rules: str,
    players: int,
    seats: tuple[str, ...],
    out: str,
    elapsed: float,
) -> dict[str, Any]:
    events = sum(s.events for s in summaries)
    wins: Counter[str] = Counter()
    sides = 2 if players >= 4 else players
    for s in summaries:
        # A side is named by the bots on it (partners on alternate seats).
        side_bots = sorted({seats[i] for i in range(players) if i % sides == s.winner})
        wins["+".join(side_bots)] += 1
    return {
        "rules": rules,
        "players": players,
        "bots": list(seats),
        "out": out,
        "matches": len(summaries),
        "events": events,
        "hands": sum(s.hands for s in summaries),
        "wins_by_side": dict(Counter(str(s.winner) for s in summaries)),
        "wins_by_bot": dict(wins),
        "seconds": round(elapsed, 3),
        "events_per_second": events / elapsed if elapsed else 0.0,
        "matches_per_second": len(summaries) / elapsed if elapsed else 0.0,
    }


def _with_progress(
    r: Rules, players: int, matches: int, seed: str, out: Path, names: tuple[str, ...], jobs: int,
    first: int = 0,
) -> list[MatchSummary]:
    from cli.progress import progress

    start = time.perf_counter()
    events = done = 0
    with progress("simulate", "matches", matches, rate=True) as update:

        def on_match(s: MatchSummary) -> None:
            nonlocal events, done
            events += s.events
            done += 1
            elapsed = time.perf_counter() - start
            rate = (f"{events / elapsed:,.0f} events/s, {done / elapsed:,.1f} matches/s"
                    if elapsed else "")
            update(done, rate=rate)

        return simulate_many(
            r, players, matches, seed=seed, out_dir=out, bots=names, jobs=jobs, on_match=on_match,
            first=first, on_no_pool=_no_pool,
        )


def _no_pool(exc: OSError) -> None:
    """Said when ``-j N``'s workers cannot be started (``ulimit -n``, ``ulimit -u``)."""
    typer.echo(f"buraco-log: note: worker processes could not be started ({exc.strerror or exc}"
               "): the matches are played in this process, as with -j 1", err=True)


def register(app: typer.Typer) -> None:
    app.command("simulate")(simulate)
