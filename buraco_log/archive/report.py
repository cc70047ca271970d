"""The canned analyses over an archive, as tables, JSON or one self-contained HTML page.

Every section is one SQL query over the library's views (:data:`CANNED`), except the
leaderboard: an Elo rating is a fold over the matches in order, done in Python over one query.
"""

from __future__ import annotations

import contextlib
import html
import math
import os
import threading
import time
from collections.abc import Sequence
from typing import Any

import msgspec
import pyarrow as pa  # type: ignore[import-untyped]

from buraco_log.errors import ArchiveError

from . import store
from .duck import duckdb

# The fold lives apart so that ingest, which folds the ratings once a run, never loads duckdb;
# its names stay importable from here.
from .elo import ELO_K as ELO_K
from .elo import ELO_START as ELO_START
from .elo import RATINGS as RATINGS
from .elo import leaderboard_rows as leaderboard_rows
from .elo import ratings_of_rows as ratings_of_rows
from .fixity import check_parts
from .views import (
    DEFAULT_MEMORY_LIMIT,
    DEFAULT_THREADS,
    _first_line,
    _locate,
    _quote,
    _watchdog,
    connect,
    literal,
    time_left,
)

# Sides: each player alone with 2 or 3 players, two partnerships with 4 or 6 (Rules.sides).
_SIDES = "CASE WHEN n_players <= 3 THEN n_players ELSE 2 END"

# How a hand ended, in the words `show` and `replay` use: the reason code `stock_out` is stored
# for every hand the stock ends, but only where the rules' stock floor is 0 is the stock then
# out; mega's hand ends with 2 cards left in it (RULES.md §8), a "stock end". A rules record
# without the knob is of rules older than it: floor 0. A regular expression, not a JSON
# function: the same SQL runs on Spark.
_ENDED = """CASE WHEN h.reason = 'went_out' THEN 'went out'
    WHEN coalesce(nullif(regexp_extract(m.rules_json, '"stock_floor":([0-9]+)', 1), ''),
                  '0') = '0' THEN 'stock out'
    ELSE 'stock end' END"""

_PILE_BUCKET = """CASE WHEN n <= 2 THEN '01-02' WHEN n <= 5 THEN '03-05'
    WHEN n <= 10 THEN '06-10' WHEN n <= 20 THEN '11-20' ELSE '21+' END"""

