"""Simulated matches: bots play complete matches, every move checked by the reducer.

A match is a pure function of (rules, players, seed, index, bots): the server seed, the player
seeds, the match id and the bots' random choices are all derived from ``seed`` and ``index`` with
SHA-256, and no wall-clock time is recorded. So the same arguments give the same events, and the
same log bytes, in any process and for any number of worker processes.

Deals follow the fairness protocol of :mod:`buraco_log.dealer`: the commitment is published in
``MatchStarted``, every hand is dealt from the committed seeds, and ``MatchEnded`` reveals the
server seed, so :func:`buraco_log.dealer.check_deals` passes on every simulated match.

Core module: stdlib and msgspec only.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import random
import stat
from collections.abc import Callable, Sequence

import msgspec

from buraco_log.bots import Bot, HeuristicBot, MeldKnowledge, make_bot
from buraco_log.dealer import FairDealer
from buraco_log.errors import BuracoLogError, IllegalMoveError, RulesError
from buraco_log.events import (
    AnyEvent,
    CardDrawn,
    CardsLaidOff,
    HandEnded,
    HandStarted,
    MatchEnded,
    MatchStarted,
    MeldLaid,
    MortoTaken,
    OpeningRetracted,
    PileTaken,
    Player,
)
from buraco_log.outpaths import rename_target
from buraco_log.rules import Rules, check, check_plain_name, side_of
from buraco_log.scoring import score_hand

GENERATOR = "buraco_log.simulate/v4"
"""The newest generator id, recorded in ``MatchStarted.metadata["generator"]`` by
:func:`generator_of`. Its promise: one id and one (rules, players, seed, index, bots) give the
same events, byte for byte. Bump it when simulated play changes, and name in
:data:`PLAY_CHANGED` the bots whose play changed.
v2 (issue 14): must-use-top pickups with the top laid off together with cards of the hand, no
stock-out while the pile can be taken, presets with ``morto_voided_by = "opponent_out"``.
v3: must-use-top pickups whose one card left over is laid off first to make a canastra, or
joins the top's own meld to make one (a pile taken in rare positions where v2 refused it).
v4: the expert leaves the pile on its fourth draw in a row with the stock unchanged, as the
heuristic bot does (a v3 expert match of the same seed could differ under one id)."""

BASE_VERSION = 3
"""The generator version of a match none of whose bots is named in :data:`PLAY_CHANGED`."""

PLAY_CHANGED: dict[str, int] = {"expert": 4}
"""The version in which each bot's play last changed since :data:`BASE_VERSION`."""


def generator_of(bots: Sequence[str]) -> str:
    """The generator id of a match of ``bots``: the newest version that changed the play of a
    bot seated in it. A match whose bots all play as before keeps its id and its bytes (the
    heuristic and random bots' logs made under v3 are still remade byte for byte)."""
    v = max([BASE_VERSION, *(PLAY_CHANGED.get(b.partition(":")[0], 0) for b in bots)])
    return f"buraco_log.simulate/v{v}"


MAX_HANDS = 400
"""A match still undecided after this many hands is an error (no bot should take so long)...
unless the target score is so high that it needs more: see :func:`max_hands_for`."""

POINTS_PER_HAND = 50
"""Fewer points than a side scores in a hand on average (classic: about 125), for
:func:`max_hands_for`."""


