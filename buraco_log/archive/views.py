"""DuckDB views over an archive, and sandboxed read-only queries.

:func:`create_views` defines one view per table over the committed Parquet files (so a half-
committed batch is never seen). :func:`connect` with ``sandbox=True`` (what
``buraco-log query`` uses) then locks the connection down, in this order:

1. extension auto-install and auto-load off, community and unsigned extensions refused;
2. ``allowed_paths`` = the committed Parquet files (and the current ratings file) only, not
   the archive's directories: DuckDB cannot create, glob or list anything, even inside the
   archive; spilling to disk off (``temp_directory=''``);
3. the views are created (they need file access to read the Parquet footers);
4. ``enable_external_access=false``: from now on no other file can be opened, written,
   attached, globbed or loaded as an extension (DuckDB resolves ``..`` and symlinks);
5. ``lock_configuration=true``: no ``SET``/``RESET``/``PRAGMA`` can undo any of it;
6. every query must be exactly one statement that DuckDB parses as a ``SELECT``, or an
   ``EXPLAIN`` / ``EXPLAIN ANALYZE`` of one (what ``EXPLAIN`` wraps is parsed and checked too:
   ``EXPLAIN ANALYZE COPY ... TO`` executes the ``COPY``), whose WITH clause holds no
   INSERT, UPDATE, DELETE or COPY (DuckDB 2.0 runs them inside a SELECT), that calls none
   of the table functions that act rather than read (:data:`ACTING_TABLE_FUNCTIONS`:
   ``checkpoint()``, ``enable_logging()``, ``query('...')``, ...).

The committed files themselves are written read-only (mode 0444, :mod:`.store`), so even the
files DuckDB may open cannot be overwritten by a user without root. DuckDB's own documentation
says its settings are not a security boundary on their own; the statement check is a second
wall, and the command line's `query` adds a third, the kernel's (:mod:`.confine`: its process
may write no file but its output, read none outside the archive and its code, and connect to
no TCP port), where Linux has Landlock. A hostile user should still get an OS-level sandbox.
"""

from __future__ import annotations

import contextlib
import decimal
import itertools
import os
import re
import resource
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.parquet as pq  # type: ignore[import-untyped]

from buraco_log.audit.files import walk
from buraco_log.errors import ArchiveError

from . import store
from .duck import duckdb
from .schema import PARTITIONED, TABLES, VIEW_SCHEMAS

if TYPE_CHECKING:  # duckdb.typing before 1.4
    from duckdb.sqltypes import DuckDBPyType

DEFAULT_THREADS = 2
MAX_THREADS = 1024
DEFAULT_MEMORY_LIMIT = "1GB"
ALLOWED_STATEMENTS = ("SELECT", "EXPLAIN")


def _sql_type(t: pa.DataType) -> str:
    if pa.types.is_dictionary(t):
        return _sql_type(t.value_type)
    if pa.types.is_list(t):
        return _sql_type(t.value_type) + "[]"
    simple = {
        pa.int8(): "TINYINT", pa.int16(): "SMALLINT", pa.int32(): "INTEGER",
        pa.int64(): "BIGINT", pa.uint8(): "UTINYINT", pa.string(): "VARCHAR",
        pa.bool_(): "BOOLEAN", pa.binary(): "BLOB",
    }
    if t in simple:
        return simple[t]
    if pa.types.is_timestamp(t):
        return "TIMESTAMPTZ" if t.tz else "TIMESTAMP"
    raise TypeError(f"no SQL type for {t}")  # a program error: a new column type


def _quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


_GLOB = re.compile(r"([*?\[])")


def literal(path: str) -> str:
    """``path`` as a DuckDB file pattern that matches that file alone. DuckDB globs every
    path it is given to read: an archive at ``club[1]`` read the files of ``club1`` (a copy
    of it, its batch ids the same), and its rows were shown as this archive's. Each glob
    character is put in a class of its own (``[[]``), which DuckDB matches literally."""
    return _GLOB.sub(r"[\1]", path)


# The events view over the stored form (schema.EVENTS): the cards split back into card and
# cards, and the counters the files leave out derived over each hand in seq order. Two window
# levels: the running counts, then the last pickup's running count (the pile resets there).
# DuckDB drops the windows from any query that reads none of stock, pile and count. The
# windows see one-byte flags, not the kind strings or the card bytes, and are partitioned by
# preset and month too (constant within a game), so filters on those, like filters on game_id,
# are applied before the windows rather than after them. (`card` tests the three kinds that
# are not single cards: DuckDB plans an IN list of five as a join that no query can prune.)
# The running sums are cast back to SMALLINT (a hand holds at most a few hundred events):
# DuckDB sums into 128-bit integers, and the second window level would carry them, which
# took about 30 % more memory over a whole table.
EVENTS_SQL = """
SELECT game_id, seq, hand, kind, seat,
  CASE WHEN kind NOT IN ('ml', 'lo', 'rt') THEN ascii(decode(cards))::UTINYINT END AS card,
  CASE WHEN kind IN ('ml', 'lo', 'rt')
    THEN [ascii(c)::UTINYINT FOR c IN string_split(decode(cards), '') IF c <> ''] END AS cards,
  meld,
  CASE WHEN pickup THEN (adds - coalesce(max(CASE WHEN pickup THEN adds END) OVER
    (hand_rows ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0))::SMALLINT
    ELSE count END AS count,
  direct,
  (dealt - draws)::SMALLINT AS stock,
  (adds - coalesce(max(CASE WHEN pickup THEN adds END) OVER
    (hand_rows ROWS UNBOUNDED PRECEDING), 0))::SMALLINT AS pile,
  preset, month
FROM (
  SELECT *,
    (sum(adds_one) OVER (hand_rows ROWS UNBOUNDED PRECEDING))::SMALLINT AS adds,
    (sum(draws_one) OVER (hand_rows ROWS UNBOUNDED PRECEDING))::SMALLINT AS draws,
    coalesce(sum(stock) OVER (hand_rows ROWS UNBOUNDED PRECEDING), 0)::SMALLINT AS dealt
  FROM (
    SELECT *,
      (kind IN ('dc', 'rj') OR (kind = 'hs' AND cards IS NOT NULL))::UTINYINT AS adds_one,
      (kind = 'dr')::UTINYINT AS draws_one,
      kind = 'pt' AS pickup
    FROM {source})
  WINDOW hand_rows AS (PARTITION BY preset, month, game_id, hand ORDER BY seq)
)
WINDOW hand_rows AS (PARTITION BY preset, month, game_id, hand ORDER BY seq)
"""


