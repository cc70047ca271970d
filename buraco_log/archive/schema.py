"""The archive's tables: Arrow schemas with a description of every column.

These schemas are the contract with every Parquet reader (DuckDB, Spark, Polars, pandas):
``schema/archive.md`` is generated from them (:func:`markdown`) and a test keeps the committed
file equal to the generated one. Within one layout version columns are only ever added, at the
end; any other change bumps :data:`ARCHIVE_VERSION`.
"""

from __future__ import annotations

import pyarrow as pa  # type: ignore[import-untyped]

from buraco_log.columns import KINDS as KINDS  # re-exported: the archive reads them here
from buraco_log.melds import CANASTRA_CLASSES as CANASTRA_CLASSES
from buraco_log.safetext import bytes_escaped

ARCHIVE_VERSION = 2
"""Version of the archive layout and schemas, recorded in ``archive.json``.

Version 2 stores the ``events`` table's files in a smaller form (one ``cards`` byte string
instead of ``card`` and ``cards``; ``stock``, ``pile`` and the ``pt`` counts derived by the view
instead of stored). The view still presents version 1's columns.
"""

def storable(text: str) -> str:
    """``text`` as a string column can hold it (UTF-8). A file name that is not UTF-8 reaches
    Python with each undecodable byte as a lone surrogate, which Arrow cannot encode: ingest
    of a directory holding one such log failed whole ("internal error: UnicodeEncodeError").
    Each such byte is written ``\\xNN`` (any other lone surrogate ``\\udNNN``), as error
    lines show it (:func:`buraco_log.safetext.bytes_escaped`)."""
    return bytes_escaped(text)


PARTITIONS = ("preset", "month")
"""Hive partition keys of the per-match tables (directory names, not columns in the files)."""

TABLES = ("matches", "hands", "events", "melds", "players", "errors")
PARTITIONED = ("matches", "hands", "events", "melds", "players")

# Event kinds (columns.KINDS, the log's stable tags) are stored dictionary-encoded.

_KIND = pa.dictionary(pa.int8(), pa.string())


def _f(name: str, type_: pa.DataType, doc: str, nullable: bool = True) -> pa.Field:
    return pa.field(name, type_, nullable=nullable, metadata={"doc": doc})


GAME = "game id: the first 63 bits of the head digest (joins every table)"

MATCHES = pa.schema([
    _f("game_id", pa.int64(), GAME, False),
    _f("match_id", pa.string(), "the match id recorded in MatchStarted", False),
    _f("digest", pa.string(), "head digest of the log (SHA-256 chain over every event): the "
       "content identity used for de-duplication", False),
    _f("file_sha256", pa.string(), "SHA-256 of the log file's bytes as ingested", False),
    _f("source_path", pa.string(), "path of the log file when it was ingested", False),
    _f("file_bytes", pa.int64(), "size of the log file", False),
    _f("log_format", pa.string(), "binary or jsonl", False),
    _f("rules_name", pa.string(), "name of the rules (preset or house rules)", False),
    _f("rules_json", pa.string(), "every rules knob, as JSON", False),
    _f("n_players", pa.int8(), "number of players", False),
    _f("n_sides", pa.int8(), "number of sides (partnerships with 4 or 6 players)", False),
    _f("players", pa.list_(pa.string()), "player names in seat order", False),
    _f("first_dealer", pa.int8(), "seat that dealt the first hand", False),
    _f("first_player", pa.int8(), "seat that moved first in the first hand", False),
    _f("winner_side", pa.int8(), "winning side", False),
    _f("totals", pa.list_(pa.int32()), "final score of each side", False),
    _f("margin", pa.int32(), "winner's total minus the best other total", False),
    _f("hands", pa.int16(), "hands played", False),
    _f("events", pa.int32(), "events in the log", False),
    _f("started_at", pa.timestamp("ms", tz="UTC"), "MatchStarted time, when recorded"),
    _f("ended_at", pa.timestamp("ms", tz="UTC"), "MatchEnded time, when recorded"),
    _f("verdict", pa.string(), "audit verdict: always ok for stored matches", False),
    _f("integrity", pa.string(), "sealed or unsealed", False),
    _f("provenance", pa.string(), "deal provenance: committed, plain_seeds, mixed or none "
       "(a committed match stripped of its commitment and reveal is stored as none or "
       "plain_seeds; see Settings below)",
       False),
    _f("generator", pa.string(), "MatchStarted metadata 'generator' (simulated matches)"),
    _f("ingested_at", pa.timestamp("ms", tz="UTC"), "when the batch was committed", False),
    _f("batch", pa.string(), "ingest batch id", False),
    _f("signed", pa.bool_(), "the log holds signature records (format version 2; "
       "docs/signing.md); checked against the chain, not against keys", False),
    _f("key_id", pa.string(), "the signing key id MatchStarted records, when it records one"),
])