def max_hands_for(rules: Rules) -> int:
    """The hands a match may take before it is an error: :data:`MAX_HANDS`, or more for a
    target score that needs more (a house rule of 1,000,000 points, which the rules allow,
    was refused "still undecided after 400 hands" about 8,000 hands short of it)."""
    return max(MAX_HANDS, rules.target_score // POINTS_PER_HAND)


MAX_HAND_EVENTS = 20_000
"""A hand longer than this is an error: a bot is going round in circles."""

MAX_STALL_TURNS = 100
"""Pile takes in a row, with no card drawn from the stock or laid on the table between them,
that make a hand an error. Nothing in the rules ends a hand whose players pass a free pile back
and forth, so bots that did would play it until :data:`MAX_HAND_EVENTS`: hours for experts at
their default budget. The bots leave the pile after three such turns each. A short opening
taken back (``OpeningRetracted``) lays nothing: the takes before it still count (a loop of
take, short opening, take back, discard ran to :data:`MAX_HAND_EVENTS`)."""

_PROGRESS = (CardDrawn, MeldLaid, CardsLaidOff, MortoTaken)


_CACHES: dict[Rules, MeldKnowledge] = {}


class SimulationError(BuracoLogError):
    """A simulated match that could not be completed: house rules that never reach their
    target, or a bot or engine defect."""

    code = "simulate"


class MatchSummary(msgspec.Struct, frozen=True):
    """What one simulated match came to."""

    index: int
    match_id: str
    events: int
    hands: int
    totals: tuple[int, ...]
    winner: int  # winning side
    bots: tuple[str, ...]  # bot of each seat


def _derive(seed: str, index: int, what: str) -> str:
    return hashlib.sha256(f"buraco_log/sim/v1\x00{seed}\x00{index}\x00{what}".encode()).hexdigest()


def seat_bots(bots: Sequence[str], players: int) -> tuple[str, ...]:
    """The bot of each seat: ``bots`` repeated round the table (one name: everyone)."""
    if not bots:
        raise ValueError("at least one bot name")
    return tuple(bots[i % len(bots)] for i in range(players))


def check_bots(names: Sequence[str]) -> None:
    """Refuse, with a ValueError, a bot that is unknown or whose play depends on more than the
    arguments: an expert with a time cap (``expert:64/300ms``) searches as many samples as the
    machine manages in time, so the same seed gave other bytes on another run."""
    for n in sorted(set(names)):
        bot = make_bot(n)
        ms = getattr(getattr(bot, "budget", None), "ms", None)
        if ms is not None:
            raise ValueError(f"bot {n!r}: a time cap (/{ms}ms) makes the match depend on the "
                             "machine's speed, and a simulated match is the same bytes for a "
                             "seed: give the budget without /MSms")


def match_id_of(rules: Rules, players: int, seed: str, index: int) -> str:
    return f"sim-{rules.name}-{players}p-{_derive(seed, index, 'id')[:12]}-{index:06d}"


def simulate_match(
    rules: Rules,
    players: int,
    *,
    seed: str,
    index: int = 0,
    bots: Sequence[str] = ("heuristic",),
    max_hands: int | None = None,
) -> list[AnyEvent]:
    """Play one complete match and return its events, each one accepted by the reducer.
    ``max_hands``: the hands it may take before it is an error (:func:`max_hands_for`)."""
    from buraco_log.moves import quick_moves as legal
    from buraco_log.reducer import Replayer

    check(rules, players)
    names = seat_bots(bots, players)
    check_bots(names)
    if max_hands is None:
        max_hands = max_hands_for(rules)
    cache = _CACHES.setdefault(rules, MeldKnowledge())  # meld readings recur across matches
    if len(_CACHES) > 16:
        _CACHES.clear()
    seat_bot: list[Bot] = [HeuristicBot(cache) if n == "heuristic" else make_bot(n) for n in names]
    # Bots that follow the match (the expert) are shown every event; they read public facts only.
    watchers = [b.observe for b in seat_bot if hasattr(b, "observe")]
    rng = random.Random(int(_derive(seed, index, "bots"), 16))
    dealer = FairDealer(
        _derive(seed, index, "server"),
        tuple(_derive(seed, index, f"player{i}")[:16] for i in range(players)),
    )
    start = MatchStarted(
        match_id=match_id_of(rules, players, seed, index),
        rules=rules,
        players=tuple(Player(f"{n}-{i}") for i, n in enumerate(names)),
        sides=tuple(side_of(i, players) for i in range(players)),
        first_dealer=int(_derive(seed, index, "first_dealer"), 16) % players,
        commitment=dealer.commitment,
        player_seeds=dealer.player_seeds,
        metadata={
            "generator": generator_of(names),
            "bots": ",".join(names),
            "seed": seed,
            "index": str(index),
        },
        seq=0,
    )
    events: list[AnyEvent] = [start]
    r = Replayer()
    r.step(start)
    for w in watchers:
        w(start)
    # The live table of the replayer, read (never changed) by the bots' fast path. Reading it
    # instead of a frozen State per event is what makes simulation fast.
    table = r.table  # read-only live view: no frozen copy per move
    hands = 0
    hand_start = 0
    stall = 0  # pile takes since a card was last drawn from the stock or laid
    turn_stall = 0  # the stall as this turn's draw left it: what a retraction goes back to

    def note(ev: AnyEvent) -> None:
        nonlocal stall, turn_stall
        events.append(ev)
        for w in watchers:
            w(ev)
        if isinstance(ev, OpeningRetracted):
            stall = turn_stall  # the cards laid this turn are back in the hand: no progress
        elif isinstance(ev, PileTaken):
            stall += 1
            turn_stall = stall
            if stall >= MAX_STALL_TURNS:
                raise SimulationError(
                    f"{start.match_id}: hand {hands - 1}: the pile was taken {stall} turns in a "
                    f"row (to seq {ev.seq}) with no card drawn from the stock or laid (an opening "
                    "taken back lays none): the bots pass it back and forth and the hand would "
                    "never end")
        elif isinstance(ev, _PROGRESS):
            stall = 0
            if isinstance(ev, CardDrawn):
                turn_stall = 0

    def end_scores() -> tuple[int, ...]:
        return tuple(
            s.total
            for s in score_hand(
                rules,
                table.sides,
                table.n_sides,
                table.hands,
                table.melds,
                table.morto_taken,
                table.morto_pending,
                table.went_out,
                table.relancinho,
            )
        )

    while True:
        phase = table.phase
        seq = table.seq + 1
        ev: AnyEvent | None = None
        if phase == "between":
            if hands >= max_hands:
                totals = ", ".join(map(str, table.totals))
                raise SimulationError(
                    f"{start.match_id}: still undecided after {hands} hands (totals {totals}, "
                    f"target {rules.target_score}): these rules may never reach the target "
                    "(a tiny hand, a target out of reach), or a bot is going round in circles")
            ev = dealer.deal(rules, players, hands, (start.first_dealer + hands) % players, seq=seq)
            hands += 1
            hand_start = seq
            stall = turn_stall = 0
        elif phase == "over":
            break
        else:
            if seq - hand_start > MAX_HAND_EVENTS:
                raise SimulationError(
                    f"{start.match_id}: hand {hands - 1} is still going at seq {seq}"
                )
            bot = seat_bot[table.turn]
            if phase == "out":
                ev = HandEnded("went_out", end_scores(), seq=seq)
            elif isinstance(bot, HeuristicBot) and phase in ("draw", "play", "emptied"):
                top = table.stock[-1] if table.stock else None
                ev = bot.fast_move(table, top, end_scores)
            if ev is not None:
                try:
                    r.step(ev)
                except IllegalMoveError:
                    ev = None  # a refused move changes nothing: use the full list instead
                else:
                    note(ev)
                    continue
            st = r.state()
            moves = legal(st)
            if not moves:
                raise SimulationError(f"{start.match_id}: no legal move at seq {seq} ({phase})")
            if isinstance(moves[0], MatchEnded):
                ev = msgspec.structs.replace(moves[0], server_seed=dealer.server_seed)
            else:
                ev = bot.choose(st, moves, rng)
        r.step(ev)
        note(ev)
    return events


def encode_match(events: Sequence[AnyEvent]) -> bytes:
    """The bytes of a sealed log of ``events``: exactly what ``log.write_log`` writes, built in
    memory so that bulk simulation needs no lock or fsync."""
    from buraco_log import log

    return log.encode_log(events, sealed=True)


def write_match(path: str | os.PathLike[str], events: Sequence[AnyEvent]) -> None:
    """Write a sealed log, replacing any file at ``path`` (through a symbolic link: the file it
    names, the link kept, as every output). The events were validated as they were played, so
    not again here. The file is fsynced before its rename, so that a power loss leaves the
    old log or the new one at ``path``, never an empty or partial file under a log's name (the
    directory is fsynced once, by :func:`simulate_many`, before it returns)."""
    from buraco_log import log

    path = os.fspath(path)
    target = os.fspath(rename_target(path))
    tmp = f"{target}{_TMP}"
    # a log a writer holds (a recorder's) is refused, and the old one is replaced under its
    # lock: renaming over it took every event the writer had acknowledged from its name
    lock = log.lock_to_replace(target, path)
    try:
        with open(tmp, "wb") as f:
            f.write(encode_match(events))
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)
        where = os.path.dirname(os.path.abspath(target))
        if os.path.realpath(where) != os.path.realpath(os.path.dirname(os.path.abspath(path))):
            log.fsync_directory(where)  # a link led out of the output directory, synced at the end
    except BaseException as exc:  # an interrupt or a full disk: no half-written file stays
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(exc, OSError) and exc.filename in (tmp, target, None):  # named as asked: it
            # said "LOG.tmp: Operation not permitted", or a full disk without any name
            raise type(exc)(exc.errno, exc.strerror, path) from None
        raise
    finally:
        if lock is not None:
            lock.release()