CANNED: dict[str, tuple[str, str]] = {
    "win_rate_by_seat": (
        "Win rate by preset, players and seat",
        """SELECT preset, n_players AS players, seat, count(*) AS matches,
                  round(avg(won::INTEGER), 4) AS win_rate
           FROM players GROUP BY ALL ORDER BY ALL""",
    ),
    "win_rate_first_player": (
        "Win rate of the player who moved first, against the fair share",
        f"""SELECT preset, n_players AS players, count(*) AS matches,
                  round(avg(won::INTEGER), 4) AS first_player_win_rate,
                  round(1.0 / {_SIDES}, 4) AS fair_share
           FROM players WHERE first GROUP BY ALL ORDER BY ALL""",
    ),
    "canastras": (
        "Canastras by class: how often, and their share of the points scored",
        """WITH h AS (SELECT preset, count(*) AS side_hands,
                        sum(table_points + canastra_bonus + going_out + relancinho) AS points
                      FROM hands GROUP BY preset),
                c AS (SELECT preset, canastra AS class, count(*) AS canastras,
                        sum(points + bonus) AS points
                      FROM melds WHERE canastra IS NOT NULL GROUP BY ALL)
           SELECT c.preset, c.class, c.canastras,
                  round(c.canastras / h.side_hands, 4) AS per_side_hand,
                  round(c.points / h.points, 4) AS share_of_points
           FROM c JOIN h USING (preset) ORDER BY c.preset, c.canastras DESC""",
    ),
    "pile_pickups": (
        "Taking the discard pile: how the taker's side did that hand, by pile size",
        f"""SELECT {_PILE_BUCKET} AS pile_size, count(*) AS pickups,
                  round(avg(hand_won::INTEGER), 4) AS hand_win_rate,
                  round(avg(total), 1) AS avg_hand_score
           FROM (SELECT unnest(pile_pickups) AS n, hand_won, total FROM hands)
           GROUP BY pile_size ORDER BY pile_size""",
    ),
    "hand_endings": (
        "Hand length and how hands end",
        f"""SELECT preset, reason, count(*) AS hands,
                  round(count(*) / sum(count(*)) OVER (PARTITION BY preset), 4) AS share,
                  round(avg(turns), 1) AS avg_turns, median(turns) AS median_turns,
                  round(avg(events), 1) AS avg_events, ended
           FROM (SELECT h.preset, h.reason, h.turns, h.events, {_ENDED} AS ended
                 FROM hands AS h JOIN matches AS m ON m.game_id = h.game_id
                 WHERE h.side = 0)
           GROUP BY preset, reason, ended ORDER BY preset, reason, ended""",
    ),
    "morto_timing": (
        "When the morto is taken, and what being first to it is worth",
        """SELECT preset, count(*) AS side_hands,
                  round(avg((morto_seq IS NOT NULL)::INTEGER), 4) AS taken_rate,
                  round(avg(morto_turn), 1) AS avg_turn, median(morto_turn) AS median_turn,
                  round(avg(morto_turn / turns), 3) AS avg_fraction_of_hand,
                  round(avg(morto_direct::INTEGER), 4) AS direct_rate,
                  round(avg(hand_won::INTEGER) FILTER (WHERE first_to_morto), 4)
                    AS first_to_morto_hand_win_rate
           FROM hands GROUP BY preset HAVING count(morto_seq) > 0 ORDER BY preset""",
    ),
    "unsigned_matches": (
        "Matches whose log holds no signature (docs/signing.md): the first 100 by start",
        """SELECT match_id, started_at, source_path FROM matches WHERE NOT coalesce(signed, false)
           ORDER BY started_at NULLS LAST, match_id LIMIT 100""",
    ),
    "notable_matches": (
        "Notable matches: the longest, the biggest comeback, the highest hand",
        """WITH r AS (SELECT game_id, hand, side,
                        sum(total) OVER (PARTITION BY game_id, side ORDER BY hand) AS run
                      FROM hands),
                behind AS (SELECT w.game_id, max(o.run - w.run) AS deficit
                           FROM r AS w JOIN matches AS x
                             ON x.game_id = w.game_id AND w.side = x.winner_side
                           JOIN r AS o ON o.game_id = w.game_id AND o.hand = w.hand
                             AND o.side <> w.side
                           GROUP BY w.game_id),
                picks AS (
                  (SELECT 'longest match (events)' AS notable, game_id,
                          events::BIGINT AS value FROM matches
                   ORDER BY events DESC, game_id LIMIT 1)
                  UNION ALL
                  (SELECT 'biggest comeback (points behind)', game_id, deficit::BIGINT
                   FROM behind WHERE deficit > 0 ORDER BY deficit DESC, game_id LIMIT 1)
                  UNION ALL
                  (SELECT 'highest hand (points)', game_id, total::BIGINT FROM hands
                   ORDER BY total DESC, game_id LIMIT 1))
           SELECT p.notable, m.match_id, p.value, m.source_path
           FROM picks AS p JOIN matches AS m USING (game_id) ORDER BY p.notable""",
    ),
}

# The leaderboard's inputs: the fold itself runs in Python (an Elo rating is sequential).
# Every seat of every match, in match order (start time, match id, game id), for the Elo fold.
LEADERBOARD_ROWS = """
SELECT m.ord, p.side, p.player, m.winner_side
FROM (SELECT game_id, seat, side, player FROM players) AS p
JOIN (SELECT game_id, winner_side,
             row_number() OVER (ORDER BY started_at ASC NULLS FIRST, match_id ASC NULLS LAST,
                                game_id ASC NULLS LAST) AS ord
      FROM matches) AS m USING (game_id)
ORDER BY m.ord, p.seat
"""


class Section(msgspec.Struct):
    name: str
    title: str
    columns: list[str]
    rows: list[list[Any]]
    ms: float  # time the query took


class Report(msgspec.Struct):
    archive: str
    matches: int
    events: int
    sections: list[Section]


def run_canned(con: duckdb.DuckDBPyConnection, name: str) -> Section:
    title, sql = CANNED[name]
    t = time.perf_counter()
    cur = con.execute(sql)
    rows = [list(r) for r in cur.fetchall()]
    cols = [d[0] for d in cur.description or ()]
    return Section(name, title, cols, rows, (time.perf_counter() - t) * 1000)


def ratings(con: duckdb.DuckDBPyConnection) -> pa.Table:
    """Elo of every player over the archive in match order (start time, match id, game id).

    A side's rating is the mean of its players'; each loser side plays the winner (one game
    with two sides, two with three). Sorted best first.
    """
    return ratings_of_rows(con.sql(LEADERBOARD_ROWS).to_arrow_table())