HANDS = pa.schema([
    _f("game_id", pa.int64(), GAME, False),
    _f("hand", pa.int16(), "hand number, from 0", False),
    _f("side", pa.int8(), "side this row scores", False),
    _f("dealer", pa.int8(), "dealing seat", False),
    _f("reason", pa.string(), "how the hand ended: went_out or stock_out", False),
    _f("went_out_seat", pa.int8(), "seat that went out (null on stock_out)"),
    _f("went_out", pa.bool_(), "this side went out", False),
    _f("turns", pa.int16(), "turns played in the hand", False),
    _f("events", pa.int16(), "events from HandStarted to HandEnded inclusive", False),
    _f("start_seq", pa.int32(), "seq of HandStarted", False),
    _f("end_seq", pa.int32(), "seq of HandEnded", False),
    _f("table_points", pa.int32(), "points of the cards in the side's melds", False),
    _f("canastra_bonus", pa.int32(), "canastra bonuses", False),
    _f("going_out", pa.int32(), "going-out bonus", False),
    _f("relancinho", pa.int32(), "relancinho bonus", False),
    _f("hand_penalty", pa.int32(), "points of cards left in the side's hands (positive)", False),
    _f("morto_penalty", pa.int32(), "morto-not-taken penalty (positive)", False),
    _f("total", pa.int32(), "the side's score for the hand", False),
    *(_f(f"canastras_{c}", pa.int8(), f"{c.replace('_', '-')} canastras", False)
      for c in CANASTRA_CLASSES),
    _f("morto_seq", pa.int32(), "seq at which the side took its morto (null: not taken)"),
    _f("morto_turn", pa.int16(), "turn of the hand (from 0) in which the morto was taken"),
    _f("morto_direct", pa.bool_(), "the morto was taken directly (by melding out)"),
    _f("hand_won", pa.bool_(), "the side scored the most this hand (ties: all tied sides)",
       False),
    _f("first_to_morto", pa.bool_(), "the side took its morto before any other side this hand",
       False),
    _f("pile_pickups", pa.list_(pa.int16()), "size of each discard pile the side took this "
       "hand, in order (the same facts as the pt rows of events, kept here for fast analysis)",
       False),
])

EVENTS = pa.schema([
    _f("game_id", pa.int64(), GAME, False),
    _f("seq", pa.int32(), "event seq, from 0", False),
    _f("hand", pa.int16(), "hand number (-1 before the first deal)", False),
    _f("kind", _KIND, "event tag: " + " ".join(KINDS), False),
    _f("seat", pa.int8(), "seat that moved (null for match and hand events)"),
    _f("cards", pa.binary(), "the event's cards, one byte per card code: the card of dr, rj, "
       "dc; the top card of pt; the upcard of hs; the cards of ml, lo, rt (null: no cards)"),
    _f("meld", pa.int8(), "meld index within the side's melds (ml, lo)"),
    _f("count", pa.int16(), "mt: cards taken (the morto); null on every other row, pt too (its "
       "count is the pile size before it, which the view derives)"),
    _f("direct", pa.bool_(), "mt: the morto was taken directly"),
    _f("stock", pa.int16(), "hs: the stock size after the deal; null on every other row (the "
       "view derives the size after every event)"),
])
"""The ``events`` files as stored. The ``events`` view presents :data:`EVENTS_VIEW`."""

EVENTS_VIEW = pa.schema([
    _f("game_id", pa.int64(), GAME, False),
    _f("seq", pa.int32(), "event seq, from 0", False),
    _f("hand", pa.int16(), "hand number (-1 before the first deal)", False),
    _f("kind", pa.string(), "event tag: " + " ".join(KINDS), False),
    _f("seat", pa.int8(), "seat that moved (null for match and hand events)"),
    _f("card", pa.uint8(), "the one card of dr, rj, dc; the top card of pt; the upcard of hs "
       "(the first byte of the stored `cards`)"),
    _f("cards", pa.list_(pa.uint8()), "cards of ml, lo, rt (the stored `cards` bytes)"),
    _f("meld", pa.int8(), "meld index within the side's melds (ml, lo)"),
    _f("count", pa.int16(), "cards taken: the pile size for pt (derived: the pile before it), "
       "the morto size for mt (stored)"),
    _f("direct", pa.bool_(), "mt: the morto was taken directly"),
    _f("stock", pa.int16(), "stock size after the event (derived: the stored deal size of the "
       "hand's hs row minus the hand's dr rows so far; 0 before the first deal)", False),
    _f("pile", pa.int16(), "discard pile size after the event (derived: dc and rj rows and an "
       "hs upcard since the hand's last pt, or since its hs)", False),
])
"""What the ``events`` view presents: the columns of layout version 1, three of them derived."""