_TMP = ".tmp"  # a log being written is LOG.tmp until it is whole


def _remove_unfinished(out_dir: str, rules: Rules, players: int) -> None:
    """Remove the temporary files of this run's matches that stopped workers left: beside
    each log, and beside the file a log's symbolic link names, where :func:`write_match`
    writes it (a link to another folder left its ``.tmp`` there)."""
    prefix = f"{rules.name}-{players}p-"
    with contextlib.suppress(OSError):
        for name in os.listdir(out_dir):
            path = os.path.join(out_dir, name)
            if not name.startswith(prefix):
                continue
            if name.endswith(".blog" + _TMP):
                _unlink_file(path)
            elif name.endswith(".blog") and os.path.islink(path):
                with contextlib.suppress(OSError):  # a loop of links names no file: go on
                    _unlink_file(f"{rename_target(path)}{_TMP}")


def _unlink_file(path: str) -> None:
    """Remove ``path`` if it is a regular file (never a directory or device of that name)."""
    with contextlib.suppress(OSError):
        if stat.S_ISREG(os.lstat(path).st_mode):
            os.unlink(path)


_NAME_MAX = 255
"""Longest file name, in bytes, most file systems take (a name of 100 four-byte characters is
400 bytes: every write failed with 'File name too long', naming the temporary file)."""