def leaderboard(con: duckdb.DuckDBPyConnection, top: int = 20,
                archive: str | os.PathLike[str] | None = None) -> Section:
    """The top players by Elo (``top`` 0: all). With ``archive``, the ratings stored by the
    last ingest are read when they are current (the fold is sequential, so ingest does it);
    otherwise they are computed here."""
    t = time.perf_counter()
    stored = store.current_ratings(str(archive)) if archive is not None else None
    table = None
    if stored is not None:
        sql = f"SELECT * FROM read_parquet({_quote(literal(stored))}) ORDER BY elo DESC, player"
        try:
            table = con.sql(sql + (f" LIMIT {int(top)}" if top else "")).to_arrow_table()
        except duckdb.InterruptException:  # the time limit, or Ctrl-C: not a missing file
            raise
        except duckdb.Error:  # replaced by an ingest that finished meanwhile: fold here
            table = None
    if table is None:
        table = ratings(con)
        if top:
            table = table.slice(0, top)
    rows: list[list[Any]] = [
        [i + 1, r["player"], round(r["elo"], 1), r["matches"], r["wins"],
         round(r["wins"] / r["matches"], 4) if r["matches"] else 0.0]
        for i, r in enumerate(table.to_pylist())
    ]
    return Section("leaderboard", f"Player leaderboard: Elo (K={ELO_K:g}) in match order",
                   ["rank", "player", "elo", "matches", "wins", "win_rate"], rows,
                   (time.perf_counter() - t) * 1000)


def report(
    archive: str | os.PathLike[str],
    *,
    top: int = 20,
    threads: int = DEFAULT_THREADS,
    memory_limit: str = DEFAULT_MEMORY_LIMIT,
    timeout: float | None = None,
) -> Report:
    """Every canned analysis over ``archive`` (the same sandboxed connection as queries).
    ``timeout`` seconds (None or 0: no limit) bound the whole report, as `query`'s bound one
    query: DuckDB is interrupted when they are up, and the report is an :class:`ArchiveError`
    saying so (before, a report over a large archive, or one DuckDB planned badly, ran for as
    long as it took, with no way to stop it but a signal). A committed file that a compaction
    or drop removes while the report runs starts it again (its sections read one listing),
    within the same ``timeout``: each start has only the time left."""
    start = time.monotonic()
    for again in range(store.RELISTS - 1, -1, -1):
        try:
            return _report(archive, top, threads, memory_limit,
                           time_left(timeout, start), said=timeout)
        except store.Changed:
            if not again:
                raise
    raise AssertionError("unreachable")


def _report(archive: str | os.PathLike[str], top: int, threads: int, memory_limit: str,
            timeout: float | None, said: float | None = None) -> Report:
    """One start of :func:`report`: ``timeout`` is the time left, ``said`` the user's limit
    (the one its error names)."""
    archive = store.check_archive(str(archive))
    # no compact or drop removes a file it reads meanwhile; the wait is within the limit
    start = time.monotonic()
    with contextlib.ExitStack() as stack:
        try:
            stack.enter_context(store.reading(archive, within=timeout))
        except store.GateTimeout:
            raise _stopped(said if said is not None else timeout,
                           " (waiting for a compact or drop to remove files)") from None
        return _report_locked(archive, top, threads, memory_limit,
                              time_left(timeout, start), said)


def _report_locked(archive: str, top: int, threads: int, memory_limit: str,
                   timeout: float | None, said: float | None) -> Report:
    check_parts(archive)  # a part's flipped bit gave wrong rows without a word
    con = connect(archive, threads=threads, memory_limit=memory_limit)
    limited = bool(timeout) and timeout is not None and timeout <= threading.TIMEOUT_MAX
    stop = _watchdog(con, timeout) if limited and timeout is not None else None
    deadline = time.monotonic() + timeout if limited and timeout is not None else math.inf

    def on_time() -> None:  # the Elo fold runs in Python, where no interrupt reaches
        if time.monotonic() > deadline:
            raise _stopped(said if said is not None else timeout)

    try:
        matches, events = con.execute(
            "SELECT count(*), coalesce(sum(events), 0) FROM matches").fetchone() or (0, 0)
        sections = []
        for name in CANNED:
            sections.append(run_canned(con, name))
            on_time()
        sections.append(leaderboard(con, top, archive))
        on_time()
    except duckdb.InterruptException:
        raise _stopped(said if said is not None else timeout) from None
    except duckdb.Error as exc:  # one line naming the archive, never a traceback
        first = _first_line(exc)  # DuckDB's advice to change a setting said as a fix
        found = _locate(ArchiveError(f"report failed: {first}"), archive)  # a damaged file
        raise (found if not str(found).startswith("report failed") else
               ArchiveError(f"{archive}: report failed: {first}")) from None
    finally:
        if stop is not None:
            stop()
        con.close()
    return Report(str(archive), int(matches), int(events), sections)


def _stopped(timeout: float | None, where: str = "") -> ArchiveError:
    """The report's time limit ran out (an interrupt with no limit set is Ctrl-C or SIGTERM,
    which the command line says itself)."""
    if not timeout:
        return ArchiveError("report: interrupted")
    return ArchiveError(f"report: stopped after the {timeout:g} s time limit{where} "
                        "(--timeout; 0 for no limit)")


