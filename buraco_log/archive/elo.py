"""The Elo fold over an archive's matches in order, with Arrow alone.

Apart from :mod:`buraco_log.archive.report` because ingest folds the ratings once a run and
never needs DuckDB (its import is about 64 ms of CPU); the report's leaderboard and
:func:`~buraco_log.archive.report.ratings` fold the same rows with the same code.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pyarrow as pa  # type: ignore[import-untyped]

from . import store

if TYPE_CHECKING:
    from .keyindex import Index

__all__ = ["ELO_K", "ELO_START", "RATINGS", "leaderboard_rows", "ratings_of_rows"]

ELO_START = 1500.0
ELO_K = 24.0

RATINGS = pa.schema([
    pa.field("player", pa.string(), nullable=False),
    pa.field("elo", pa.float64(), nullable=False),
    pa.field("matches", pa.int32(), nullable=False),
    pa.field("wins", pa.int32(), nullable=False),
])



def leaderboard_rows(root: str, index: Index | None = None) -> pa.Table:
    """What :data:`~buraco_log.archive.report.LEADERBOARD_ROWS` selects, read from the
    committed files with Arrow alone.

    Ingest folds the ratings once per run; a DuckDB connection costs about 40 ms of CPU to
    open, more than the fold of a 600-match archive. Same rows in the same order: matches
    ranked by start time (missing first), match id, game id (neither is ever missing), and
    each match's players by seat (``tests/archive`` checks the two against each other)."""
    import pyarrow.compute as pc  # type: ignore[import-untyped]  # here: a query never needs it

    from .keyindex import load
    if index is None:  # (``index``: a writer's, just stored: ingest._store_ratings)
        store.committed_files(root)  # every committed file there, of its size, unchanged
        # the columns below of every match and player from the key index, and from the
        # files only of the batches it does not cover: each night read two of every batch's
        index = load(root, store.manifests(root))
    if not index["matches"].num_rows or not index["players"].num_rows:
        return pa.table({"ord": pa.array([], pa.int64()), "side": pa.array([], pa.int8()),
                         "player": pa.array([], pa.string()),
                         "winner_side": pa.array([], pa.int8())})
    matches = index["matches"].select(["game_id", "winner_side", "started_at", "match_id"])
    # Missing start times first: by a "has a time" key, as null placement is set per key only
    # in newer pyarrow.
    keyed = matches.append_column("timed", pc.is_valid(matches.column("started_at")))
    order = pc.sort_indices(keyed, sort_keys=[("timed", "ascending"), ("started_at", "ascending"),
                                              ("match_id", "ascending"), ("game_id", "ascending")])
    ranked = pa.table({"game_id": matches.column("game_id").take(order),
                       "winner_side": matches.column("winner_side").take(order),
                       "ord": pa.array(range(1, matches.num_rows + 1), pa.int64())})
    players = index["players"].select(["game_id", "seat", "side", "player"])
    rows = players.join(ranked, "game_id", join_type="inner")
    rows = rows.sort_by([("ord", "ascending"), ("seat", "ascending")])
    return rows.select(["ord", "side", "player", "winner_side"])


def ratings_of_rows(rows: pa.Table) -> pa.Table:
    """The Elo fold over :data:`~buraco_log.archive.report.LEADERBOARD_ROWS` (match order,
    then seat)."""
    import pyarrow.compute as pc  # here: a query never needs it
    ords = rows.column("ord").to_pylist()
    names_enc = pc.dictionary_encode(rows.column("player")).combine_chunks()
    pids = names_enc.indices.to_pylist()
    names = names_enc.dictionary.to_pylist()
    sides = rows.column("side").to_pylist()
    winners = rows.column("winner_side").to_pylist()
    n_rows = len(ords)
    bounds = [i for i in range(n_rows) if i == 0 or ords[i] != ords[i - 1]] + [n_rows]
    rating = [ELO_START] * len(names)
    k = ELO_K
    twice = False  # some match holds one player in two seats
    for g in range(len(bounds) - 1):
        a, b = bounds[g], bounds[g + 1]
        w = winners[a]
        if b - a == 2:  # one against one: the common case, kept lean
            p, q = pids[a], pids[a + 1]
            twice = twice or p == q
            rp, rq = rating[p], rating[q]
            d = k * ((sides[a] == w) - 1.0 / (1.0 + 10.0 ** ((rq - rp) / 400.0)))
            # added, not assigned: one player in both seats (a name given twice) trades
            # nothing with themselves; assigned, they gained or lost 12 by the seat that won
            rating[p] += d
            rating[q] -= d
            continue
        twice = twice or len(set(pids[a:b])) < b - a
        if max(sides[a:b]) == 1:  # two partnerships
            t0 = t1 = 0.0
            c0 = c1 = 0
            for i in range(a, b):
                if sides[i]:
                    t1 += rating[pids[i]]
                    c1 += 1
                else:
                    t0 += rating[pids[i]]
                    c0 += 1
            d = k * ((w == 0) - 1.0 / (1.0 + 10.0 ** ((t1 / c1 - t0 / c0) / 400.0)))
            for i in range(a, b):
                rating[pids[i]] += -d if sides[i] else d
            continue
        n = max(sides[a:b]) + 1
        total = [0.0] * n
        count = [0] * n
        for i in range(a, b):
            total[sides[i]] += rating[pids[i]]
            count[sides[i]] += 1
        delta = [0.0] * n
        if 0 <= w < n:
            mw = total[w] / count[w]
            for s in range(n):
                if s != w and count[s]:
                    change = k * (1.0 - 1.0 / (1.0 + 10.0 ** ((total[s] / count[s] - mw) / 400.0)))
                    delta[w] += change
                    delta[s] -= change
        for i in range(a, b):
            rating[pids[i]] += delta[sides[i]]
    played = [0] * len(names)
    won = [0] * len(names)
    # A match counts once for each player in it, however many of its seats they held (a
    # name given twice): counted per match only when some match holds a player twice.
    if not twice:
        for p, side, w in zip(pids, sides, winners, strict=True):
            played[p] += 1
            won[p] += side == w
    else:
        for g in range(len(bounds) - 1):
            a, b = bounds[g], bounds[g + 1]
            wins: dict[int, bool] = {}
            for i in range(a, b):
                wins[pids[i]] = wins.get(pids[i], False) or sides[i] == winners[a]
            for p, won_it in wins.items():
                played[p] += 1
                won[p] += won_it
    table = pa.table({"player": names, "elo": rating, "matches": played, "wins": won},
                     schema=RATINGS)
    return table.sort_by([("elo", "descending"), ("player", "ascending")])