MELDS = pa.schema([
    _f("game_id", pa.int64(), GAME, False),
    _f("hand", pa.int16(), "hand number", False),
    _f("side", pa.int8(), "side owning the meld", False),
    _f("meld", pa.int8(), "meld index within the side's melds", False),
    _f("kind", pa.string(), "set or run", False),
    _f("length", pa.int8(), "number of cards", False),
    _f("canastra", pa.string(), "canastra class (null: not a canastra)"),
    _f("laid_by", pa.int8(), "seat that laid the meld", False),
    _f("points", pa.int16(), "card points of the meld", False),
    _f("bonus", pa.int16(), "canastra bonus of the meld", False),
    _f("cards", pa.list_(pa.uint8()), "the cards, in the order laid", False),
])

PLAYERS = pa.schema([
    _f("game_id", pa.int64(), GAME, False),
    _f("seat", pa.int8(), "seat", False),
    _f("side", pa.int8(), "side of the seat", False),
    _f("name", pa.string(), "player name", False),
    _f("player_id", pa.string(), "player id, when recorded"),
    _f("player", pa.string(), "identity used across matches: the id, else the name", False),
    _f("won", pa.bool_(), "the seat's side won the match", False),
    _f("total", pa.int32(), "final total of the seat's side", False),
    _f("first", pa.bool_(), "the seat moved first in the first hand", False),
    _f("n_players", pa.int8(), "number of players in the match", False),
])

ERRORS = pa.schema([
    _f("file_sha256", pa.string(), "SHA-256 of the file's bytes; empty for a file never "
       "read (not a regular file, or unreadable)", False),
    _f("source_path", pa.string(), "path of the log file", False),
    _f("file_bytes", pa.int64(), "size of the file"),
    _f("code", pa.string(), "error class: integrity, provenance, legality, scoring, "
       "signing, incomplete, duplicate, range (a time the archive cannot store, rule "
       "archive.at_range) or internal", False),
    _f("rule", pa.string(), "stable rule id of the first finding (see buraco_log.ruleids)",
       False),
    _f("message", pa.string(), "one line naming what is wrong", False),
    _f("seq", pa.int32(), "seq of the first finding, when known"),
    _f("match_id", pa.string(), "match id, when readable"),
    _f("digest", pa.string(), "head digest of the intact events"),
    _f("verdict_json", pa.string(), "the full audit verdict, as JSON (buraco-log audit)"),
    _f("ingested_at", pa.timestamp("ms", tz="UTC"), "when the batch was committed", False),
    _f("batch", pa.string(), "ingest batch id", False),
])

SCHEMAS: dict[str, pa.Schema] = {
    "matches": MATCHES, "hands": HANDS, "events": EVENTS, "melds": MELDS, "players": PLAYERS,
    "errors": ERRORS,
}

VIEW_SCHEMAS: dict[str, pa.Schema] = {**SCHEMAS, "events": EVENTS_VIEW}
"""The columns each view presents (every table's view is its files, except ``events``)."""

SORT_KEYS: dict[str, tuple[str, ...]] = {
    "matches": ("game_id",),
    "hands": ("game_id", "hand", "side"),
    "events": ("game_id", "seq"),
    "melds": ("game_id", "hand", "side", "meld"),
    "players": ("game_id", "seat"),
    "errors": ("source_path",),
}

_TITLES = {
    "matches": "One row per match.",
    "hands": "One row per hand per side: the score breakdown, canastras by class, going out "
             "and the morto.",
    "events": "One row per event, flattened. Sorted by game_id, seq within each file. The "
              "`events` view presents these columns; the files store a smaller form of them "
              "(next table), from which the view derives `card`, `cards`, `stock`, `pile` and "
              "the `count` of pt rows with window functions over each hand.",
    "melds": "The melds on the table at the end of each hand.",
    "players": "One row per match per seat.",
    "errors": "One row per log that failed the checks on the way in (not partitioned).",
}


def _type_name(t: pa.DataType) -> str:
    if pa.types.is_dictionary(t):
        return f"dictionary<{t.value_type}>"
    return str(t)