ADDED_COLUMNS = frozenset({"matches"})
"""Tables that gained columns within this layout version: their files are read by name."""


def create_views(con: duckdb.DuckDBPyConnection, archive: str | os.PathLike[str], *,
                 files: dict[str, list[str]] | None = None) -> None:
    """Create the views ``matches hands events melds players errors`` over ``archive``
    (over ``files``, its committed files per table, when the caller listed them)."""
    from .keyindex import uniform
    root = store.check_archive(str(archive))
    files = store.committed_files(root) if files is None else files
    # every matches file of the columns this version writes (the key index says so): no
    # footer of each read to line them up (3 s a query at 1,000 nightly batches)
    records = {r["batch"]: r for r in store.manifests(root)}
    wanted = {store.batch_of(os.path.basename(p)) or "" for p in files["matches"]}
    same = bool(wanted) and wanted <= records.keys() and uniform(root, [records[b]
                                                                         for b in wanted])
    for table in TABLES:
        paths = files[table]
        if paths:
            listing = "[" + ", ".join(_quote(literal(p)) for p in paths) + "]"
            hive = (", hive_partitioning = true, hive_types = {'preset': 'VARCHAR', "
                    "'month': 'VARCHAR'}" if table in PARTITIONED else
                    ", hive_partitioning = false")
            # One schema per layout version, so no union_by_name (it costs every query a
            # footer read per file), except where columns were added within the layout:
            # matches gained `signed` and `key_id` (files written before read them as NULL).
            union = ", union_by_name = true" if table in ADDED_COLUMNS and not same else ""
            source = f"read_parquet({listing}{hive}{union})"
            if table == "events":
                body = EVENTS_SQL.format(source=source)
            else:
                body = f"SELECT * FROM {source}"
            if table in ADDED_COLUMNS and not same:  # none has them yet: NULL, at the end
                have = {r[0] for r in con.execute(f"DESCRIBE SELECT * FROM {source}").fetchall()}
                _refuse_foreign(table, paths, have)
                absent = [f"CAST(NULL AS {_sql_type(f.type)}) AS {f.name}"
                          for f in VIEW_SCHEMAS[table] if f.name not in have]
                if absent:
                    body = f"SELECT *, {', '.join(absent)} FROM {source}"
        else:  # an empty table with the documented columns
            cols = [f"CAST(NULL AS {_sql_type(f.type)}) AS {f.name}" for f in VIEW_SCHEMAS[table]]
            if table in PARTITIONED:
                cols += ["CAST(NULL AS VARCHAR) AS preset", "CAST(NULL AS VARCHAR) AS month"]
            body = f"SELECT {', '.join(cols)} WHERE false"
        con.execute(f"CREATE OR REPLACE VIEW {table} AS {body}")


def _refuse_foreign(table: str, paths: list[str], have: set[str]) -> None:
    """Files read by name hold no column the table does not have: another table's file in
    place of one (its rows were shown as the table's, NULL where the names differ) is an
    :class:`ArchiveError` naming it."""
    known = {f.name for f in VIEW_SCHEMAS[table]} | {"preset", "month"}
    if have <= known:
        return
    for path in paths:
        extra = sorted(set(pq.read_schema(path).names) - known)
        if extra:
            raise ArchiveError(f"{path}: damaged archive file: column {extra[0]} is no column "
                               f"of {table}")
    raise ArchiveError(f"the {table} files hold columns that are not {table}'s: "
                       f"{', '.join(sorted(have - known))}")


NO_DIRECTORY = "/dev/null"
"""What a sandboxed connection shows for a directory of DuckDB's own that it never uses."""