def match_file(rules: Rules, players: int, index: int) -> str:
    """The file name of match ``index`` in an output directory.

    Rules from a log or built with ``msgspec.convert`` were never checked as house rules are:
    a name that is no plain name (``../x``) or too long for a file name is refused here, where
    it becomes a path."""
    check_plain_name(rules.name)
    name = f"{rules.name}-{players}p-{index:06d}.blog"
    size = len((name + _TMP).encode("utf-8", "surrogatepass"))
    if size > _NAME_MAX:
        raise RulesError("name", f"too long to name the logs simulate writes ({size} bytes in "
                         f"UTF-8 with the seat count, number and suffix; at most {_NAME_MAX})")
    return name


class _Job(msgspec.Struct, frozen=True):
    rules: Rules
    players: int
    seed: str
    bots: tuple[str, ...]
    out_dir: str


def _play_and_write(job: _Job, index: int) -> MatchSummary:
    events = simulate_match(job.rules, job.players, seed=job.seed, index=index, bots=job.bots)
    write_match(os.path.join(job.out_dir, match_file(job.rules, job.players, index)), events)
    return summarize(events, index)


def _worker(args: tuple[_Job, int, int]) -> list[MatchSummary]:
    from buraco_log.audit.pool import working_on

    job, first, stop = args
    out = []
    for i in range(first, stop):
        with working_on(os.path.join(job.out_dir, match_file(job.rules, job.players, i))):
            out.append(_play_and_write(job, i))  # a worker killed here names this log
    return out


def simulate_many(
    rules: Rules,
    players: int,
    matches: int,
    *,
    seed: str,
    out_dir: str | os.PathLike[str],
    bots: Sequence[str] = ("heuristic",),
    jobs: int = 1,
    on_match: Callable[[MatchSummary], None] | None = None,
    first: int = 0,
    on_no_pool: Callable[[OSError], None] | None = None,
) -> list[MatchSummary]:
    """Play ``matches`` matches, those of index ``first`` on, and write each as a sealed log in
    ``out_dir``.

    Match ``i`` depends only on the arguments and ``i``, so the files are the same bytes for any
    ``jobs``, and match 137 of a batch of 1,000 is remade alone (``first=137, matches=1``) as
    the same bytes. ``on_match`` is called in the parent process as each match is done (in any
    order with several jobs); the returned summaries are in match order. ``jobs`` worker
    processes that cannot be started (``ulimit -n``, ``ulimit -u``): the matches are played
    in this process, the same files, and ``on_no_pool`` is told why.
    """
    check(rules, players)
    if first < 0:
        raise ValueError(f"first index {first}: at least 0")
    # a name that is no file name: before any work
    match_file(rules, players, first + max(matches - 1, 0))
    names = seat_bots(bots, players)
    check_bots(names)  # refuse an unknown bot, or a time cap, before any work starts
    out = os.fspath(out_dir)
    made = not os.path.isdir(out)
    os.makedirs(out, exist_ok=True)
    job = _Job(rules, players, seed, names, out)
    try:
        done = _play_all(job, range(first, first + matches), jobs, on_match, on_no_pool)
        # every log's name (and a new directory's own) durable before the run says it is done
        from buraco_log.log import fsync_directory
        fsync_directory(out)
        if made:
            fsync_directory(os.path.dirname(os.path.abspath(out)))
        return done
    except BaseException:
        if made:  # a run that failed before its first match left an empty directory behind
            with contextlib.suppress(OSError):
                os.rmdir(out)  # only if empty: finished logs stay
        raise