# -- HTML ----------------------------------------------------------------------------------------

# Which column each section charts, and which columns label the bars.
CHARTS: dict[str, tuple[str, str]] = {
    "win_rate_by_seat": ("win_rate", "{preset} {players}p, seat {seat}"),
    "win_rate_first_player": ("first_player_win_rate", "{preset} {players}p"),
    "canastras": ("share_of_points", "{preset} {class}"),
    "pile_pickups": ("hand_win_rate", "pile of {pile_size}"),
    "hand_endings": ("avg_turns", "{preset} {ended}"),
    "morto_timing": ("avg_turn", "{preset}"),
    "leaderboard": ("elo", "{rank}. {player}"),
}

_CSS = """body{font:14px/1.4 system-ui,sans-serif;margin:2em auto;max-width:960px;color:#222}
h1{font-size:1.6em}h2{font-size:1.2em;margin-top:2em;border-bottom:1px solid #ccc}
table{border-collapse:collapse;margin:.5em 0}td,th{padding:2px 8px;border-bottom:1px solid #eee;
text-align:right}th{background:#f4f4f4}td:first-child,th:first-child{text-align:left}
.note{color:#666}svg text{font:11px system-ui,sans-serif}"""


def _fmt(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, float):
        return f"{v:.4g}" if abs(v) < 1 else f"{v:,.1f}"
    return str(v)


def bar_chart(labels: Sequence[str], values: Sequence[float], *, width: int = 640) -> str:
    """A horizontal bar chart as inline SVG (no scripts, no external assets)."""
    if not values:
        return ""
    bar, gap, left = 16, 4, 180
    height = len(values) * (bar + gap) + gap
    top = max((abs(v) for v in values if not math.isnan(v)), default=0.0) or 1.0
    scale = (width - left - 70) / top
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'role="img">']
    for i, (label, v) in enumerate(zip(labels, values, strict=True)):
        y = gap + i * (bar + gap)
        w = 0.0 if math.isnan(v) else abs(v) * scale
        colour = "#3b7dd8" if v >= 0 else "#d8553b"
        parts.append(f'<text x="{left - 6}" y="{y + bar - 4}" text-anchor="end">'
                     f'{html.escape(label[:32])}</text>')
        parts.append(f'<rect x="{left}" y="{y}" width="{w:.1f}" height="{bar}" '
                     f'fill="{colour}"/>')
        parts.append(f'<text x="{left + w + 4:.1f}" y="{y + bar - 4}">{_fmt(v)}</text>')
    parts.append("</svg>")
    return "".join(parts)


def _count(n: int, noun: str) -> str:
    """``1 match``, ``2 matches``, ``1 event``: the report's counts in words."""
    return f"{n:,} {noun}" + ("" if n == 1 else "es" if noun.endswith("ch") else "s")


def render_html(rep: Report, links: dict[str, str] | None = None) -> str:
    """The report as one self-contained HTML page with inline SVG charts. ``links`` maps a
    log's ``source_path`` to its match page (``buraco_log.view.links``): rows naming that
    match link its ``match_id`` to the page."""
    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
           "<title>buraco_log archive report</title>", f"<style>{_CSS}</style></head><body>",
           "<h1>Archive report</h1>",
           f'<p class="note">{_count(rep.matches, "match")}, {_count(rep.events, "event")}.</p>']
    for s in rep.sections:
        out.append(f"<h2>{html.escape(s.title)}</h2>")
        chart = CHARTS.get(s.name)
        if chart and s.rows and chart[0] in s.columns:
            vi = s.columns.index(chart[0])
            labels = [chart[1].format(**dict(zip(s.columns, r, strict=True)))
                      for r in s.rows[:40]]
            values = [float(r[vi]) if r[vi] is not None else math.nan for r in s.rows[:40]]
            out.append(f'<p class="note">{html.escape(chart[0])}</p>')
            out.append(bar_chart(labels, values))
        if not s.rows:
            out.append('<p class="note">No data.</p>')
            continue
        out.append("<table><tr>" + "".join(f"<th>{html.escape(c)}</th>" for c in s.columns)
                   + "</tr>")
        for r in s.rows:
            href = links.get(str(r[s.columns.index("source_path")])) if (
                links and "source_path" in s.columns) else None
            out.append("<tr>" + "".join(
                f'<td><a href="{html.escape(href)}">{html.escape(_fmt(v))}</a></td>'
                if href and c == "match_id" else f"<td>{html.escape(_fmt(v))}</td>"
                for c, v in zip(s.columns, r, strict=True)) + "</tr>")
        out.append("</table>")
    out.append("</body></html>")
    return "\n".join(out) + "\n"