def connect(
    archive: str | os.PathLike[str],
    *,
    sandbox: bool = True,
    threads: int = DEFAULT_THREADS,
    memory_limit: str = DEFAULT_MEMORY_LIMIT,
) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB connection with the archive's views (locked down if ``sandbox``).
    A committed file that a compaction or drop removes while the views are made (they read
    the footers) is no error: the archive is listed again."""
    for _ in range(store.RELISTS - 1):
        with contextlib.suppress(store.Changed):
            return _connect(archive, sandbox, threads, memory_limit)
    return _connect(archive, sandbox, threads, memory_limit)


def _connect(archive: str | os.PathLike[str], sandbox: bool, threads: int, memory_limit: str
             ) -> duckdb.DuckDBPyConnection:
    root = store.check_archive(str(archive))
    if not 1 <= threads <= MAX_THREADS:  # DuckDB starts them all at once: 100,000 ran 100 s+
        raise ArchiveError(f"threads: {threads} is out of range (1 to {MAX_THREADS})")
    config: dict[str, Any] = {"threads": threads, "memory_limit": memory_limit}
    if sandbox:
        _refuse_symlinks(root)
        config.update({
            "autoinstall_known_extensions": False,
            "autoload_known_extensions": False,
            "allow_community_extensions": False,
            "allow_unsigned_extensions": False,
            "allow_persistent_secrets": False,  # never read from the home directory
            # nor named: current_setting('secret_directory') and duckdb_settings() showed
            # "/root/.duckdb/stored_secrets" as data, the home directory of the user running it
            "secret_directory": NO_DIRECTORY,
            "temp_directory": "",
        })
    try:
        con = duckdb.connect(":memory:", config=config)
    except duckdb.Error as exc:
        raise ArchiveError(f"cannot open DuckDB: {exc}") from None
    _LIVE.add(con)
    try:
        con.execute("SET parquet_metadata_cache = true")  # footers read once per connection
        # one listing for both: listed twice, a compaction committed in between had the
        # views read a file the sandbox did not allow ("damaged archive file: Cannot access
        # file - file system operations are disabled by configuration")
        files = store.committed_files(root)
        if sandbox:
            con.execute("SET allowed_paths = [" + ", ".join(_quote(p) for p in
                                                            _readable(root, files)) + "]")
        create_views(con, root, files=files)
        if sandbox:
            con.execute("SET enable_external_access = false")
            con.execute("SET lock_configuration = true")
    except duckdb.Error as exc:  # the views read the Parquet footers: limits can bite here
        con.close()
        gone = _vanished(_first_line(exc), root)
        if gone is not None:
            raise gone from None
        damaged = _damaged_footer(_first_line(exc), root)
        if damaged is not None:
            raise damaged from None
        hint = (f" under the {memory_limit} limit (--memory-limit, --threads)"
                if isinstance(exc, duckdb.OutOfMemoryException) else "")
        # a damaged footer DuckDB names no file of ("TProtocolException: Invalid data",
        # "invalid TType"): looked for, as a query's damaged file is
        raise _locate(ArchiveError(f"cannot open the archive's views{hint}: "
                                   f"{_first_line(exc)}"), root) from None
    except BaseException:
        con.close()
        raise
    return con


_LIVE: weakref.WeakSet[duckdb.DuckDBPyConnection] = weakref.WeakSet()
"""The connections :func:`connect` made that are still referenced (closed ones too)."""


def interrupt_all() -> None:
    """Interrupt whatever each connection of :func:`connect` is running; callable from any
    thread (the command line's, woken by SIGINT or SIGTERM). A KeyboardInterrupt raised while
    DuckDB runs a query reaches DuckDB through its check for signals, which dropped it about
    half the time (and took no later signal), so Ctrl-C on a long `report` ran the query to
    its end, and on a `query` to its time limit. An interrupt is a flag DuckDB checks as it
    works."""
    for con in list(_LIVE):
        with contextlib.suppress(duckdb.Error):
            con.interrupt()


_ERROR_CLASS = re.compile(r"^(\w+Exception: )?([A-Z][\w ]* Error: )?")


def _damaged_footer(line: str, root: str, *, confirm: bool = False) -> ArchiveError | None:
    """DuckDB's error about a committed file whose footer it cannot read (a file cut short,
    in a batch committed before records kept sizes), led by that file's name as every other
    damaged file is: it was "cannot open the archive's views: Invalid Input Error: No magic
    bytes found at end of file '...'". With ``confirm`` (an error of the user's SQL), only a
    file that is damaged indeed (:func:`_damage_of`)."""
    if not _DAMAGE.search(line):
        return None
    with contextlib.suppress(ArchiveError):
        for paths in store.committed_files(root).values():
            named = next((p for p in paths if f"'{p}'" in line or f'"{p}"' in line), None)
            if named is not None and confirm and _damage_of(root, named) is None:
                return None
            if named is not None:
                why = line.replace(f" '{named}'", "").replace(f' "{named}"', "")
                why = _ERROR_CLASS.sub("", why)  # "InvalidInputException: Invalid Input Error: "
                return ArchiveError(f"{named}: damaged archive file: {why}")
    return None


def _readable(root: str, committed: dict[str, list[str]]) -> list[str]:
    """Every file a sandboxed query may open: the ``committed`` files and the current
    ratings."""
    paths = [p for files in committed.values() for p in files]
    ratings = store.current_ratings(root)
    paths += [ratings] if ratings is not None else []
    # the patterns the views read them by too (:func:`literal`): a path with a glob character
    return paths + [literal(p) for p in paths if literal(p) != p]


def _refuse_symlinks(root: str) -> None:
    """DuckDB resolves symlinks itself; refusing them here keeps the archive a plain tree."""
    for dirpath, dirs, names in walk(root):
        for name in dirs + names:
            if os.path.islink(os.path.join(dirpath, name)):
                raise ArchiveError(f"{os.path.join(dirpath, name)}: symbolic links are not "
                                   "allowed inside an archive")


MAX_SQL = 256 << 10
"""Bytes of SQL a query may hold. DuckDB parses and plans without heeding an interrupt, so
the time limit cannot stop that part: 4 MB of ``OR`` terms ran 15 s past a 2 s limit, 256 KiB
of anything runs a few seconds at most. (A command-line argument holds 128 KiB.)"""


def check_sql(sql: str) -> None:
    """Exactly one statement DuckDB parses as a SELECT, or an EXPLAIN of one, in at most
    :data:`MAX_SQL` bytes of UTF-8; else :class:`ArchiveError`."""
    try:
        size = len(sql.encode("utf-8"))
    except UnicodeEncodeError as exc:  # bytes that were not UTF-8 on the command line
        bad = ord(sql[exc.start])
        what = (f"byte 0x{bad - 0xDC00:02x}" if 0xDC80 <= bad <= 0xDCFF  # surrogateescape
                else f"a lone surrogate U+{bad:04X}")
        raise ArchiveError(f"query: the SQL is not UTF-8 text: character {exc.start + 1} is "
                           f"{what}") from None
    if size > MAX_SQL:
        raise ArchiveError(f"query: the SQL is {size:,} bytes long, more than the "
                           f"{MAX_SQL:,} a query may hold")
    try:
        statements = duckdb.extract_statements(sql)
    except duckdb.Error as exc:
        raise ArchiveError(f"query: {_first_line(exc)}") from None
    if len(statements) != 1:
        raise ArchiveError(f"query: exactly one statement is allowed, got {len(statements)}")
    kind = _as_written(statements[0].query, _kind(statements[0]))
    if kind == "EXPLAIN":
        for inner in _explained(statements[0].query):
            if inner != "SELECT":
                raise ArchiveError(f"query: only read-only SELECT statements are allowed, not "
                                   f"EXPLAIN of {inner}")
    elif kind == "MULTI":  # what DuckDB makes of a PIVOT that does not list its values
        raise ArchiveError("query: only read-only SELECT statements are allowed, not a PIVOT "
                           "whose ON values are not listed (DuckDB runs it as a CREATE TYPE "
                           "and a SELECT): list them, PIVOT ... ON col IN (v1, v2, ...)")
    elif kind not in ALLOWED_STATEMENTS:
        raise ArchiveError(f"query: only read-only SELECT statements are allowed, not {kind}")
    _refuse_modifying_ctes(sql)
    _refuse_acting_functions(sql)


# What DuckDB 2.0 lets a WITH clause's body be besides a SELECT ("A CTE body must be a SELECT,
# INSERT, UPDATE, DELETE, or COPY TO statement"): it runs as part of the SELECT the clause
# leads, whose type is SELECT all the same.
CTE_STATEMENTS = frozenset({"COPY", "INSERT", "UPDATE", "DELETE"})


def _refuse_modifying_ctes(sql: str) -> None:
    """Refuse a WITH clause whose body is an INSERT, UPDATE, DELETE or COPY TO: a
    parenthesis, then one of :data:`CTE_STATEMENTS` (as DuckDB's tokenizer reads the SQL: a
    comment between changes nothing), up to the matching parenthesis, unless DuckDB reads it
    as an expression (``(update)``, a column). ``WITH c AS (COPY (SELECT 42
    AS x) TO 'PART' (FORMAT csv, USE_TMP_FILE false)) SELECT * FROM c`` overwrote a committed
    file: the committed files are the paths the sandbox lets DuckDB open."""
    every = list(duckdb.tokenize(sql))
    spans = [(off, sql[off:every[i + 1][0] if i + 1 < len(every) else len(sql)].strip(), kind)
             for i, (off, kind) in enumerate(every) if kind != duckdb.token_type.comment]
    operator = duckdb.token_type.operator
    for i, (_off, text, kind) in enumerate(spans[:-1]):
        start, word, after = spans[i + 1]
        if kind != operator or not text.endswith("(") or after != duckdb.token_type.keyword \
                or word.upper() not in CTE_STATEMENTS:
            continue
        depth, end = 1, len(sql)
        for off, inner, what in spans[i + 1:]:
            if what == operator:  # a parenthesis inside a string is a string token
                depth += inner.count("(") - inner.count(")")
                if depth <= 0:
                    end = off
                    break
        if _statement_not_expression(sql[start:end]):
            raise ArchiveError(f"query: only read-only SELECT statements are allowed, not "
                               f"{word.upper()} in a WITH clause (DuckDB runs it as part of "
                               "the SELECT)")


# Table functions a SELECT may call that act rather than read: each is a statement the check
# refuses (CHECKPOINT, SET, CREATE) in the form of a table function, or runs SQL given as a
# string, which this check never sees (query('SELECT * FROM chec' || 'kpoint()') ran it).
# The sandbox's settings stop their file and setting changes; these change the in-memory
# database all the same (external resource types, the log store), so they are refused
# before DuckDB sees them. tests/archive/test_fault_probes_archive39.py fails on a DuckDB
# whose table functions are not all either here or known to only read.
ACTING_TABLE_FUNCTIONS: dict[str, str] = {
    **dict.fromkeys(("checkpoint", "force_checkpoint"), "checkpoints the database"),
    **dict.fromkeys(("enable_logging", "disable_logging", "enable_profiling",
                     "disable_profiling"), "changes settings"),
    "truncate_duckdb_logs": "deletes the database's log",
    **dict.fromkeys(("add_grammar_extension", "remove_grammar_extension"),
                    "changes the SQL parser"),
    **dict.fromkeys(("register_external_resource_type", "register_external_resource",
                     "create_external_resource", "destroy_external_resource",
                     "deregister_external_resource"),
                    "changes the database's external resources"),
    **dict.fromkeys(("query", "json_execute_serialized_sql"),
                    "runs SQL given as a string, past this check"),
}


# Table functions that read DuckDB's own stores in the home directory (~/.duckdb: stored
# secrets, installed extensions, extension repositories), which a sandboxed query never has:
# each failed with "Cannot access directory "/home/u/.duckdb/stored_secrets" - file system
# operations are disabled by configuration", naming the user's home directory and reading as
# if a setting would let it through. Refused by name, as the acting ones are.
PRIVATE_TABLE_FUNCTIONS: dict[str, str] = {
    **dict.fromkeys(("duckdb_secrets", "which_secret"), "secrets"),
    "duckdb_extensions": "installed extensions",
    "duckdb_extension_repositories": "extension repositories",
}


def _refuse_acting_functions(sql: str) -> None:
    """Refuse a call of any :data:`ACTING_TABLE_FUNCTIONS` or
    :data:`PRIVATE_TABLE_FUNCTIONS`: a name (quoted or not, in any case, qualified or not)
    followed by ``(``, as DuckDB's tokenizer reads the SQL, so a comment between them or a
    name in a string changes nothing."""
    every = list(duckdb.tokenize(sql))
    spans = [(off, every[i + 1][0] if i + 1 < len(every) else len(sql), kind)
             for i, (off, kind) in enumerate(every) if kind != duckdb.token_type.comment]
    words = (duckdb.token_type.identifier, duckdb.token_type.keyword)
    for (off, end, kind), (nxt, _e, after) in itertools.pairwise(spans):
        if kind not in words or after != duckdb.token_type.operator \
                or not sql.startswith("(", nxt):
            continue
        name = sql[off:end].strip()
        if len(name) > 1 and name[0] == name[-1] == '"':  # resolved without regard to case
            name = name[1:-1].replace('""', '"')
        why = ACTING_TABLE_FUNCTIONS.get(name.lower())
        if why is not None:
            raise ArchiveError(f"query: only read-only SELECT statements are allowed, not "
                               f"{name.lower()}(), a table function that {why}")
        store_of = PRIVATE_TABLE_FUNCTIONS.get(name.lower())
        if store_of is not None:
            raise ArchiveError(f"query: {name.lower()}() is not available in the sandbox: it "
                               f"reads DuckDB's own {store_of}, which a query of the archive "
                               "never has")


def _statement_not_expression(text: str) -> bool:
    """Whether ``text`` (what a parenthesis holds) is a statement other than a SELECT, or
    neither a statement nor an expression: refused either way, so that a body DuckDB parses
    only inside its WITH clause is not taken for a column."""
    try:
        parsed = duckdb.extract_statements(text)
    except duckdb.Error:
        try:
            duckdb.extract_statements("SELECT " + text)
        except duckdb.Error:
            return True
        return False
    return len(parsed) != 1 or _kind(parsed[0]) not in ALLOWED_STATEMENTS


def _kind(statement: duckdb.Statement) -> str:
    """The statement's type name. A type the Python API has no name for (``UPDATE
    EXTENSIONS`` is type 29) raised ValueError, reported as a defect of buraco-log."""
    try:
        return statement.type.name
    except ValueError:
        return "UNKNOWN"


def _as_written(text: str, kind: str) -> str:
    """A refused statement's name as the user wrote it, rather than DuckDB's type for it
    (``kind``), which names many another way: ``INSTALL`` is a LOAD, ``USE`` and ``RESET`` a
    SET, ``CHECKPOINT`` a CALL, ``BEGIN`` a TRANSACTION, ``TRUNCATE`` a DELETE, ``ANALYZE`` a
    VACUUM, ``IMPORT DATABASE`` a PRAGMA, and ``UPDATE EXTENSIONS`` has no name at all
    (UNKNOWN). Its leading keyword, two for ``FORCE ...`` and ``UPDATE EXTENSIONS``; ``kind``
    for an allowed statement, and for one led by ``WITH`` (its type is the statement's)."""
    if kind in ALLOWED_STATEMENTS or kind == "MULTI":
        return kind
    every = list(duckdb.tokenize(text))
    spans = [(off, every[i + 1][0] if i + 1 < len(every) else len(text), tok)
             for i, (off, tok) in enumerate(every) if tok != duckdb.token_type.comment]
    words: list[str] = []
    for off, end, tok in spans[:2]:
        if tok != duckdb.token_type.keyword:
            break
        words.append(text[off:end].strip().upper())
        if words[0] not in ("FORCE", "UPDATE"):
            break
    if not words or words[0] == "WITH":
        return kind
    if words[0] == "UPDATE" and words[1:] != ["EXTENSIONS"]:
        return "UPDATE"
    return " ".join(words)


_EXPLAIN_WORDS = ("ANALYZE", "ANALYSE", "VERBOSE")


def _explained(text: str) -> list[str]:
    """The statement types an ``EXPLAIN`` statement may wrap (never empty).

    The Python API does not expose the wrapped statement, so it is found with DuckDB's own
    tokenizer and parsed again. ``EXPLAIN [ANALYZE] ( options ) stmt`` and a statement that
    itself begins with ``(`` read alike up to the parenthesis: every reading that parses is
    returned, and one that parses to anything but one SELECT refuses the query. Nothing that
    parses at all is refused as "UNPARSED".
    """
    tokens = [(off, kind) for off, kind in duckdb.tokenize(text)]
    spans: list[tuple[int, str, bool]] = []  # offset, text, is an operator; no comments
    for i, (off, kind) in enumerate(tokens):
        end = tokens[i + 1][0] if i + 1 < len(tokens) else len(text)
        if kind != duckdb.token_type.comment:
            spans.append((off, text[off:end].strip(), kind == duckdb.token_type.operator))
    i = 1  # spans[0] is EXPLAIN
    while i < len(spans) and spans[i][1].upper() in _EXPLAIN_WORDS:
        i += 1
    if i >= len(spans):
        return ["UNPARSED"]
    readings = [text[spans[i][0]:]]
    if spans[i][2] and spans[i][1].startswith("("):
        depth = 0
        for j in range(i, len(spans)):
            if spans[j][2]:  # a parenthesis inside a string is a string token
                depth += spans[j][1].count("(") - spans[j][1].count(")")
            if depth <= 0:
                if j + 1 < len(spans):
                    readings.append(text[spans[j + 1][0]:])
                break
    kinds = []
    for reading in readings:
        try:
            inner = duckdb.extract_statements(reading)
        except duckdb.Error:
            continue
        name = _kind(inner[0]) if len(inner) == 1 else "MULTI"
        kinds.append(_as_written(inner[0].query, name) if name != "MULTI" else name)
    return kinds or ["UNPARSED"]


def _first_line(exc: BaseException) -> str:
    line = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    for advice, instead in _ADVICE:
        line = advice.sub(instead, line)
    return line


# DuckDB's advice, on the line a query's error shows, to change a setting or install an
# extension, which the sandbox refuses: said instead as what the user can do. (The advice
# DuckDB puts on later lines is never shown.) A test runs each and finds no "SET" left.
_ADVICE: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"Max expression depth limit of (\d+) exceeded\. Use \"SET max_expression_depth "
                r"TO x\" to increase the maximum expression depth\.?"),
     r"the statement nests too deeply (limit \1 levels)"),
    (re.compile(r"(Division by zero in expression .*)\. Use TRY\(\.\.\.\) to return NULL for "
                r"this expression, or SET error_on_division_by_zero=false to return NULL for all "
                r"divisions by zero\."),
     r"\1: use TRY(...) to make it NULL, or NULLIF(divisor, 0)"),
    (re.compile(r"Pivot column limit of (\d+) exceeded\. Use SET pivot_limit=X to increase the "
                r"limit\."),
     r"a PIVOT may make at most \1 columns: pivot on fewer values, or use GROUP BY"),
    # the archive's files are not encrypted, and a query cannot run PRAGMA add_parquet_key
    (re.compile(r"(No key with name \"[^\"]*\" exists)\. Add it with PRAGMA add_parquet_key"
                r"\('<key_name>','<key>'\);"),
     r"\1: the archive's files are not encrypted, and a query holds no keys"),
    (re.compile(r"(is not in the catalog, but it exists in the \w+ extension)\."),
     r"\1, which the sandbox does not load"),
    (re.compile(r"\.? The file can be read without its page index: SET parquet_use_page_index "
                r"= false"), ""),
    (re.compile(r" DuckDB may still be able to scan this file by manually disabling the "
                r"prefetching mechanism using: 'SET disable_parquet_prefetching=true'\."), ""),
    # DuckDB's own files in the home directory (~/.duckdb), reached by a path it expanded
    # itself: named, they told the user where their home is and read as if a setting would
    # open them (the functions that read them are refused by name; this is the second wall)
    (re.compile(r"Cannot access (?:file|directory) \"/[^\"]*/\.duckdb(?:/[^\"]*)?\" - file "
                r"system operations are disabled by configuration"),
     r"it needs DuckDB's own files in the home directory, which a sandboxed query never reads"),
    (re.compile(r"(?<![\w~.])/[^\s\"']*/\.duckdb(?:/[^\s\"']*)?"), "DuckDB's own files"),
)