def _play_all(job: _Job, indices: range, jobs: int,
              on_match: Callable[[MatchSummary], None] | None,
              on_no_pool: Callable[[OSError], None] | None = None) -> list[MatchSummary]:
    if jobs <= 1 or len(indices) <= 1:
        return _play_here(job, indices, on_match)
    from buraco_log.audit.pool import NoWorkers

    try:
        return _play_pooled(job, indices, jobs, on_match)
    except NoWorkers as exc:  # no worker could be started: no match played yet
        why = OSError(exc.errno, exc.strerror)  # not its traceback, which holds the pool
    # played here, the half-made pool dropped: it was "Too many open files", exit 1, where
    # -j 1 worked; the same files, as match i depends only on i
    import gc

    gc.collect()
    if on_no_pool is not None:
        on_no_pool(why)
    return _play_here(job, indices, on_match)


def _play_here(job: _Job, indices: range,
               on_match: Callable[[MatchSummary], None] | None) -> list[MatchSummary]:
    results: list[MatchSummary] = []
    for i in indices:
        summary = _play_and_write(job, i)
        results.append(summary)
        if on_match is not None:
            on_match(summary)
    return results


def _play_pooled(job: _Job, indices: range, jobs: int,
                 on_match: Callable[[MatchSummary], None] | None) -> list[MatchSummary]:
    rules, players, out = job.rules, job.players, job.out_dir
    matches = len(indices)
    results: list[MatchSummary] = []
    from concurrent.futures import as_completed

    from buraco_log.audit.pool import NoWorkers, worker_pool

    # Small chunks keep the progress bar moving and the workers evenly loaded.
    size = max(1, min(16, matches // (jobs * 8)))
    chunks = [(job, i, min(i + size, indices.stop)) for i in range(indices.start, indices.stop,
                                                                  size)]
    # An interrupt (Ctrl-C) stops the workers at once; each log is written whole or not at
    # all, so what is finished stays.
    try:
        # never more workers than CPUs (or chunks): --jobs 200 started 200 processes, each
        # with its own interpreter, on a 2-CPU machine, and was no faster
        doing = f"simulating {matches} matches into {out}"
        after = "finished logs stay, unfinished ones were removed"
        with worker_pool(min(jobs, os.cpu_count() or 1, len(chunks)), doing, after) as pool:
            futures = [pool.submit(_worker, c) for c in chunks]
            for fut in as_completed(futures):
                for summary in fut.result():
                    results.append(summary)
                    if on_match is not None:
                        on_match(summary)
    except NoWorkers:  # nothing started, nothing to remove: played in this process
        raise
    except BaseException:
        _remove_unfinished(out, rules, players)  # the workers are stopped by now
        raise
    results.sort(key=lambda m: m.index)
    return results


def summarize(events: Sequence[AnyEvent], index: int = 0) -> MatchSummary:
    """The summary of a finished simulated match."""
    start, end = events[0], events[-1]
    assert isinstance(start, MatchStarted) and isinstance(end, MatchEnded)
    return MatchSummary(
        index=index,
        match_id=start.match_id,
        events=len(events),
        hands=sum(1 for e in events if isinstance(e, HandStarted)),
        totals=end.totals or (),
        winner=end.winner if end.winner is not None else -1,
        bots=tuple(start.metadata.get("bots", "").split(",")),
    )