def _columns(schema: pa.Schema, partitioned: bool) -> list[str]:
    out = ["| column | type | null | description |", "|---|---|---|---|"]
    for field in schema:
        doc = (field.metadata or {}).get(b"doc", b"").decode()
        out.append(f"| `{field.name}` | {_type_name(field.type)} | "
                   f"{'yes' if field.nullable else 'no'} | {doc} |")
    if partitioned:
        out.append("| `preset` | string (partition) | no | rules name, made path-safe |")
        out.append("| `month` | string (partition) | no | YYYY-MM of started_at, or "
                   "`unknown` |")
    return out


def markdown() -> str:
    """The text of ``schema/archive.md`` (regenerate: ``python -m buraco_log.archive.schema``)."""
    out = [
        "# Archive tables",
        "",
        "Generated from `buraco_log/archive/schema.py`; regenerate with "
        "`python -m buraco_log.archive.schema > schema/archive.md`. "
        f"Archive layout version {ARCHIVE_VERSION}. The layout is described in "
        "docs/archive.md.",
        "",
        "Files are zstd Parquet under `<archive>/<table>/preset=<rules>/month=<YYYY-MM>/` "
        "(Hive partitions; `month=unknown` when the log records no time). `preset` and `month` "
        "are partition columns: readers get them from the directory names.",
    ]
    for name, schema in VIEW_SCHEMAS.items():
        out += ["", f"## {name}", "", _TITLES[name], ""]
        out += _columns(schema, name in PARTITIONED)
        if schema is not SCHEMAS[name]:
            out += ["", f"Stored in the `{name}` files (what a plain Parquet reader sees):", ""]
            out += _columns(SCHEMAS[name], name in PARTITIONED)
            out += ["", "Readers without the library derive the view's columns as the view "
                    "does: `card` is the one byte of `cards` on dr, rj, dc, pt and hs rows and "
                    "`cards` the bytes on ml, lo and rt rows; over each `game_id, hand` ordered "
                    "by `seq`, `stock` = the running sum of `stock` minus the running count of "
                    "dr rows; `pile` = the running count of dc, rj and hs-with-upcard rows "
                    "minus its value at the last pt row so far; a pt row's `count` = that "
                    "running count minus its value at the pt row before it "
                    "(`buraco_log/archive/views.py`, `EVENTS_SQL`)."]
    out += ["", *_NOTES]
    return "\n".join(out) + "\n"


_NOTES = """## Settings

`archive.json` holds the layout version and, under `"settings"`, the archive's own settings
(`buraco_log.archive.store.Settings`). One so far:

- `require_commitment` (default false), the same name as the audit's setting
  (docs/audit-settings.md). An archive of a site that commits its deals turns it on with
  `buraco-log ingest --require-commitment ... --archive DIR` (`--no-require-commitment` turns
  it off); it is kept and applies to every later ingest. While it is on, a match whose deals
  no commitment backs (a committed match whose commitment and reveal were stripped) is
  refused into `errors` with its `deal.*` rule instead of stored. (A match cut before its
  `MatchEnded`, which carries the reveal, is never stored: only finished matches are.)
  Matches ingested before it was turned on stay; find those that carry no commitment with
  `SELECT match_id, source_path, provenance FROM matches WHERE provenance <> 'committed'`.

A log that is not a regular file (a FIFO, a device such as a link to `/dev/zero`, a socket)
is never opened: ingest records it in `errors` with rule `log.filetype` and goes on; nor is a
file of more than 2,147,483,647 bytes read (rule `log.limit`: more than any match log). A time
(`at` of MatchStarted or MatchEnded) outside years 1 to 9999 UTC is refused with code `range`,
rule `archive.at_range`.

## Queries

`buraco-log query` (and `buraco_log.archive.query` / `open_query`) runs exactly one statement
that DuckDB parses as a SELECT, or an `EXPLAIN` / `EXPLAIN ANALYZE` of one: what `EXPLAIN`
wraps is parsed and checked too (`EXPLAIN ANALYZE COPY ... TO` runs the COPY). DuckDB may open
only the committed Parquet files (`allowed_paths`), no directory, with external access off and
the configuration locked; the committed files are read-only on disk (mode 0444). Results
stream out in batches of 10,000 rows (`--format table` holds at most 100,000 rows), and the
whole query process, DuckDB and Python, is held under `--memory-limit` plus 384 MiB
(`RLIMIT_DATA`): functions that build one huge value (`repeat`, `lpad`, `range(n)` as a list)
allocate outside DuckDB's own limit, and now fail with `out of memory under the <limit>
limit` instead of growing without bound.""".splitlines()


if __name__ == "__main__":
    print(markdown(), end="")