BATCH_ROWS = 10_000  # rows per batch handed out by a streaming query
# What a query's process may allocate beyond DuckDB's memory limit: DuckDB's own threads and
# the Python side of one batch. Measured: a query over the archive adds about 100 MiB of
# data mappings (thread stacks, allocator arenas) beside what DuckDB counts.
HEADROOM = 384 << 20
_UNITS = {"B": 1, "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12,
          "KIB": 1 << 10, "MIB": 1 << 20, "GIB": 1 << 30, "TIB": 1 << 40}
_NO_BOUND = 1 << 62  # a cap at least this large is no cap (and may not fit a C long)
_SIZE = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([KMGT]i?B|B)\s*", re.IGNORECASE)


def parse_size(text: str) -> int | None:
    """Bytes of a DuckDB size such as ``512MB`` (10^6) or ``1.5GiB`` (2^30); None if not one."""
    m = _SIZE.fullmatch(text)  # Decimal: a float of 400 digits is inf, and int(inf) raises
    return int(decimal.Decimal(m.group(1)) * _UNITS[m.group(2).upper()]) if m else None


def _data_in_use() -> int | None:
    """Bytes of the process's data mappings (what RLIMIT_DATA counts), Linux only."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmData:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        return None
    return None


def _thread_stack() -> int:
    """Bytes of address space one new thread's stack takes (glibc sizes it by RLIMIT_STACK)."""
    soft = resource.getrlimit(resource.RLIMIT_STACK)[0]
    return soft if soft != resource.RLIM_INFINITY and soft > 0 else 8 << 20


@contextlib.contextmanager
def bounded_process(memory_limit: str, threads: int = DEFAULT_THREADS) -> Iterator[int | None]:
    """Cap what this process may allocate from now on at ``memory_limit`` + :data:`HEADROOM`,
    plus a stack for each of DuckDB's ``threads`` (and the timer's).

    DuckDB's memory limit covers its buffer manager, not everything: a scalar function that
    builds one huge value (``repeat``, ``lpad``, a ``range(n)`` list) allocated 3 to 15 GB
    under a 1 GB limit. The soft ``RLIMIT_DATA`` catches those: the allocation fails, and
    DuckDB reports it as its own out-of-memory error. The soft limit is restored on exit;
    while it holds, it applies to every thread of the process. Yields the cap in bytes (None
    where it cannot be set: not Linux, or a limit that is not a size).
    """
    size = parse_size(memory_limit)
    used = _data_in_use()
    if size is None or used is None:
        yield None
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_DATA)
    # Each thread's stack is a data mapping too: without them, --threads 500 aborted the
    # process ("cannot allocate memory for thread-local data") before the query ran.
    cap = used + size + HEADROOM + (threads + 1) * _thread_stack()
    for bound in (soft, hard):
        if bound != resource.RLIM_INFINITY:
            cap = min(cap, bound)
    if cap >= _NO_BOUND:  # more than any address space: setrlimit would overflow
        yield None
        return
    resource.setrlimit(resource.RLIMIT_DATA, (cap, hard))
    try:
        yield cap
    finally:
        resource.setrlimit(resource.RLIMIT_DATA, (soft, hard))


def _query_error(exc: BaseException, timeout: float | None, memory_limit: str) -> ArchiveError:
    """One line for a failed query. Errors raised while batches stream out reach Python
    through Arrow's reader as OSError, so DuckDB's error class is read from the message."""
    line = _first_line(exc)
    if isinstance(exc, duckdb.InterruptException) or line.startswith("INTERRUPT Error"):
        return ArchiveError(f"query: stopped after the {timeout} s time limit")
    if isinstance(exc, duckdb.OutOfMemoryException | MemoryError | pa.ArrowMemoryError) or \
            line.startswith("Out of Memory Error"):  # the fix is the user's: say which
        return ArchiveError(f"query: out of memory under the {memory_limit} limit; a larger "
                            f"limit may let it finish (--memory-limit): {line}")
    name = type(exc).__name__ if isinstance(exc, duckdb.Error) else "Error"
    return ArchiveError(f"query: {name}: {line}")


_FAILURES = (duckdb.Error, OSError, pa.ArrowException, MemoryError)
# Words of DuckDB's errors about a Parquet file it cannot decode: "Payload value bigger than
# allowed. Corrupted file?" names no file, so the damaged one is looked for (find_damaged).
_DAMAGE = re.compile(r"corrupt|thrift|magic|decompress|parquet|payload|deserializ|"
                     r"don.t know what type|end of (stream|file)|tprotocol|ttype", re.IGNORECASE)
LOCATE_SECONDS = 10.0  # at most this long spent looking for the damaged file


def _damage_of(root: str, path: str) -> str | None:
    """Why the committed file ``path`` is damaged: Arrow cannot read it through, or its bytes
    are not those its batch record keeps; None when neither (or it cannot be told)."""
    unread = _unreadable(path)
    if unread is not None:
        return unread
    rel = os.path.relpath(path, root)
    with contextlib.suppress(ArchiveError):
        for record in store.manifests(root):
            kept = record.get("fingerprints")
            fp = _kept_sha(kept.get(rel) if isinstance(kept, dict) else None)
            if fp is not None:
                try:
                    sha, _size = store.fingerprint(path)
                except OSError as exc:
                    return _first_line(exc)
                return None if sha == fp else "its bytes changed since it was committed"
    return None


def _unreadable(path: str) -> str | None:
    """Why Arrow cannot read the Parquet file ``path`` through, or None."""
    try:
        with pq.ParquetFile(path) as f:
            for _batch in f.iter_batches(batch_size=65_536):
                pass
    except (pa.ArrowException, OSError, ValueError) as exc:
        return _first_line(exc)
    return None


def _kept_sha(fingerprint: object) -> str | None:
    """The SHA-256 a batch record keeps for a file (its fingerprint's first item), if any."""
    if isinstance(fingerprint, list) and fingerprint and isinstance(fingerprint[0], str):
        return fingerprint[0]
    return None


def find_damaged(root: str, seconds: float = LOCATE_SECONDS) -> tuple[str, str] | None:
    """The first committed file that Arrow cannot read through, and why; else the first whose
    bytes are not those its batch record keeps (a flipped bit that Arrow decodes and DuckDB
    does not: the query's line named no file); None if there is none (or the time ran out
    first)."""
    deadline = time.monotonic() + seconds
    for paths in store.committed_files(root).values():
        for path in paths:
            if time.monotonic() > deadline:
                return None
            unread = _unreadable(path)
            if unread is not None:
                return path, unread
    for record in store.manifests(root):
        kept = record.get("fingerprints")
        for rel, fp in (kept.items() if isinstance(kept, dict) else ()):
            if time.monotonic() > deadline:
                return None
            kept_sha = _kept_sha(fp)
            if kept_sha is None:
                continue  # verify names a damaged record
            path = os.path.join(root, rel)
            try:
                sha, _size = store.fingerprint(path)
            except OSError:
                continue
            if sha != kept_sha:
                return path, (f"its bytes changed since batch {record['batch']} committed it: "
                              f"restore it from a backup")
    return None


_PART = re.compile(r'"([^"]+?\.parquet)')


def _vanished(text: str, root: str,
              readable: frozenset[str] | None = None) -> ArchiveError | None:
    """A query's error about an archive file that is gone: listed as committed when the
    query began (one of ``readable``, when given), removed since by `compact` or
    drop_batches (their commit came in between). A path the user's SQL named that never was
    a committed file (a glob, a mistyped part name) is not one: its error is DuckDB's."""
    gone = next((m for m in _PART.findall(text) if not os.path.lexists(m)), None)
    if gone is None or os.path.join(root, "") not in gone:
        return None
    if readable is not None and gone not in readable:
        return None
    return store.Changed(f"query: the archive changed while the query ran ({gone} was removed "
                        "by a compact or a batch drop, its rows kept elsewhere or dropped): "
                        "run it again")


def _locate(exc: ArchiveError, root: str,
            readable: frozenset[str] | None = None) -> ArchiveError:
    """``exc``, led by the damaged file's name when it is about a file DuckDB could not
    decode and does not name one; or said plainly when the committed file it names is gone."""
    text = str(exc)
    gone = _vanished(text, root, readable)
    if gone is not None:
        return gone
    if not _DAMAGE.search(text):
        return exc
    if root in text:  # DuckDB named the file: lead with it, as for every damaged file
        # if it is damaged: read_text, read_json or read_csv of a whole file, or error()
        # with its name, said "damaged archive file" of a sound archive
        return _damaged_footer(text.removeprefix("query: "), root, confirm=True) or exc
    try:
        found = find_damaged(root)
    except (ArchiveError, MemoryError):
        return exc
    if found is None:
        return exc
    return ArchiveError(f"{found[0]}: damaged archive file ({found[1]}): {text}")


INTERRUPT_EVERY = 0.05
"""Seconds between interrupts once the time limit has passed (see :func:`_watchdog`)."""


OVERRUN_GRACE = 5.0
"""Seconds a query may run on past its time limit, interrupted all along, before the
``overrun`` callback of :func:`_watchdog` is called. DuckDB heeds an interrupt between chunks
of rows, not inside a scalar function building one huge value: ``lpad('x', 400000000, 'y')``
ran 26 s past a 2 s limit, and a few of them in one chunk for minutes."""


def _watchdog(con: duckdb.DuckDBPyConnection, timeout: float,
              overrun: Callable[[], object] | None = None) -> Callable[[], None]:
    """Interrupt ``con`` once ``timeout`` seconds have passed, and again every
    :data:`INTERRUPT_EVERY` seconds until the returned stop function is called (which waits for
    the watchdog to end, so no interrupt reaches a closed connection). ``overrun`` is called
    (from the watchdog's thread) if the query still runs :data:`OVERRUN_GRACE` seconds later.

    One interrupt is not enough: DuckDB drops one that arrives before the query has started
    (a tiny ``--timeout``), and the query then ran with no limit at all."""
    stop = threading.Event()

    def watch() -> None:
        if stop.wait(timeout):
            return
        late = time.monotonic() + OVERRUN_GRACE
        while True:
            with contextlib.suppress(duckdb.Error):
                con.interrupt()
            if stop.wait(INTERRUPT_EVERY):
                return
            if overrun is not None and time.monotonic() > late:
                overrun()
                return

    thread = threading.Thread(target=watch, name="buraco-log query time limit", daemon=True)
    thread.start()

    def cancel() -> None:
        stop.set()
        thread.join()

    return cancel


def time_left(timeout: float | None, start: float) -> float | None:
    """What is left at a new start of a query or report of the user's ``timeout`` (None or 0:
    no limit; past ``threading.TIMEOUT_MAX``: none in practice), counted from ``start``
    (``time.monotonic()``). Never 0, which means no limit: a run past it gets a moment, and its
    watchdog stops it at once. (A start after a compaction once had the whole limit again.)"""
    if not timeout or timeout > threading.TIMEOUT_MAX:
        return timeout
    return max(timeout - (time.monotonic() - start), 1e-3)


class QueryStream:
    """The result of one sandboxed query, read in batches as DuckDB produces them.

    Nothing but the current batch is held, and the process stays under the memory bound
    (:func:`bounded_process`) until :meth:`close`. Use it as a context manager.
    """

    def __init__(self, archive: str | os.PathLike[str], sql: str, *, threads: int,
                 memory_limit: str, timeout: float | None, batch_rows: int,
                 bound: bool, on_overrun: Callable[[], object] | None = None) -> None:
        self._timeout, self._memory_limit = timeout, memory_limit
        check_sql(sql)
        # resolved now, outside the memory bound: an error is explained with it, and a query
        # that ran out of memory left no room to read archive.json again (a traceback)
        self._root = store.check_archive(str(archive))
        self._stack = contextlib.ExitStack()
        try:
            # shared with other readers: no compact or drop removes a file it lists until
            # it is closed (the last batch read); the wait for it is within the time limit
            start = time.monotonic()
            try:
                self._stack.enter_context(store.reading(self._root, within=timeout))
            except store.GateTimeout:
                raise ArchiveError(f"query: stopped after the {timeout} s time limit "
                                   f"(waiting for a compact or drop to remove files)") from None
            if bound:
                self._stack.enter_context(bounded_process(memory_limit, threads))
            # Run again from the start while a committed file it listed is gone before its
            # first rows (a compaction or drop committed meanwhile): nothing was given out yet
            # (within the same time limit: each start has only the time left)
            for again in range(store.RELISTS - 1, -1, -1):
                run = self._stack.enter_context(contextlib.ExitStack())
                try:
                    self._start(run, archive, sql, threads, memory_limit,
                                time_left(timeout, start), batch_rows, on_overrun)
                    self._first = self._next()
                    break
                except store.Changed:
                    run.close()
                    if not again:
                        raise
        except BaseException:
            self._stack.close()
            raise

    def _start(self, run: contextlib.ExitStack, archive: str | os.PathLike[str], sql: str,
               threads: int, memory_limit: str, timeout: float | None, batch_rows: int,
               on_overrun: Callable[[], object] | None) -> None:
        con = connect(archive, sandbox=True, threads=threads, memory_limit=memory_limit)
        run.callback(con.close)
        # the committed files this query may read: only one of these, gone, means that
        # the archive changed under the query
        rows = con.execute("SELECT current_setting('allowed_paths')").fetchall()
        self._readable = frozenset(rows[0][0] or ())
        if timeout and timeout <= threading.TIMEOUT_MAX:  # beyond: no limit in practice
            run.callback(_watchdog(con, timeout, on_overrun))
        try:
            self._reader = _variants_as_json(con.sql(sql)).to_arrow_reader(batch_rows)
        except _FAILURES as exc:
            raise self._error(exc) from None

    def _next(self) -> pa.RecordBatch | None:
        try:
            return self._reader.read_next_batch()
        except StopIteration:
            return None
        except _FAILURES as exc:
            raise self._error(exc) from None

    @property
    def schema(self) -> pa.Schema:
        return self._reader.schema

    def __iter__(self) -> Iterator[pa.RecordBatch]:
        batch, self._first = self._first, None  # read when the query started
        while batch is not None:
            yield batch
            batch = self._next()

    def _error(self, exc: BaseException) -> ArchiveError:
        return _locate(_query_error(exc, self._timeout, self._memory_limit), self._root,
                       self._readable)

    def close(self) -> None:
        self._stack.close()

    def __enter__(self) -> QueryStream:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _variants_as_json(rel: duckdb.DuckDBPyRelation) -> duckdb.DuckDBPyRelation:
    """``rel`` with each VARIANT, alone or inside a list, struct or map, cast to its JSON text,
    as Spark's engine gives it: Arrow carried DuckDB's encoding, a struct of hex "metadata" and
    "value", into every output. Columns are taken by position (names may repeat)."""
    types = [_json_type(t) for t in rel.types]
    if all(t is None for t in types):
        return rel
    columns = (f"CAST(#{i} AS {t})" if t else f"#{i}" for i, t in enumerate(types, 1))
    return rel.project(", ".join(f"{c} AS {_name(n)}"
                                 for c, n in zip(columns, rel.columns, strict=True)))


def _name(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


def _json_type(t: DuckDBPyType) -> str | None:
    """The type ``t`` with every VARIANT in it made JSON, or None when it holds none."""
    kind = t.id
    if kind == "variant":
        return "JSON"
    if kind not in ("list", "array", "struct", "map", "union"):
        return None
    inner = [(name, None if isinstance(child, (int, list)) else _json_type(child))
             for name, child in t.children]
    if all(j is None for _, j in inner):
        return None
    if kind == "union":  # its tag is a child too: the whole value as JSON
        return "JSON"
    shown = [j or str(child) for (_, j), (_, child) in zip(inner, t.children, strict=True)]
    if kind == "list":
        return f"{shown[0]}[]"
    if kind == "array":
        return f"{shown[0]}[{t.children[1][1]}]"
    if kind == "map":
        return f"MAP({shown[0]}, {shown[1]})"
    return "STRUCT(" + ", ".join(f"{_name(name)} {j}" for (name, _), j
                                 in zip(t.children, shown, strict=True)) + ")"


def open_query(
    archive: str | os.PathLike[str],
    sql: str,
    *,
    threads: int = DEFAULT_THREADS,
    memory_limit: str = DEFAULT_MEMORY_LIMIT,
    timeout: float | None = None,
    batch_rows: int = BATCH_ROWS,
    bound: bool = True,
    on_overrun: Callable[[], object] | None = None,
) -> QueryStream:
    """Start one read-only SELECT over the archive's views, sandboxed (see the module doc),
    and stream its result. ``bound``: hold the whole process under the memory limit while
    the stream is open (:func:`bounded_process`; pass False in a process whose other threads
    must not feel it). ``on_overrun``: called from another thread when the query has not
    stopped :data:`OVERRUN_GRACE` seconds after its time limit (DuckDB does not heed an
    interrupt inside some scalar functions): the command line ends its process there."""
    return QueryStream(archive, sql, threads=threads, memory_limit=memory_limit,
                       timeout=timeout, batch_rows=batch_rows, bound=bound,
                       on_overrun=on_overrun)


def query(
    archive: str | os.PathLike[str],
    sql: str,
    *,
    threads: int = DEFAULT_THREADS,
    memory_limit: str = DEFAULT_MEMORY_LIMIT,
    timeout: float | None = None,
    bound: bool = True,
) -> pa.Table:
    """Run one read-only SELECT over the archive's views, sandboxed (see the module doc),
    and return the whole result (built under the memory bound, see :func:`open_query`)."""
    with open_query(archive, sql, threads=threads, memory_limit=memory_limit,
                    timeout=timeout, bound=bound) as stream:
        try:
            return pa.Table.from_batches(list(stream), schema=stream.schema)
        except _FAILURES as exc:
            raise _query_error(exc, timeout, memory_limit) from None
