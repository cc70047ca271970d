"""The archive on Apache Spark: ingest with the same checker, query with Spark SQL.

Optional (``pip install 'buraco-log[spark]'``, and a Java 17+ runtime); nothing else in the
library imports this module, and it imports pyspark only inside its functions.

Ingest (:func:`ingest`), one Spark application:

1. ``binaryFile`` lists and reads the logs (``*.blog`` and ``*.jsonl``, recursively); the
   JVM hashes the bytes (``sha2``) and files already in the archive, stored or refused, are
   dropped by a join before any Python sees them.
2. ``mapInArrow`` checks every other log with :func:`buraco_log.archive.flatten.check_file`,
   the very function the local engine runs (one rules engine), over the bytes Spark read. Each
   log comes back as one row: its verdict, and its table rows as Arrow IPC.
3. De-duplication like the local engine: the first copy of a match by path among those whose
   head digest is not yet archived; a refused file once per file hash.
4. The new matches are grouped by partition (preset, month) and by a bucket of the game id,
   sized to ``file_events`` events a file; each group is written by one task with the local
   engine's own Parquet writer (:func:`buraco_log.archive.store._stage`: the same schemas,
   sort order, encodings and compression) under ``.staging/<run>/task-<attempt id>/``.
5. The driver commits: the files of the task attempts Spark accepted (one per partition) are
   renamed into place, then each bucket's batch record is written, which is the commit point
   for every reader. A failed or killed job commits nothing; attempt files never committed
   stay under ``.staging`` until the next ingest removes them.

Why not Spark's ``DataFrameWriter``: Spark SQL has no unsigned or dictionary types and writes
every column as OPTIONAL, so its files would not have the archive's types (``melds.cards`` is a
list of uint8), nor its per-column encodings and zstd levels. The commit protocol is Spark's own
in shape (task attempts write apart, only accepted attempts are committed, by the driver).

Query (:func:`query`, :func:`report`): Spark SQL views over the committed files only. Spark
cannot be locked down the way DuckDB is (``reflect`` calls Java, file paths are tables), so user
SQL is parsed by Spark first and refused unless it is one query that reads only the archive's
views and calls no function outside the built-ins that touch nothing but their arguments.
"""

from __future__ import annotations

import contextlib
import decimal
import hashlib
import json
import logging
import math
import os
import re
import secrets
import shutil
import signal
import stat
import sys
import tempfile
import threading
import time
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlsplit

import msgspec
import pyarrow as pa  # type: ignore[import-untyped]

from buraco_log import audit, log
from buraco_log.archive import store
from buraco_log.archive.flatten import Reader, Rows, Tail, check_file, error_row
from buraco_log.archive.ingest import (
    ErrorSummary,
    IngestReport,
    StrongerCopy,
    _hash,
    _interrupt_after,
    _Kept,
    _replace,
    _store_ratings,
    _stronger_copies,
    few_collections,
    reused_paths,
    shared_match_ids,
)
from buraco_log.archive.schema import ERRORS, PARTITIONED, TABLES, VIEW_SCHEMAS, storable
from buraco_log.errors import ArchiveError, LogFormatError

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

LOG_GLOB = "*.{blog,jsonl}"
FILE_EVENTS = 8_000_000
"""Events a file aims at (about 16 MB of events table at 1.94 bytes an event); a partition
smaller than that gets one file per ingest, like a local batch."""
ARROW_RECORDS = 128
"""Logs in one Arrow batch into the checker: a batch holds their bytes and their rows."""
OPEN_COST = 64 * 1024
"""``spark.sql.files.openCostInBytes``: what opening a file costs, in bytes of reading. At 64
kB a 128 MB split holds hundreds of small logs (the default, 4 MB, made it 32)."""
ARROW_BYTES = 64 * 1024 * 1024
"""``spark.sql.execution.arrow.maxBytesPerBatch``: a batch into the checker closes at this many
bytes even before :data:`ARROW_RECORDS` logs, so a few large logs never make one huge batch."""
FAIL_FIRST = "spark.buraco_log.test.failFirstAttempt"
"""Test hook: ``check`` or ``write`` fails the first attempt of that stage's first task (after
it wrote its files, for ``write``); ``always`` fails every attempt of the write."""
FILE_EVENTS_CONF = "spark.buraco_log.fileEvents"
INSTALL_EXTRA = "pip install 'buraco-log[spark]'"
INSTALL_JAVA = ("install a Java 17+ runtime (Debian/Ubuntu: apt-get install "
                "openjdk-17-jre-headless) or set JAVA_HOME")


class SparkUnavailable(ArchiveError):
    """The Spark engine cannot start here: what to install. The CLI exits 2, as for a usage
    error: nothing was read."""

    exit_status = 2


# -- the session ---------------------------------------------------------------------------------

def _java() -> str | None:
    home = os.environ.get("JAVA_HOME")
    if home and os.access(os.path.join(home, "bin", "java"), os.X_OK):
        return os.path.join(home, "bin", "java")
    return shutil.which("java")


def require() -> None:
    """Raise :class:`SparkUnavailable` (one line: what to install) unless Spark can start."""
    missing = []
    for name in ("pyspark", "pandas"):
        try:
            __import__(name)
        except ImportError:
            missing.append(name)
    if missing:
        raise SparkUnavailable(f"--engine spark needs {' and '.join(missing)}: {INSTALL_EXTRA}")
    home = os.environ.get("JAVA_HOME")
    if home and not os.access(os.path.join(home, "bin", "java"), os.X_OK):
        # Spark runs $JAVA_HOME/bin/java whenever JAVA_HOME is set, whatever PATH holds
        raise SparkUnavailable(f"--engine spark needs Java: JAVA_HOME ({home}) has no "
                               "bin/java; set it to a Java 17+ runtime, or unset it")
    if _java() is None:
        raise SparkUnavailable(f"--engine spark needs Java: {INSTALL_JAVA}")


_LOG4J = """rootLogger.level = error
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{HH:mm:ss} %p %c{1}: %m%n
"""


def _log4j_file() -> str:
    """Spark's own logging down to errors, so a run's stderr stays readable.

    The file at its fixed name in the shared temporary directory is used only when this user
    made it, no one else may write it, and it says what it should: anyone may put a file
    there first, and the JVM, which runs as this user, logged where that one said (lines of
    another user's choosing appended to this user's shell start-up file). Otherwise the run
    writes a private one of its own."""
    path = os.path.join(tempfile.gettempdir(), f"buraco-log-log4j2-{os.getuid()}.properties")
    if _own_log4j(path):
        return path
    if not os.path.lexists(path):
        tmp = f"{path}.{secrets.token_hex(4)}"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
        with open(fd, "w", encoding="utf-8") as f:
            os.fchmod(f.fileno(), 0o644)  # whatever the umask: no one else writes it
            f.write(_LOG4J)
        try:
            os.replace(tmp, path)  # another user's file put there meanwhile is not replaced
        except OSError:
            os.unlink(tmp)
        if _own_log4j(path):
            return path
    fd, private = tempfile.mkstemp(prefix="buraco-log-log4j2-", suffix=".properties")
    with open(fd, "w", encoding="utf-8") as f:
        f.write(_LOG4J)
    return private


def _own_log4j(path: str) -> bool:
    """``path`` is a regular file (not a link) of this user's that no one else may write,
    holding :data:`_LOG4J` (one of ours, made group-writable by a umask, is made not)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return False
    with open(fd, "rb") as f:
        info = os.fstat(f.fileno())
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid():
            return False
        if info.st_mode & 0o022:
            os.fchmod(f.fileno(), stat.S_IMODE(info.st_mode) & ~0o022)
        return f.read(len(_LOG4J) + 1) == _LOG4J.encode()


def session_conf(master: str | None, conf: Mapping[str, str] | None = None) -> dict[str, str]:
    """The settings :func:`session` starts with (``conf`` wins over every default)."""
    out = {
        # Workers run the driver's Python: the same buraco_log, the same rules engine.
        "spark.pyspark.python": sys.executable,
        "spark.pyspark.driver.python": sys.executable,
        "spark.sql.session.timeZone": "UTC",
        "spark.sql.files.openCostInBytes": str(OPEN_COST),
        "spark.sql.execution.arrow.maxRecordsPerBatch": str(ARROW_RECORDS),
        "spark.sql.execution.arrow.maxBytesPerBatch": str(ARROW_BYTES),
        "spark.sql.sources.partitionColumnTypeInference.enabled": "false",
        "spark.sql.runSQLOnFiles": "false",  # no `SELECT * FROM parquet.`/path``
        # no `SELECT '${env:HOME}'`: the parser replaced it with the environment's value
        # (Java's properties and Spark's settings too) before any check saw the statement
        "spark.sql.variable.substitute": "false",
        "spark.ui.showConsoleProgress": "false",
    }
    if master is None or master.startswith("local"):
        # Local mode listens on the loopback address only, with no web UI.
        out.update({
            "spark.driver.bindAddress": "127.0.0.1",
            "spark.driver.host": "127.0.0.1",
            "spark.ui.enabled": "false",
            "spark.driver.extraJavaOptions": f"-Dlog4j.configurationFile={_log4j_file()}",
        })
    out.update(conf or {})
    return out


def session(master: str | None = None, conf: Mapping[str, str] | None = None) -> SparkSession:
    """A Spark session (the running one if there is one, as under ``spark-submit``).

    ``master`` None: the one ``spark-submit`` gave, else ``local[*]``.
    """
    require()
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        for k, v in (conf or {}).items():
            with contextlib.suppress(Exception):  # static settings stay as they were
                active.conf.set(k, v)
        return active
    submitted = "PYSPARK_GATEWAY_PORT" in os.environ  # launched by spark-submit
    if master is None and not submitted:
        master = "local[*]"
    os.environ["PYSPARK_PYTHON"] = conf.get("spark.pyspark.python", sys.executable) \
        if conf else sys.executable
    settings = session_conf(None if submitted and master is None else master, conf)
    if submitted:
        builder = SparkSession.builder.appName("buraco-log")
        if master is not None:
            builder = builder.master(master)
        for k, v in settings.items():
            builder = builder.config(k, v)
        spark = builder.getOrCreate()
    else:
        spark = _start_quietly(master or "local[*]", settings)
    spark.sparkContext.setLogLevel("ERROR")
    # PySpark logs a failed statement as JSON on stderr before raising it: the CLI's one line
    # says it already.
    for name in ("SQLQueryContextLogger", "pyspark"):
        logging.getLogger(name).setLevel(logging.CRITICAL)
    return spark


JVM_LOG = "buraco-log-spark-jvm"
"""The JVM's own output goes to ``<tmp>/buraco-log-spark-jvm-<uid>.log``, not to stderr: its
start-up notices would break the CLI's one-line errors (the error says so when it matters)."""


_jvm_log = ""
"""Where this process's JVM writes (:func:`_jvm_log_file`), once it started one."""


def _jvm_log_file() -> tuple[str, int]:
    """:data:`JVM_LOG`'s path and a descriptor to append to it: the fixed name when it is new
    or a regular file of this user's (made private, 0600), else a private file of this run's.
    The temporary directory is shared: opened by name, the JVM's output went where a link
    another user put there led, or into that user's own file, for them to read."""
    global _jvm_log
    path = os.path.join(tempfile.gettempdir(), f"{JVM_LOG}-{os.getuid()}.log")
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    except OSError:
        fd = -1
    if fd >= 0:
        info = os.fstat(fd)
        if stat.S_ISREG(info.st_mode) and info.st_uid == os.getuid():
            os.fchmod(fd, 0o600)
            _jvm_log = path
            return path, fd
        os.close(fd)
    fd, path = tempfile.mkstemp(prefix=f"{JVM_LOG}-", suffix=".log")
    _jvm_log = path
    return path, fd


def _start_quietly(master: str, settings: Mapping[str, str]) -> SparkSession:
    """Start the JVM with its stdout and stderr in :data:`JVM_LOG`, then the session on it.
    A start that fails is one line naming what the JVM said (a bad master, a bad --conf
    value, a JVM that cannot run), not PySpark's "Java gateway process exited"."""
    from pyspark import SparkConf, SparkContext
    from pyspark.java_gateway import launch_gateway
    from pyspark.sql import SparkSession

    sconf = SparkConf(loadDefaults=False).setAppName("buraco-log").setMaster(master)
    for k, v in settings.items():
        sconf.set(k, v)
    path, fd = _jvm_log_file()
    with open(fd, "ab") as log:
        start = log.tell()
        sc: Any = None
        try:
            gateway = launch_gateway(  # type: ignore[no-untyped-call,unused-ignore]
                sconf, popen_kwargs={"stdout": log, "stderr": log})
            sc = SparkContext(master=master, conf=sconf, gateway=gateway)
            spark = SparkSession(sc)
            # made here, not at the first query: a bad spark.sql.* value fails now
            spark._jsparkSession.sessionState()
        except Exception as exc:  # the JVM did not start: say so in one line
            why = _start_failure(exc, path, start)  # before the stop: it may ask the JVM
            if sc is not None:
                with contextlib.suppress(Exception):
                    sc.stop()
            raise SparkUnavailable(f"Spark did not start (master {master}): {why} (its "
                                   f"output: {path})") from None
    return spark


# What the JVM's output says when it does not start, most telling first: spark-submit's own
# error, the java launcher's, a shell's.
_START_FAILURES = (
    re.compile(r'^Exception in thread "main" (?:(?P<cls>[\w$.]+(?:Error|Exception)): )?(?P<m>.+)$'),
    re.compile(r"^(?:Error: )?(?P<m>(?:Invalid|Unrecognized|Could not|Error occurred) .+)$"),
    re.compile(r"^(?:\S*spark-class: line \d+: )?(?P<m>\S+: (?:No such file or directory|"
               r"Permission denied))$"),
    re.compile(r"^Error: (?P<m>.+)$"),
)
# An error Spark logged (an unreachable master: "All masters are unresponsive! Giving up."),
# told when PySpark's own error says nothing.
_LOGGED_ERROR = re.compile(r"^(?:[\d/]+ )?[\d:]+ ERROR [\w$.]+: (?P<m>.+)$")
_UNTOLD = re.compile(r"JAVA_GATEWAY_EXITED|stopped SparkContext|^An error occurred while "
                     r"calling|:$")


def _start_failure(exc: BaseException, path: str, start: int) -> str:
    """Why the JVM did not start: what it wrote to ``path`` after ``start``, or the error
    PySpark raised (its deepest Java cause), or an error Spark logged."""
    try:
        with open(path, "rb") as f:
            f.seek(start)
            lines = [line.strip() for line in
                     f.read(1 << 20).decode("utf-8", "replace").splitlines()]
    except OSError:
        lines = []
    for pattern in _START_FAILURES:
        for line in lines:
            m = pattern.match(line)
            if m is None:
                continue
            reason = m.group("m").strip()
            cls = m.groupdict().get("cls") or ""
            if cls.endswith("UnsupportedClassVersionError"):  # a Java older than 17
                return f"{cls}: {reason[:200]}; {INSTALL_JAVA}"
            return reason[:300]
    reason = _first_line(exc)
    if _UNTOLD.search(reason):
        logged = [m.group("m") for m in map(_LOGGED_ERROR.match, lines)
                  if m and not m.group("m").startswith("Error initializing SparkContext")]
        if logged:
            return logged[-1][:300]
    return reason


# -- checking, on the executors ------------------------------------------------------------------

CHECKED = pa.schema([
    ("path", pa.string()), ("sha", pa.string()), ("size", pa.int64()),
    ("status", pa.string()),  # ok, error, stored (file already archived) or refused (before)
    ("digest", pa.string()), ("game_id", pa.int64()), ("events", pa.int64()),
    ("preset", pa.string()), ("month", pa.string()),
    ("error", pa.string()),  # the errors-table row, as JSON
    ("match_id", pa.string()), ("sealed", pa.int32()), ("signatures", pa.int32()),  # Tail
    *((f"t_{t}", pa.binary()) for t in PARTITIONED),
])
WRITTEN = pa.schema([("batch", pa.string()), ("table", pa.string()), ("rel", pa.string()),
                     ("staged", pa.string()), ("rows", pa.int64()), ("sha", pa.string()),
                     ("bytes", pa.int64())])


def _ddl(schema: pa.Schema) -> str:
    names = {pa.string(): "string", pa.int64(): "bigint", pa.binary(): "binary",
             pa.int32(): "int"}
    return ", ".join(f"`{f.name}` {names[f.type]}" for f in schema)


def local_path(uri: str) -> str:
    """The path a local ingest records for a file Spark names ``file:/...``; other schemes
    (``hdfs://``, ``s3a://``) stay URIs."""
    if uri.startswith("file://"):
        return uri[len("file://"):]
    if uri.startswith("file:"):
        return uri[len("file:"):]
    return uri


_GLOB = re.compile(r"([\\\[\]{}*?])")


def literal(path: str) -> str:
    """A local path as Spark's readers take it literally: they expand glob patterns, so an
    archive at ``club[1]`` read ``club1``'s files, or none ("PATH_NOT_FOUND"); Hadoop's
    globber takes a character after a backslash as itself."""
    return _GLOB.sub(r"\\\1", path)


def _scanned_as(source: str) -> str:
    """A source as Spark's scan is given it: a local path or a ``file:`` URI literally (a
    ``file://`` URI was globbed: ``club[1]/m.blog`` failed the whole run, "PATH_NOT_FOUND",
    and ``club[1]`` listed ``club1``); other schemes (``hdfs://``, ``s3a://``) as given."""
    if "://" not in source:
        return literal(source)
    if source.startswith("file:"):
        path = local_path(source)
        return source[:len(source) - len(path)] + literal(path)
    return source


def hadoop_path(uri: str) -> str:
    """The name Spark's ``path`` column gives a file that ``inputFiles()`` names by its URI
    (``file:///a/b%20c.blog`` is ``file:/a/b c.blog``): Hadoop's ``Path.toString``."""
    parts = urlsplit(uri)
    if not parts.scheme:
        return unquote(parts.path)
    authority = f"//{parts.netloc}" if parts.netloc else ""
    return f"{parts.scheme}:{authority}{unquote(parts.path)}"


def _listing_differences(raw: DataFrame, srcs: Sequence[str]) -> tuple[
        set[str], list[tuple[str, bytes]], list[dict[str, Any]], list[str]]:
    """What Spark's listing of ``srcs`` must lose and gain to be the local engine's files.

    Spark's file scan drops zero-byte files before any task sees them, and its listing skips
    names starting with ``_`` or ``.`` (directories too), follows links to directories, and
    passes over FIFOs and dangling links; the local engine refuses empty logs, reads every
    log its walk finds (:func:`buraco_log.audit.find_logs`) and reports the files it cannot
    read. For local sources the local walk decides: returns the scanned paths to drop, the
    ``(path, content)`` rows of the logs the scan missed or cannot read (a name with a
    colon), read here, on the driver (they are few), the error rows of the files that
    cannot be read, and the walk's order (the first of two copies is the first the walk
    meets, as locally: a directory's files before its subdirectories, not the order of the
    path text). Other file systems have no walk of ours: there only the empty files are
    added back, from the listing, and the first copy is the first by path."""
    scanned = {r["path"] for r in raw.select("path").collect()}
    local = [local_path(s) for s in srcs if "://" not in s or s.startswith("file:")]
    drop: set[str] = set()
    extra: list[tuple[str, bytes]] = []
    unreadable: list[dict[str, Any]] = []
    order: list[str] = []
    if local:
        order = list(dict.fromkeys(os.path.abspath(p) for p in audit.find_logs(local)))
        found = set(order)
        # a name with a colon fails Hadoop's read of the file (its checksum file's name is
        # parsed as a URI: "Relative path in absolute URI: .a:b.blog.crc"), and with it the
        # whole run: such a log is read here instead
        colon = {u for u in scanned if u.startswith("file:") and _unreadable(local_path(u))}
        drop = colon | {u for u in scanned
                        if u.startswith("file:") and local_path(u) not in found}
        for path in sorted(found - {local_path(u) for u in scanned - colon}):
            if _size(path) > BINARY_FILE_MAX:  # left out of the scan: checked here instead
                unreadable.append(_check_large(path))
                continue
            item = _hash(path)
            if isinstance(item, dict):
                unreadable.append(item)
                continue
            try:
                fd = log.open_log_fd(path)
                with open(fd, "rb") as f:
                    # a name that is not UTF-8 as the local engine stores it (caf\xe9):
                    # Spark's strings made its bytes U+FFFD
                    extra.append((f"file:{storable(path)}", f.read()))
            except (OSError, LogFormatError) as exc:  # gone or swapped since it was hashed
                unreadable.append(error_row(path, "", None, "integrity", "log.unreadable",
                                            f"cannot read the log: {exc}"))
    if len(local) < len(srcs):
        listed = {hadoop_path(u) for u in raw.inputFiles()}
        extra += [(u, b"") for u in sorted(listed - scanned) if not u.startswith("file:")]
    return drop, extra, unreadable, order


def _without(spark: SparkSession, raw: DataFrame, drop: set[str]) -> DataFrame:
    """The scan ``raw`` without the files ``drop`` names. A filter on the path is applied
    after a file is read, so a file Hadoop cannot read at all (a name with a colon) is left
    out of a new scan of the files named one by one instead."""
    from pyspark.sql import functions as F

    if not any(_unreadable(local_path(u)) for u in drop if u.startswith("file:")):
        return raw.filter(~F.col("path").isin(sorted(drop)))
    rest = sorted({r["path"] for r in raw.select("path").collect()} - drop)
    if not rest:
        return spark.createDataFrame([], "path string, content binary")
    return (spark.read.format("binaryFile")
            .load([literal(local_path(u)) if u.startswith("file:") else u for u in rest])
            .select("path", "content"))


def _unreadable(path: str) -> bool:
    """Whether Hadoop fails on a local ``path`` ("Relative path in absolute URI"): a file
    name with a colon (its checksum file's name is parsed as a URI), or a colon anywhere in a
    path whose glob characters :func:`literal` escapes (the globber parses each part); and
    a name that is not UTF-8, which Py4J cannot even hand to Spark ("Py4JError: An error
    occurred while calling o118.add")."""
    return (":" in os.path.basename(path) or (":" in path and literal(path) != path)
            or not _utf8(path))


def _utf8(path: str) -> bool:
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:  # the bytes of a name that is not UTF-8 (surrogateescape)
        return False
    return True


def _readable_archive(root: str, what: str = "") -> None:
    """Refuse, before anything is read or written, an archive whose files Hadoop cannot
    read: a colon and glob characters in its path (as in :func:`_unreadable`). Its first
    Spark ingest was committed, and every later read failed with "Relative path in absolute
    URI"."""
    if ":" in root and literal(root) != root:
        raise ArchiveError(f"{what}Spark cannot read an archive whose path holds a colon and "
                           f"glob characters ([]{{}}*?\\): {root}; rename it, or use "
                           "--engine local")
    if not _utf8(root):
        raise ArchiveError(f"{what}Spark cannot read an archive whose path is not UTF-8: "
                           f"{storable(root)}; rename it, or use --engine local")


BINARY_FILE_MAX = 2**31 - 1
"""The most bytes Spark's ``binaryFile`` reads in one file: a larger one failed the whole
ingest ("The length of ... exceeds the max length allowed")."""


def _size(path: str) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


def _check_large(path: str) -> dict[str, Any]:
    """The errors-table row of a log too large for ``binaryFile``, checked on the driver
    with the local engine's reader (it is no log: 2 GiB of events is a billion of them), or
    a refusal that says to use the local engine."""
    item = _hash(path)
    if isinstance(item, dict):
        return item
    _, sha, size = item
    res = check_file(path, sha, size, lambda preset, month: Rows())
    if isinstance(res, dict):
        return res
    return error_row(path, sha, size, "integrity", "log.unreadable",
                     f"cannot read the log: {size:,} bytes, more than Spark reads in one file "
                     f"({BINARY_FILE_MAX:,}); ingest it with --engine local")


def _bytes_reader(data: bytes, tmpdir: str) -> Reader:
    """:func:`buraco_log.audit.read_log_signed` over bytes already read: the log readers work
    on files, so the bytes go to a private file with the log's extension (integrity findings
    name byte offsets and seqs, never that file)."""
    def read(path: str) -> tuple[list[Any], audit.Integrity, audit.Signed]:
        tmp = os.path.join(tmpdir, "log.jsonl" if path.endswith(".jsonl") else "log.blog")
        with open(tmp, "wb") as f:
            f.write(data)
        try:
            return audit.read_log_signed(tmp)
        finally:
            os.unlink(tmp)
    return read


def _ipc(t: pa.Table) -> bytes:
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, t.schema) as w:
        w.write_table(t)
    return bytes(sink.getvalue())


def _task() -> tuple[int, int, int]:
    """(partition, attempt number, attempt id) of the running task."""
    from pyspark import TaskContext

    ctx = TaskContext.get()
    if ctx is None:
        return 0, 0, 0
    return ctx.partitionId(), ctx.attemptNumber(), ctx.taskAttemptId()


def check_batches(batches: Iterable[pa.RecordBatch], fail: str = "",
                  require_commitment: bool = False) -> Iterator[pa.RecordBatch]:
    """``mapInArrow``: (path, content, sha, known) rows in, one :data:`CHECKED` row per log out."""
    part, attempt, _ = _task()
    if fail == "check" and part == 0 and attempt == 0:
        raise RuntimeError("injected failure of the first attempt (check)")
    tmpdir = tempfile.mkdtemp(prefix="buraco-log-check-")
    try:
        with few_collections():
            for batch in batches:
                yield _check_batch(batch, tmpdir, require_commitment)
    finally:
        store.discard_tree(tmpdir)


def _check_batch(batch: pa.RecordBatch, tmpdir: str, require_commitment: bool
                 ) -> pa.RecordBatch:
    cols: dict[str, list[Any]] = {f.name: [] for f in CHECKED}
    uris = batch.column("path").to_pylist()
    shas = batch.column("sha").to_pylist()
    known = batch.column("known").to_pylist()
    contents = batch.column("content")
    for i, uri in enumerate(uris):
        path = local_path(uri)
        if known[i] is not None:  # stored or refused before: not read again
            for f in CHECKED:
                cols[f.name].append({"path": path, "sha": shas[i], "status": known[i]}
                                    .get(f.name))
            continue
        data = contents[i].as_py() or b""
        parts: dict[tuple[str, str], Rows] = {}

        def rows_for(preset: str, month: str, parts: dict[tuple[str, str], Rows] = parts
                     ) -> Rows:
            return parts.setdefault((preset, month), Rows())

        res = check_file(path, shas[i], len(data), rows_for, None,
                         _bytes_reader(data, tmpdir), require_commitment=require_commitment)
        row: dict[str, Any] = {"path": path, "sha": shas[i], "size": len(data)}
        if isinstance(res, dict):
            row.update(status="error", error=msgspec.json.encode(res).decode())
        else:
            digest, gid, n, _fresh, tail = res
            ((preset, month), rows), = parts.items()
            tables = rows.tables()
            row.update(status="ok", digest=digest, game_id=gid, events=n, preset=preset,
                       month=month, match_id=tail.match_id, sealed=int(tail.sealed),
                       signatures=tail.signatures,
                       **{f"t_{t}": _ipc(tables[t]) for t in PARTITIONED})
        for f in CHECKED:
            cols[f.name].append(row.get(f.name))
    return pa.RecordBatch.from_pydict(cols, schema=CHECKED)


def write_batches(batches: Iterable[pa.RecordBatch], root: str, run: str,
                  batch_ids: Sequence[str], stamp_ms: int, fail: str = ""
                  ) -> Iterator[pa.RecordBatch]:
    """``mapInArrow``: the rows of whole groups (preset, month, bucket) in, one staged file per
    group and table out (:data:`WRITTEN`), written with the local engine's writer."""
    part, attempt, attempt_id = _task()
    stage = os.path.join(root, store.STAGING, run, f"task-{part:05d}-{attempt_id}")
    groups: dict[tuple[str, str, int], dict[str, list[pa.Table]]] = defaultdict(
        lambda: defaultdict(list))
    for batch in batches:
        keys = zip(batch.column("preset").to_pylist(), batch.column("month").to_pylist(),
                   batch.column("bucket").to_pylist(), strict=True)
        blobs = {t: batch.column(f"t_{t}") for t in PARTITIONED}
        for i, key in enumerate(keys):
            g = groups[key]
            for t in PARTITIONED:
                g[t].append(pa.ipc.open_stream(blobs[t][i].as_buffer()).read_all())
    out: dict[str, list[Any]] = {f.name: [] for f in WRITTEN}
    for (preset, month, bucket), tables in sorted(groups.items()):
        batch_id = batch_ids[bucket]
        for table in PARTITIONED:
            t = pa.concat_tables(tables[table])
            if t.num_rows == 0:
                continue
            if table == "matches":
                n = t.num_rows
                t = t.set_column(t.schema.get_field_index("ingested_at"), "ingested_at",
                                 pa.array([stamp_ms] * n, pa.timestamp("ms", tz="UTC")))
                t = t.set_column(t.schema.get_field_index("batch"), "batch",
                                 pa.array([batch_id] * n, pa.string()))
            rel = os.path.join(table, f"preset={preset}", f"month={month}",
                               f"part-{batch_id}.parquet")
            staged = store._stage(stage, rel, table, t)
            sha, size = store.fingerprint(staged)
            for k, v in (("batch", batch_id), ("table", table), ("rel", rel),
                         ("staged", staged), ("rows", t.num_rows), ("sha", sha),
                         ("bytes", size)):
                out[k].append(v)
        if (fail == "write" and part == 0 and attempt == 0) or fail == "always":
            raise RuntimeError("injected failure after writing (write)")
    yield pa.RecordBatch.from_pydict(out, schema=WRITTEN)


# -- ingest, on the driver -----------------------------------------------------------------------

def _error_table(rows: list[dict[str, Any]]) -> pa.Table | None:
    if not rows:
        return None
    cols: dict[str, list[Any]] = {f.name: [] for f in ERRORS}
    for row in rows:
        for f in ERRORS:
            cols[f.name].append(row.get(f.name, 0 if f.name == "ingested_at" else
                                        "" if f.name == "batch" else None))
    for name in ("source_path", "message"):  # a file name that is not UTF-8, as locally
        cols[name] = [storable(v) for v in cols[name]]
    return pa.Table.from_pydict(cols, schema=ERRORS)


def _commit_staged(root: str, batch: str,
                   files: list[tuple[str, str, str, int, list[Any]]], stamp: datetime
                   ) -> dict[str, Any]:
    """Rename one batch's staged files into place, then write its record (the commit point),
    as :func:`buraco_log.archive.store.commit` does for a local batch."""
    counts = {t: 0 for t in TABLES}
    # never through a partition directory linking out of the archive (as a local commit)
    store.refuse_linked_dirs(root, [rel for _t, rel, _s, _n, _k in files])
    # before any file is in place: recover() deletes only parts an intent names
    store.note_intent(root, batch, "ingest", [batch], [rel for _t, rel, _s, _n, _k in files])
    for table, rel, staged, n, _kept in files:
        final = os.path.join(root, rel)
        store.makedirs_durable(os.path.dirname(final))
        os.replace(staged, final)
        store._fsync_dir(os.path.dirname(final))
        counts[table] += n
    record = {
        "batch": batch, "committed_at": stamp.isoformat(timespec="milliseconds"),
        "files": {t: sorted(rel for tt, rel, _s, _n, _k in files if tt == t) for t in TABLES},
        "rows": counts,
        "fingerprints": {rel: kept for _t, rel, _s, _n, kept in files},
    }
    store.makedirs_durable(os.path.join(root, store.BATCHES))
    store._atomic_json(os.path.join(root, store.BATCHES, f"{batch}.json"), record)
    store.end_intent(root, batch)
    return record


def _batch_ids(n: int) -> list[str]:
    """``n`` distinct batch ids, sorted as they are committed."""
    ids: set[str] = set()
    while len(ids) < n:
        ids.add(store.new_batch_id())
    return sorted(ids)


def _read_committed(spark: SparkSession, files: list[str], columns: list[str]
                    ) -> DataFrame | None:
    return spark.read.parquet(*map(literal, files)).select(*columns) if files else None


def ingest(
    sources: Sequence[str | os.PathLike[str]],
    archive: str | os.PathLike[str],
    *,
    spark: SparkSession | None = None,
    master: str | None = None,
    conf: Mapping[str, str] | None = None,
    file_events: int | None = None,
    require_commitment: bool | None = None,
    replace_stored: bool = True,
) -> IngestReport:
    """Check every ``*.blog`` and ``*.jsonl`` log under ``sources`` on Spark and add the good
    ones to ``archive``; the same archive, rows and errors as :func:`buraco_log.archive.ingest`
    (``require_commitment`` too: None keeps the archive's setting; ``replace_stored`` too).

    Commits only when the whole job succeeded. KeyboardInterrupt (Ctrl-C, or SIGTERM through
    the CLI's handler) before the commit cancels the jobs, removes the staged files and is
    raised again: the archive is as it was. Once the commit has begun it is held until the
    commit is whole, and the report says ``interrupted``.
    """
    t0 = time.monotonic()
    spark = spark or session(master, conf)  # first: says what is missing, if anything
    from pyspark.sql import functions as F
    from pyspark.sql.window import Window

    sc = spark.sparkContext
    fail = sc.getConf().get(FAIL_FIRST, "") or spark.conf.get(FAIL_FIRST, "") or ""
    file_events = file_events or _file_events(spark)
    srcs = [os.path.abspath(os.fspath(s)) if "://" not in os.fspath(s) else os.fspath(s)
            for s in sources]
    _readable_archive(os.path.abspath(os.fspath(archive)), "spark ingest: ")
    root = store.create_archive(str(archive))
    report = IngestReport(archive=root, jobs=sc.defaultParallelism)
    run = store.new_batch_id()
    with store.locked(root):
        if require_commitment is not None:
            store.set_setting(root, "require_commitment", require_commitment)
        strict = report.require_commitment = store.settings(root).require_commitment
        # files a compact or drop left for readers: it waits a while for a gap in the reads
        report.recovered, report.cut_short = store.clean_up(root, store.WRITER_WAIT)
        committed = store.committed_files(root)
        # a source Hadoop cannot take is left to the driver, which reads the logs of its walk
        scan = [_scanned_as(s) for s in srcs if "://" in s or not _unreadable(s)]
        raw = (spark.read.format("binaryFile").option("pathGlobFilter", LOG_GLOB)
               .option("recursiveFileLookup", "true").load(scan)
               .filter(F.col("length") <= BINARY_FILE_MAX)  # pushed down: never read
               .select("path", "content")) if scan else \
            spark.createDataFrame([], "path string, content binary")
        drop, extra, unreadable, order = _listing_differences(raw, srcs)
        # a file never read is recorded once per path and reason, as the local engine does
        unreadable, unread_again = store.drop_recorded(unreadable,
                                                       store.recorded_unread(root))
        walk = spark.createDataFrame(list(enumerate(map(storable, order))),
                                     "walk bigint, path string")
        if drop:
            raw = _without(spark, raw, drop)
        if extra:
            raw = raw.unionByName(spark.createDataFrame(
                extra, "path string, content binary"))
        # A file met before is known by its hash and form (binary or JSON Lines, by name),
        # as the local engine's store.known: the hash alone counted a binary log's bytes
        # named .jsonl as stored.
        files = raw.select("path", "content", F.sha2("content", 256).alias("sha"),
                           F.col("path").endswith(".jsonl").alias("jsonl"))
        known_m = _read_committed(spark, committed["matches"],
                                  ["file_sha256", "digest", "game_id", "log_format"])
        known_e = _read_committed(spark, committed["errors"], ["file_sha256", "source_path"])
        known = None
        if known_m is not None:
            known = known_m.select(F.col("file_sha256").alias("sha"),
                                   (F.col("log_format") == "jsonl").alias("jsonl"),
                                   F.lit("stored").alias("known"))
        if known_e is not None:
            ke = known_e.select(F.col("file_sha256").alias("sha"),
                                F.col("source_path").endswith(".jsonl").alias("jsonl"),
                                F.lit("refused").alias("known"))
            known = ke if known is None else known.unionByName(ke)
        if known is not None:  # "stored" > "refused": stored wins, as in the local engine
            known = known.groupBy("sha", "jsonl").agg(F.max("known").alias("known"))
            files = files.join(known, ["sha", "jsonl"], "left")
        else:
            files = files.withColumn("known", F.lit(None).cast("string"))
        # One pass over the bytes: files already archived come through as their status only.
        checked = (files.select("path", "content", "sha", "known")
                   .mapInArrow(lambda it: check_batches(it, fail, strict), _ddl(CHECKED))
                   .persist())
        report.files, report.known_errors = unread_again, unread_again
        commit = _Commit()
        error: BaseException | None = None
        with _noting_signals() as noted:
            try:
                store.mark_stage(root, run, "ingest")  # a kill while staging: named so
                _ingest_checked(spark, root, run, checked, known_m, report, file_events,
                                fail, F, Window, unreadable, walk, commit)
            except KeyboardInterrupt:  # Ctrl-C, or SIGTERM through the CLI's handler
                report.interrupted = True
            except (ArchiveError, OSError) as exc:
                error = exc
            except Exception as exc:  # the job failed: Spark's error, in one line
                error = ArchiveError(f"spark ingest failed, nothing of this run was "
                                     f"committed: {_jvm_stopped(spark) or _spark_error(exc)}")
                error.__cause__ = exc
        if noted and not commit.started:
            # PySpark's clean-up of a call the signal cut (a Py4J call on the connection Py4J
            # has just shut) raises in its place: "Answer from Java side is empty"
            report.interrupted, error = True, None
        with _interrupt_after(raise_after=False) as caught:  # the clean-up runs whole
            _clean_up(spark, checked, root, run, stop=report.interrupted)
        report.interrupted = report.interrupted or bool(caught)
        if error is not None:
            raise error
        if report.interrupted and not commit.started:
            raise KeyboardInterrupt  # before the commit: nothing of this run is in the archive
        report.shared_match_ids = shared_match_ids(root, report.batches)  # as the local one
        report.reused_paths = reused_paths(root, report.batches)
        if replace_stored and report.stronger_copies and not report.interrupted:
            _replace(root, report, strict)  # as the local engine: on the committed files
        if store.current_ratings(root) is None and store.manifests(root):
            try:
                _store_ratings(root)
            except KeyboardInterrupt:  # derived: the report computes them when missing
                report.interrupted = True
    report.errors.sort(key=lambda e: (e.path, e.rule))
    report.seconds = time.monotonic() - t0
    return report


def _stronger(root: str, kept: DataFrame, left: DataFrame, of_stored: DataFrame | None
              ) -> list[StrongerCopy]:
    """The local engine's :func:`buraco_log.archive.ingest._stronger_copies` over the copies
    this run keeps of matches met twice, and those it leaves out (of them, or of stored ones)."""
    cols = ("path", "digest", "match_id", "sealed", "signatures")

    def tails(df: DataFrame | None) -> list[tuple[str, str, Tail]]:
        rows = df.select(*cols).collect() if df is not None else []
        return [(r["path"], r["digest"], Tail(r["match_id"], bool(r["sealed"]),
                                              r["signatures"])) for r in rows]

    held = {d: _Kept(p, t, 0) for p, d, t in tails(kept)}
    return _stronger_copies(root, tails(left) + tails(of_stored), held)


def _file_events(spark: SparkSession) -> int:
    """The :data:`FILE_EVENTS_CONF` setting: a positive whole number, else refused in one
    line before anything is read (``abc`` was a ValueError with its traceback, ``0`` a
    "division by zero" after the whole check job)."""
    text = str(spark.conf.get(FILE_EVENTS_CONF, str(FILE_EVENTS)) or "").strip()
    if not text.isascii() or not text.isdigit() or int(text) < 1:
        raise ArchiveError(f"--conf {FILE_EVENTS_CONF}={text}: the events an output file aims "
                           f"at, a whole number of 1 or more (default {FILE_EVENTS})")
    return int(text)


@contextlib.contextmanager
def _noting_signals() -> Iterator[list[int]]:
    """Note Ctrl-C and SIGTERM while the jobs run, then let their handlers act as before.
    The KeyboardInterrupt a handler raises inside a Py4J call can be replaced on its way out
    by the error of PySpark's clean-up; the note says what ended the run. A signal left at
    its default action (SIGTERM outside the CLI) still ends the process."""
    noted: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield noted
        return
    previous: dict[int, Any] = {}

    def note(signum: int, frame: Any) -> None:
        noted.append(signum)
        previous[signum](signum, frame)

    for sig in (signal.SIGINT, signal.SIGTERM):
        handler = signal.getsignal(sig)
        if callable(handler):
            previous[sig] = handler
            signal.signal(sig, note)
    try:
        yield noted
    finally:
        for signum, held in previous.items():
            signal.signal(signum, held)


class _Commit:
    """Whether the driver has begun to commit (from then on the run is committed whole)."""

    started = False


JOBS_STOP = 10.0
"""Seconds an interrupted ingest waits for its cancelled jobs to end before it removes its
staged files (a task still writing would leave one behind)."""


def _clean_up(spark: SparkSession, checked: DataFrame, root: str, run: str, stop: bool
              ) -> None:
    """After the run, whatever ended it: cancel its jobs if it was interrupted, free the
    checked rows, remove its staged files. The JVM may be gone (killed with the process
    group): each step that needs it is skipped then."""
    if stop:
        with contextlib.suppress(Exception):
            sc = spark.sparkContext
            sc.cancelAllJobs()
            deadline = time.monotonic() + JOBS_STOP
            while sc.statusTracker().getActiveJobsIds() and time.monotonic() < deadline:
                time.sleep(0.1)
    with contextlib.suppress(Exception):
        checked.unpersist()
    store.discard_tree(os.path.join(root, store.STAGING, run))


def _ingest_checked(spark: SparkSession, root: str, run: str, checked: DataFrame,
                    known_m: DataFrame | None, report: IngestReport, file_events: int,
                    fail: str, F: Any, Window: Any, unreadable: list[dict[str, Any]],
                    walk: DataFrame, commit: _Commit) -> None:
    meta = checked.select("path", "sha", "size", "status", "digest", "game_id", "events",
                          "preset", "month", "error", "match_id", "sealed", "signatures"
                          ).join(walk, "path", "left")
    first_met = (F.col("walk").asc_nulls_last(), F.col("path"))  # the local engine's order
    # A refused file once per file hash and form (binary or JSON Lines: what the local
    # engine's _copy_key matches), first by path; its copies are refused after it.
    errs = meta.filter(F.col("status") == "error").withColumn(
        "jsonl", F.col("path").endswith(".jsonl")).withColumn(
        "r", F.row_number().over(Window.partitionBy("sha", "jsonl").orderBy(*first_met)))
    # A match once per head digest, the strongest copy (sealed, then more signature records:
    # Tail.rank) first by path, unless the archive holds it.
    ok = meta.filter(F.col("status") == "ok")
    of_stored = None
    if known_m is not None:
        of_stored = ok.join(known_m.select("digest").distinct(), "digest", "left_semi")
        ok = ok.join(known_m.select("digest").distinct(), "digest", "left_anti")
    ok = ok.withColumn("r", F.row_number().over(Window.partitionBy("digest").orderBy(
        F.col("sealed").desc(), F.col("signatures").desc(), *first_met))).withColumn(
        "n", F.count("*").over(Window.partitionBy("digest")))
    first = ok.filter(F.col("r") == 1).drop("r")
    # Two digests with one 63-bit game id: never seen, refused rather than mixed.
    if known_m is not None:
        taken = known_m.select("game_id", F.col("digest").alias("other")).distinct()
        first = first.join(taken, "game_id", "left")
    else:
        first = first.withColumn("other", F.lit(None).cast("string"))
    first = first.withColumn(
        "clash", F.col("other").isNotNull() | (F.row_number().over(
            Window.partitionBy("game_id").orderBy(*first_met)) > 1))
    counts = {r["status"]: r["n"] for r in
              meta.groupBy("status").agg(F.count("*").alias("n")).collect()}
    report.files += sum(counts.values()) + len(unreadable)
    report.already_stored = counts.get("stored", 0)
    report.known_errors += counts.get("refused", 0)
    all_errs = errs.select("sha", "jsonl", "path", "r", "error").collect()
    error_rows = [json.loads(r["error"]) for r in all_errs if r["r"] == 1]
    # A copy of a refused file is refused too, named with the first one's finding (as the
    # local engine does), not counted as a duplicate match.
    firsts = {(r["sha"], r["jsonl"]): json.loads(r["error"]) for r in all_errs if r["r"] == 1}
    copies = sorted((((r["sha"], r["jsonl"]), r["path"]) for r in all_errs if r["r"] > 1),
                    key=lambda c: c[1])
    error_rows += unreadable
    clashes = first.filter("clash").select("path", "game_id").collect()
    for r in clashes:
        error_rows.append({"file_sha256": "", "source_path": r["path"], "file_bytes": None,
                           "code": "duplicate", "rule": "archive.game_id",
                           "message": f"game id {r['game_id']} is taken by another match",
                           "seq": None, "match_id": None, "digest": None,
                           "verdict_json": None})
    winners = first.filter(~F.col("clash")).select("path", "preset", "month", "events")
    sizes = winners.groupBy("preset", "month").agg(F.sum("events").alias("events"),
                                                   F.count("*").alias("matches")).collect()
    report.added = sum(r["matches"] for r in sizes)
    report.events = sum(r["events"] for r in sizes)
    # Copies: matches already archived or met first under another path, refused files met
    # first under another path.
    report.duplicates = counts.get("ok", 0) - report.added - len(clashes)
    report.stronger_copies = _stronger(root, first.filter(~F.col("clash") & (F.col("n") > 1)),
                                       ok.filter(F.col("r") > 1), of_stored)
    for row in error_rows:
        report.errors.append(ErrorSummary(row["source_path"], row["code"], row["rule"],
                                          row["message"], row["seq"]))
    for key, path in copies:
        row = firsts[key]
        report.errors.append(ErrorSummary(path, row["code"], row["rule"],
                                          f"the same bytes as {row['source_path']}: "
                                          f"{row['message']}", row["seq"]))
    stamp = datetime.now(UTC)
    by_batch: dict[str, list[tuple[str, str, str, int, list[Any]]]] = defaultdict(list)
    if sizes:
        buckets = {(r["preset"], r["month"]): max(1, math.ceil(r["events"] / file_events))
                   for r in sizes}
        batch_ids = _batch_ids(max(buckets.values()))
        kdf = spark.createDataFrame([(p, m, k) for (p, m), k in buckets.items()],
                                    "preset string, month string, k int")
        data = (checked.join(winners.select("path"), "path", "left_semi")
                .join(F.broadcast(kdf), ["preset", "month"])
                .withColumn("bucket", F.pmod(F.xxhash64("game_id"), F.col("k")).cast("int"))
                .repartition(sum(buckets.values()), "preset", "month", "bucket")
                .select("preset", "month", "bucket", *(f"t_{t}" for t in PARTITIONED)))
        stamp_ms = int(stamp.timestamp() * 1000)
        written = data.mapInArrow(
            lambda it: write_batches(it, root, run, batch_ids, stamp_ms, fail),
            _ddl(WRITTEN)).collect()
        seen: set[str] = set()
        for w in written:
            if w["rel"] in seen:  # one group, one task: a second file would be a defect
                raise ArchiveError(f"spark ingest: {w['rel']} written twice; nothing committed")
            seen.add(w["rel"])
            by_batch[w["batch"]].append((w["table"], w["rel"], w["staged"], w["rows"],
                                         [w["sha"], w["bytes"]]))
    # The commit: Ctrl-C and SIGTERM are held until it is whole, and then only noted (the
    # run is in the archive). Cut before it, the run leaves nothing.
    with _interrupt_after(raise_after=False) as caught:
        commit.started = True
        for batch in sorted(by_batch):
            _commit_staged(root, batch, by_batch[batch], stamp)
            report.batches.append(batch)
        table = _error_table(error_rows)
        if table is not None:
            record = store.commit(root, store.new_batch_id(), {}, table)
            if record:
                report.batches.append(record["batch"])
    report.interrupted = bool(caught)


# -- query ---------------------------------------------------------------------------------------

# The events view (views.EVENTS_SQL) in Spark SQL: Spark has no unsigned bytes, so `card` and
# `cards` are SMALLINT values of the same bytes.
EVENTS_SQL = """
SELECT game_id, seq, hand, kind, seat,
  CASE WHEN kind NOT IN ('ml', 'lo', 'rt') AND cards IS NOT NULL
    THEN CAST(conv(hex(substring(cards, 1, 1)), 16, 10) AS SMALLINT) END AS card,
  CASE WHEN kind IN ('ml', 'lo', 'rt') THEN transform(sequence(1, length(cards)),
    i -> CAST(conv(hex(substring(cards, i, 1)), 16, 10) AS SMALLINT)) END AS cards,
  meld,
  CASE WHEN pickup THEN CAST(adds - coalesce(max(CASE WHEN pickup THEN adds END) OVER
    (PARTITION BY preset, month, game_id, hand ORDER BY seq
     ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS SMALLINT)
    ELSE count END AS count,
  direct,
  CAST(dealt - draws AS SMALLINT) AS stock,
  CAST(adds - coalesce(max(CASE WHEN pickup THEN adds END) OVER
    (PARTITION BY preset, month, game_id, hand ORDER BY seq
     ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW), 0) AS SMALLINT) AS pile,
  preset, month
FROM (
  SELECT *,
    CAST(sum(adds_one) OVER hand_rows AS SMALLINT) AS adds,
    CAST(sum(draws_one) OVER hand_rows AS SMALLINT) AS draws,
    CAST(coalesce(sum(stock) OVER hand_rows, 0) AS SMALLINT) AS dealt
  FROM (
    SELECT *,
      CAST(kind IN ('dc', 'rj') OR (kind = 'hs' AND cards IS NOT NULL) AS INT) AS adds_one,
      CAST(kind = 'dr' AS INT) AS draws_one,
      kind = 'pt' AS pickup
    FROM _events_stored)
  WINDOW hand_rows AS (PARTITION BY preset, month, game_id, hand ORDER BY seq
                       ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
)
"""

_SPARK_TYPES = {
    pa.int8(): "TINYINT", pa.int16(): "SMALLINT", pa.int32(): "INT", pa.int64(): "BIGINT",
    pa.uint8(): "SMALLINT", pa.string(): "STRING", pa.bool_(): "BOOLEAN",
    pa.binary(): "BINARY",
}


def _spark_type(t: pa.DataType) -> str:
    if pa.types.is_dictionary(t):
        return _spark_type(t.value_type)
    if pa.types.is_list(t):
        return f"ARRAY<{_spark_type(t.value_type)}>"
    if pa.types.is_timestamp(t):
        return "TIMESTAMP"
    return _SPARK_TYPES[t]


def create_views(spark: SparkSession, archive: str | os.PathLike[str]) -> str:
    """Temporary views ``matches hands events melds players errors`` over the committed files
    of ``archive`` (so a half-committed batch is never seen); returns the archive's root."""
    from pyspark.sql import functions as F

    root = store.check_archive(str(archive))
    _readable_archive(root)
    files = store.committed_files(root)
    for table in TABLES:
        name = "_events_stored" if table == "events" else table
        if files[table]:
            reader = spark.read
            if table in PARTITIONED:
                reader = reader.option("basePath", os.path.join(root, table))
            if table == "matches":  # files from before signed and key_id: merged, NULL there
                reader = reader.option("mergeSchema", "true")
            df = reader.parquet(*map(literal, files[table]))
            for f in VIEW_SCHEMAS[table]:  # columns no file holds yet: NULL, as DuckDB reads
                if f.name not in df.columns:
                    df = df.withColumn(f.name, F.lit(None).cast(_spark_type(f.type)))
            df.createOrReplaceTempView(name)
        else:
            schema = VIEW_SCHEMAS["events" if table == "events" else table]
            cols = [f"CAST(NULL AS {_spark_type(f.type)}) AS `{f.name}`" for f in schema]
            if table in PARTITIONED:
                cols += ["CAST(NULL AS STRING) AS preset", "CAST(NULL AS STRING) AS month"]
            spark.sql(f"SELECT {', '.join(cols)} WHERE false").createOrReplaceTempView(
                "events" if table == "events" else name)
            continue
        if table == "events":
            spark.sql(EVENTS_SQL).createOrReplaceTempView("events")
    return root


# Built-in functions that reach outside their arguments (Java, files, the session, randomness
# is harmless but the others are not): refused in user SQL.
DENIED_FUNCTIONS = frozenset({
    "reflect", "java_method", "try_reflect", "input_file_name", "input_file_block_start",
    "input_file_block_length", "current_user", "user", "session_user", "current_catalog",
    "current_database", "current_schema", "spark_partition_id", "monotonically_increasing_id",
    "read_files", "assert_true", "raise_error", "version", "current_path", "python_worker_logs",
    # XML parsers that load files and URLs: xpath reads the external DTD a document names
    # (``<!DOCTYPE a SYSTEM "file:///...">``: its entities, or "No such file" for a missing
    # one), from_xml the XSD of its rowValidationXSDPath option, whose key can be computed.
    "xpath", "xpath_boolean", "xpath_double", "xpath_float", "xpath_int", "xpath_long",
    "xpath_number", "xpath_short", "xpath_string", "from_xml", "schema_of_xml",
    # decoders of other formats whose schemas can be files (a protobuf descriptor file by
    # path), loaded on a cluster that has their packages
    "from_protobuf", "to_protobuf", "from_avro", "to_avro", "schema_of_avro",
})
# Logical plan nodes a plain query parses to; anything else (commands, hints, table-valued
# functions, inserts, CTAS, CACHE, SET...) is refused before Spark runs it.
_QUERY_NODES = frozenset({
    "Project", "Filter", "Aggregate", "Sort", "GlobalLimit", "LocalLimit", "Offset",
    "Distinct", "Deduplicate", "Union", "Intersect", "Except", "Join", "SubqueryAlias",
    "UnresolvedWith", "CTERelationRef", "UnresolvedRelation", "OneRowRelation",
    "UnresolvedInlineTable", "LocalRelation", "Window", "WithWindowDefinition", "Generate",
    "Pivot", "Unpivot", "UnresolvedSubqueryColumnAliases", "Tail", "Sample",
    "UnresolvedHaving", "LateralJoin", "Expand", "GroupingSets",
    # DISTRIBUTE BY and CLUSTER BY (SORT BY is a Sort, not global): how rows are spread over
    # partitions, read-only; the REPARTITION hints make other nodes, and hints are refused
    "RepartitionByExpression",
    # LIMIT ALL: no limit, read-only (DuckDB takes it; before it was refused as a command)
    "LimitAll",
})
# Bounds on the statement's text, checked before Spark parses it: past them Spark's parser
# overflows its stack (~300 levels), runs out of memory (100,000 levels of parentheses: after
# 5 minutes), or the checks take minutes.
MAX_SQL_CHARS = 1_000_000
MAX_DEPTH = 100
"""Levels of parentheses and CASE ... END, one inside the other."""
MAX_TOKENS = 20_000
"""Words, numbers, strings and signs (a list of 10,000 items is 20,000): the checks walk
every node of the statement through Py4J, and a list of 10,000 took 3 s to check."""
MAX_PARTS = 500_000
"""Objects of a parsed statement the check walks (nodes and the lists that hold them)."""
# The packages of the nodes a parsed query may hold: plans, expressions, unresolved names.
_CATALYST_PACKAGES = ("catalyst.plans.logical", "catalyst.analysis")
VIEWS = frozenset(TABLES)


class _Walk:
    """Every tree node of a plan, reached in the JVM through Py4J.

    Not through ``toJSON``: it writes a node again inside every field that is not one of
    its children (a CASE's ``elseValue``, a CTE's relations), so its text grows four-fold
    with each level of nesting (16 nested CASEs: 31 MB, 7 s; 100: the driver ran out of
    memory after six minutes), and it looks each child up in its parent's list, so a list
    of 100,000 items took four minutes. Here each object is met once, through the fields
    its constructor took (what ``toJSON`` wrote): tree nodes, and the sequences, options
    and tuples that hold them; anything else (a data type, a string's bytes) is a value."""

    def __init__(self, jvm: Any, root: Any) -> None:
        loader = root.getClass().getClassLoader()

        def load(name: str) -> Any:
            return jvm.java.lang.Class.forName(name, False, loader)

        self._kinds: dict[str, str] = {}
        self._types = [(kind, load(name)) for kind, name in (
            ("node", "org.apache.spark.sql.catalyst.trees.TreeNode"),
            ("seq", "scala.collection.Seq"),
            ("iterable", "scala.collection.Iterable"),
            ("option", "scala.Option"),
            ("tuple", "scala.Product"),  # after "node": tuples and the like
            ("java", "java.lang.Iterable"))]
        self._expression = load("org.apache.spark.sql.catalyst.expressions.Expression")
        # a function the session defined (a Python or Scala UDF, a catalog's function)
        self._udf = load("org.apache.spark.sql.catalyst.expressions.UserDefinedExpression")
        self.expressions: set[str] = set()  # the classes met that are expressions
        self.user_defined: set[str] = set()  # and those that are such functions
        self.root = root

    def _kind(self, cls: Any) -> tuple[str, str]:
        name = str(cls.getName())
        kind = self._kinds.get(name)
        if kind is None:
            kind = next((k for k, t in self._types if t.isAssignableFrom(cls)), "value")
            if kind == "tuple" and not name.startswith("scala.Tuple"):
                kind = "value"  # other products (an ExprId, a join type): no nodes in them
            if kind == "node" and self._expression.isAssignableFrom(cls):
                self.expressions.add(name)
                if self._udf.isAssignableFrom(cls):
                    self.user_defined.add(name)
            self._kinds[name] = kind
        return name, kind

    def nodes(self, limit: int, opaque: frozenset[str] = frozenset({"Literal"})
              ) -> Iterator[tuple[str, Any]]:
        """``(class name, node)`` for every tree node; past ``limit`` objects, refused. The
        fields of nodes named in ``opaque`` (a literal's value and type) are not walked."""
        from py4j.java_gateway import JavaObject  # type: ignore[import-untyped]

        stack: list[Any] = [self.root]
        met = 0
        while stack:
            obj = stack.pop()
            if not isinstance(obj, JavaObject):  # a string, a number: converted by Py4J
                continue
            met += 1
            if met > limit:
                raise ArchiveError(f"query: the statement is too large for Spark (more than "
                                   f"{limit:,} parts)")
            name, kind = self._kind(obj.getClass())
            if kind == "node":
                yield name, obj
                if name.rpartition(".")[2] not in opaque:
                    stack += [obj.productElement(i) for i in range(obj.productArity())]
            elif kind == "seq":
                stack += [obj.apply(i) for i in range(obj.size())]
            elif kind in ("iterable", "java"):
                it = obj.iterator()
                while it.hasNext():
                    stack.append(it.next())
            elif kind == "option":
                if obj.isDefined():
                    stack.append(obj.get())
            elif kind == "tuple":
                stack += [obj.productElement(i) for i in range(obj.productArity())]


def _names(seq: Any) -> list[str]:
    """A Scala ``Seq[String]`` (a multipart name) as a list."""
    return [str(seq.apply(i)) for i in range(seq.size())]


def _one_name(parts: list[str]) -> str | None:
    """The name of a one-part identifier of plain characters, lowercased; else None."""
    if len(parts) == 1 and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", parts[0]):
        return parts[0].lower()
    return None


_LEX = re.compile(r"""
    (?P<space>\s+|--[^\n]*)
  | (?P<comment>/\*)
  | [rR](?:'[^']*'|"[^"]*")                       # raw strings: no escapes
  | '(?:[^'\\]|\\.|'')*' | "(?:[^"\\]|\\.|"")*"    # strings (one way to match:
  | `(?:[^`]|``)*`                                # no backtracking when unclosed)
  | (?P<word>\w+)
  | (?P<sign>.)
""", re.VERBOSE | re.DOTALL)
_OPEN, _CLOSE = "([", ")]"


def check_text(sql: str) -> None:
    """Refuse a statement too long or nested too deeply for Spark, before Spark parses it
    (:data:`MAX_SQL_CHARS`, :data:`MAX_DEPTH`, :data:`MAX_TOKENS`): it is read once, as
    Spark's lexer reads it (strings, quoted names and comments hold no levels)."""
    if len(sql) > MAX_SQL_CHARS:
        raise ArchiveError(f"query: the statement is {len(sql):,} characters long; Spark "
                           f"takes at most {MAX_SQL_CHARS:,}")
    levels: list[str] = []  # the open "(", "[" and CASE, innermost last
    tokens = 0
    pos = 0
    while pos < len(sql):
        m = _LEX.match(sql, pos)
        assert m is not None  # (?P<sign>.) matches any character
        pos = m.end()
        if m.group("space"):
            continue
        if m.group("comment"):
            pos = _comment_end(sql, pos)
            continue
        tokens += 1
        if tokens > MAX_TOKENS:
            raise ArchiveError(f"query: the statement is too long for Spark: more than "
                               f"{MAX_TOKENS:,} words, numbers and signs")
        word, sign = m.group("word"), m.group("sign")
        if (sign and sign in _OPEN) or (word and word.upper() == "CASE"):
            levels.append(sign or "CASE")
            if len(levels) > MAX_DEPTH:
                raise ArchiveError(f"query: the statement is nested too deeply: more than "
                                   f"{MAX_DEPTH} levels of parentheses, brackets and CASE "
                                   f"(at character {m.start():,})")
        elif sign and sign in _CLOSE:  # closes its own "(" or "[", and a CASE left open
            opener = _OPEN[_CLOSE.index(sign)]
            while levels and levels.pop() != opener:
                pass
        elif word and word.upper() == "END" and levels and levels[-1] == "CASE":
            levels.pop()


def _comment_end(sql: str, pos: int) -> int:
    """Where the bracketed comment opened just before ``pos`` ends (Spark's nest)."""
    depth = 1
    while depth and pos < len(sql):
        nxt = min((i for i in (sql.find("/*", pos), sql.find("*/", pos)) if i >= 0),
                  default=len(sql))
        if nxt == len(sql):
            return nxt
        depth += 1 if sql.startswith("/*", nxt) else -1
        pos = nxt + 2
    return pos


def _hints(sql: str) -> list[str]:
    """The hint comments (``/*+ ... */``) of ``sql`` as written, outside strings and quoted
    names, read as :func:`check_text` reads it."""
    found: list[str] = []
    pos = 0
    while pos < len(sql):
        m = _LEX.match(sql, pos)
        assert m is not None
        pos = m.end()
        if m.group("comment"):
            pos = _comment_end(sql, pos)
            if sql.startswith("/*+", m.start()):
                found.append(" ".join(sql[m.start():pos].split()))
    return found


def _hint_refused(sql: str, name: str) -> ArchiveError:
    """A hint refused by what the statement says (Catalyst's node was ``UnresolvedHint``, a
    name the user never wrote): the hint comment naming it, or the first one."""
    hints = _hints(sql)
    said = next((h for h in hints if name.lower() in h.lower()), hints[0] if hints else
                f"/*+ {name} */")
    return ArchiveError(f"query: hints are not allowed: {said}")


def check_sql(spark: SparkSession, sql: str) -> DataFrame:
    """Refuse (:class:`ArchiveError`) anything but one query over the archive's views that
    calls only built-in functions that read nothing but their arguments; returns the query,
    analyzed and not yet run.

    Two checks: the parsed statement (its plan nodes, the functions it calls, the names it
    reads), then the analyzed plan (:func:`_check_reads`: what each name resolved to, since a
    name that is a CTE in one place of the query can be a table of the session in another)."""
    check_text(sql)
    _activate(spark)
    _check_substitution(spark, sql)
    _check_parsed(spark, sql)
    try:
        df = spark.sql(sql)  # a query is analyzed here, not run
        analyzed = df._jdf.queryExecution().analyzed()
    except Exception as exc:
        raise ArchiveError(f"query: {_first_line(exc)}") from None
    _check_reads(analyzed)
    _check_calls(spark, analyzed)
    return df


def _activate(spark: SparkSession) -> None:
    """Make ``spark`` the JVM's active session in this thread, so the checks parse with its
    settings. A query runs in a thread of its own (:func:`_in_group`), where the JVM had no
    active session: the parser took Spark's defaults, with variable substitution on, and
    ``SELECT * FROM ${env:NAME}`` (or ``${system:user.home}``) was refused naming the value
    ("not [s3cr3t]"), though the session substitutes nothing."""
    from pyspark.sql import SparkSession as Session

    try:
        Session._get_j_spark_session_class(spark._jvm).setActiveSession(spark._jsparkSession)
    except Exception as exc:  # a Py4J failure: one line
        raise ArchiveError(f"query: {_first_line(exc)}") from None


def _check_substitution(spark: SparkSession, sql: str) -> None:
    """Refuse ``${...}`` where the session substitutes variables (a session this module did
    not start, or ``--conf spark.sql.variable.substitute=true``): Spark's parser replaces
    ``${env:NAME}``, ``${system:NAME}`` and ``${spark.some.setting}`` with their values
    before it parses, so a query read the environment past every check."""
    if "${" not in sql:
        return
    with contextlib.suppress(Exception):
        if str(spark.conf.get("spark.sql.variable.substitute", "true")).lower() == "false":
            return
    raise ArchiveError("query: ${...} is not allowed: Spark replaces it with a value of the "
                       "environment, of Java's properties or of Spark's settings "
                       "(spark.sql.variable.substitute is on)")


DATE_MINUS_DATE = ("query: DATE - DATE is an INTERVAL on Spark but a number of days on DuckDB "
                   "(28, not INTERVAL 28 DAYS): write datediff(end, start) for the days, as "
                   "DuckDB's date_diff('day', start, end) gives them")
"""The refusal of a difference of two dates: the same query answered differently by the two
engines (and ``DATE - DATE + 1`` or ``> 20`` failed on Spark alone, as a type error)."""


def _check_calls(spark: SparkSession, plan: Any) -> None:
    """Refuse an analyzed plan (outside the archive's views) that calls a function the
    session or its catalog defined, or one of :data:`DENIED_FUNCTIONS` however it was named:
    ``SELECT current_user`` (no parentheses: a column name until analysis) returned the OS
    user past the parsed check, and a Python function the session had registered ran. A
    difference of two dates is refused too (:data:`DATE_MINUS_DATE`)."""
    walk = _Walk(spark._jvm, plan)
    try:
        for full, node in walk.nodes(MAX_PARTS, frozenset({"Literal", "View"})):
            if full not in walk.expressions or full.endswith((".Literal", "Reference")):
                continue  # a plan (PipeOperator is one, in the expressions' package)
            if full in walk.user_defined:
                raise ArchiveError(f"query: function {node.name()} is not allowed (not "
                                   "one of Spark's built-in functions)")
            if full.endswith(".SubtractDates"):
                raise ArchiveError(DATE_MINUS_DATE)
            name = str(node.prettyName()).lower()
            if name in DENIED_FUNCTIONS:
                raise ArchiveError(f"query: function {name} is not allowed")
    except ArchiveError:
        raise
    except Exception as exc:  # a Py4J failure while walking the plan: one line
        raise ArchiveError(f"query: {_first_line(exc)}") from None


# The leaves an analyzed query may hold besides the archive's views: constants and CTEs.
_QUERY_LEAVES = frozenset({"OneRowRelation", "LocalRelation", "CTERelationRef",
                           "UnionLoopRef"})


def _check_reads(plan: Any) -> None:
    """Refuse an analyzed plan (a Java ``LogicalPlan``) that reads anything but the archive's
    temporary views: every ``View`` in it, subqueries included, must be one of them, and every
    other leaf a constant or a reference to a CTE. The parsed check alone let ``FROM t WHERE
    EXISTS (WITH t AS (SELECT 1) SELECT 1)`` read any table ``t`` of the session: the CTE's
    name was allowed everywhere, not only where it is in scope."""
    stack = [plan]
    while stack:
        node = stack.pop()
        cls = str(node.getClass().getSimpleName())
        if cls == "View":
            name = str(node.desc().identifier().table())
            if not (bool(node.isTempView()) and name.lower() in VIEWS):
                raise ArchiveError("query: only the archive's views can be read ("
                                   + ", ".join(sorted(VIEWS)) + f"), not {name}")
            continue  # the view's own plan: the archive's files
        children = node.children()
        subqueries = node.subqueries()
        if children.size() == 0 and cls not in _QUERY_LEAVES:
            raise ArchiveError("query: only the archive's views can be read ("
                               + ", ".join(sorted(VIEWS)) + f"), not {cls}")
        stack += [children.apply(i) for i in range(children.size())]
        stack += [subqueries.apply(i) for i in range(subqueries.size())]


def _check_parsed(spark: SparkSession, sql: str) -> None:
    """The first check of :func:`check_sql`: the statement as Spark parses it."""
    try:
        plan = spark._jsparkSession.sessionState().sqlParser().parsePlan(sql)
    except Exception as exc:
        raise ArchiveError(f"query: {_first_line(exc)}") from None
    root = str(plan.getClass().getName()).rsplit(".", 1)[-1]
    if root == "UnresolvedHint":
        raise _hint_refused(sql, str(plan.name()))
    if root not in _QUERY_NODES:  # a command from any package (EXECUTE IMMEDIATE, CREATE
        raise ArchiveError(f"query: only read-only queries are allowed, not {root}")  # ...)
    ctes: set[str] = set()
    relations: list[list[str]] = []
    try:
        builtin = _builtin_functions(spark)
        for full, node in _Walk(spark._jvm, plan).nodes(MAX_PARTS):
            if full.endswith(".UnresolvedHint"):
                raise _hint_refused(sql, str(node.name()))
            _check_node(full, node, ctes, relations, builtin)
    except ArchiveError:
        raise
    except Exception as exc:  # a Py4J failure while walking the plan: one line
        raise ArchiveError(f"query: {_first_line(exc)}") from None
    for parts in relations:
        name = _one_name(parts)
        if name is None or (name not in VIEWS and name not in ctes):
            raise ArchiveError("query: only the archive's views can be read ("
                               + ", ".join(sorted(VIEWS)) + f"), not [{', '.join(parts)}]")


def _check_function(parts: list[str], builtin: frozenset[str]) -> None:
    """Refuse a call of anything but a built-in function outside the deny-list."""
    name = _one_name(parts)
    if name is None or name in DENIED_FUNCTIONS:
        raise ArchiveError(f"query: function [{', '.join(parts)}] is not allowed")
    if name not in builtin:
        raise ArchiveError(f"query: function [{', '.join(parts)}] is not allowed (not one "
                           "of Spark's built-in functions)")


_BUILTIN: list[frozenset[str]] = []


def _builtin_functions(spark: SparkSession) -> frozenset[str]:
    """The names of Spark's built-in functions (its own registry, not the session's)."""
    if not _BUILTIN:
        jvm: Any = spark._jvm
        ids = jvm.org.apache.spark.sql.catalyst.analysis.FunctionRegistry.builtin().listFunction()
        _BUILTIN.append(frozenset(str(ids.apply(i).funcName()).lower()
                                  for i in range(ids.size())))
    return _BUILTIN[0]


def _check_node(full: str, node: Any, ctes: set[str], relations: list[list[str]],
                builtin: frozenset[str]) -> None:
    """Refuse one node of a parsed statement; note the CTEs it names and the names it
    reads (checked once every CTE of the statement is known). A function must be a
    built-in: any other name is looked up in the session and its catalog, where resolving
    a catalog's function loads the files it names (its JARs, by URI)."""
    package, _, cls = full.rpartition(".")
    if package.endswith("plans.logical") and cls not in _QUERY_NODES:
        raise ArchiveError(f"query: only read-only queries are allowed, not {cls}")
    if not (package.endswith(_CATALYST_PACKAGES) or ".catalyst.expressions." in package
            or package.endswith(".catalyst.expressions")):  # execution.datasources...
        raise ArchiveError(f"query: only read-only queries are allowed, not {cls}")
    if "Identifier" in cls or "ExecuteImmediate" in cls:
        # IDENTIFIER('reflect')(...) names its function at analysis, past the name check
        raise ArchiveError(f"query: {cls} (IDENTIFIER(...), EXECUTE IMMEDIATE) is not "
                           "allowed")
    if cls == "UnresolvedWith":
        # Only the CTEs' own names (each relation's first field): any "name" in the node
        # also took column aliases, so `WITH c AS (SELECT 1 AS t) SELECT * FROM t` let any
        # table t of the session through.
        rels = node.cteRelations()
        ctes |= {str(rels.apply(i)._1()).lower() for i in range(rels.size())}
    elif cls == "UnresolvedRelation":
        relations.append(_names(node.multipartIdentifier()))
    elif cls == "UnresolvedFunction":
        _check_function(_names(node.nameParts()), builtin)
    elif cls == "UnresolvedGenerator":  # LATERAL VIEW f(...): looked up as a function is
        ident = node.name()
        parts = [str(o.get()) for o in (ident.catalog(), ident.database()) if o.isDefined()]
        _check_function([*parts, str(ident.funcName())], builtin)
    elif cls in ("UnresolvedTableValuedFunction", "UnresolvedTVFAliases"):
        # said as a table function, by its name (Catalyst's class name alone said nothing)
        named = ".".join(_names(node.name()))
        raise ArchiveError(f"query: a table function ({named}) is not allowed: only the "
                           f"archive's views can be read ({', '.join(sorted(VIEWS))})")
    elif "command" in full.lower():
        raise ArchiveError(f"query: only read-only queries are allowed, not {cls}")


def _spark_error(exc: BaseException) -> str:
    """The line of a Spark failure that says what went wrong (the Python error of a task, if
    one failed), not the Java stack."""
    text = str(exc)
    found: list[str] = re.findall(r"^(\w*(?:Error|Exception)\b.*)$", text, re.MULTILINE)
    python = [f for f in found if not f.startswith(("org.", "java.", "Py4J"))]
    return str((python or found or [_first_line(exc)])[-1]).strip()[:300]


_PY4J_CALL = re.compile(r"An error occurred while calling [\w.]+\.?$")
_JAVA_BARE = re.compile(r"^(?:Caused by: |: )((?:[a-z_$][\w$]*\.)+[A-Z][\w$]*)$")
_JAVA_CAUSE = re.compile(r"^(?:Caused by: |: )((?:[a-z_$][\w$]*\.)+[A-Z][\w$]*): (.+)$")
_TOO_DEEP = "the statement is nested too deeply for Spark"


def _first_line(exc: BaseException) -> str:
    """The line of an error that says what went wrong. A Java error reached through Py4J
    starts with "An error occurred while calling o110.getResult.", which says nothing: the
    reason is its deepest Java cause (an invalid XPath, a bad regular expression...). The
    parser's own "too complex" error and a stack overflow say what the user can change."""
    line = _reason(exc)
    if "FAILED_TO_PARSE_TOO_COMPLEX" in line:
        return (f"{_TOO_DEEP} (FAILED_TO_PARSE_TOO_COMPLEX: a chain of a few hundred "
                "operators, JOINs or UNIONs nests as deep as parentheses)")
    if line.endswith("StackOverflowError"):
        return f"{_TOO_DEEP} (java.lang.StackOverflowError)"
    return line


def _reason(exc: BaseException) -> str:
    text = str(exc).strip()
    if not text:
        return type(exc).__name__
    lines = text.splitlines()
    # Py4J's "An error occurred while calling ...", or a captured Java error whose own
    # line names no reason ("Error while instantiating '...SessionStateBuilder':")
    if _PY4J_CALL.match(lines[0]) or lines[0].endswith(":"):
        causes = [(m.group(1), m.group(2).strip()) for m in map(_JAVA_CAUSE.match, lines) if m]
        causes = [c for c in causes
                  if c[1] and not c[1].startswith("Exception thrown in awaitResult")]
        if causes:
            cls, reason = causes[-1]
            if cls.endswith("OutOfMemoryError"):  # "Java heap space" alone says too little
                reason = f"Spark ran out of memory ({cls}: {reason})"
            return reason[:300]
        # an error with no message (a statement nested too deep for the parser's stack)
        bare = [m.group(1) for m in map(_JAVA_BARE.match, lines) if m]
        if bare:
            return bare[-1]
        cause = _deepest_cause(getattr(exc, "_origin", None))  # no stack in its text
        if cause:
            return cause[:300]
    return lines[0]


def _deepest_cause(origin: Any) -> str | None:
    """The message of the deepest cause of a Java throwable (PySpark's captured error keeps
    it as ``_origin``), or None."""
    message = None
    with contextlib.suppress(Exception):
        for _ in range(20):  # a chain, not a cycle
            if origin is None:
                break
            text = origin.getMessage()
            message = str(text) if text else message
            origin = origin.getCause()
    return message


def _views(spark: SparkSession, archive: str | os.PathLike[str], what: str) -> str:
    """:func:`create_views`, its Spark failures as one line (a job cancelled by --timeout
    while it reads the files' schemas, a damaged committed file), not Py4J's Java stack."""
    try:
        return create_views(spark, archive)
    except ArchiveError:
        raise
    except Exception as exc:
        raise ArchiveError(f"{what}: {_read_failure(exc)}") from None


_DATA_FILE = re.compile(r"\b(?:file:|[a-z][a-z0-9+.-]*://)[^\s,;]+?\.parquet\b")


def _read_failure(exc: BaseException) -> str:
    """:func:`_first_line` of a failure, after the archive file it names if it names one
    (Spark names a damaged file in its own error, the reason only in the deepest cause)."""
    reason = _first_line(exc)
    m = _DATA_FILE.search(str(exc))
    if m is None:
        return reason
    path = local_path(m.group(0))
    return reason if path in reason else f"{path}: {reason}"


JVM_EXIT_OOM = 52
"""The status Spark's JVM exits with when a task runs it out of memory (``SparkExitCode.OOM``)."""
JVM_GONE_WAIT = 10.0
"""Seconds a failed call whose Spark context is stopped waits for Spark's JVM to end (a task's
OutOfMemoryError ends it, and the call fails first with whatever the shutdown did to it)."""
MORE_MEMORY = "--conf spark.driver.memory=4g"


def _jvm_exit(spark: SparkSession) -> int | None:
    """The exit status of the JVM this process started for ``spark``, if it has ended or
    ends within :data:`JVM_GONE_WAIT` seconds; None while it runs (or when it is not ours,
    as under ``spark-submit``)."""
    proc = getattr(getattr(spark.sparkContext, "_gateway", None), "proc", None)
    if proc is None:
        return None
    if proc.poll() is None:
        try:  # a live context: the call failed on its own, nothing to wait for
            if not spark.sparkContext._jsc.sc().isStopped():
                return None
        except Exception:  # the gateway is gone: the JVM is ending
            pass
    deadline = time.monotonic() + JVM_GONE_WAIT
    while proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.1)
    status: int | None = proc.poll()
    return status


def _jvm_stopped(spark: SparkSession) -> str | None:
    """What to say when Spark's JVM died under a call, else None: the call's own error
    ("Connection refused", "Job 5 cancelled because SparkContext was shut down", "Error while
    sending or receiving") does not say what happened."""
    status = _jvm_exit(spark)
    if status is None:
        return None
    if status == JVM_EXIT_OOM:
        return (f"Spark ran out of memory and its JVM stopped (exit status {status}): ask for "
                f"fewer or smaller rows, or give it more ({MORE_MEMORY})")
    path = _jvm_log or os.path.join(tempfile.gettempdir(), f"{JVM_LOG}-{os.getuid()}.log")
    return f"Spark's JVM stopped (exit status {status}; its output: {path})"


def _failure(spark: SparkSession, exc: BaseException) -> str:
    """:func:`_read_failure` of a query's or a report's failure, or :func:`_jvm_stopped`."""
    stopped = _jvm_stopped(spark)
    if stopped is not None:
        return stopped
    reason = _read_failure(exc)
    # the heap was full (not a value of 2 GB, "Requested array size exceeds VM limit")
    return f"{reason}; give it more ({MORE_MEMORY})" if "Java heap space" in reason \
        else reason


QUERY_GRACE = 5.0
"""Seconds a query whose jobs were cancelled at its timeout may take to stop before it is
abandoned: one can run away in the driver, where there is no job to cancel (the optimizer
folding ``size(transform(sequence(1, 100000000), ...))`` ran 300 s past a 10 s timeout)."""
POLL = 0.2
"""Seconds between looks at a running query: a signal's handler runs between them (the
caller's thread blocked in a Py4J read ran it only when the job ended)."""


class QueryTimeout(ArchiveError):
    """A query stopped at its time limit. Its jobs (Spark job group :attr:`group`) were
    cancelled, and any job it would still start is cancelled as it starts: the session is
    free for its other users."""

    def __init__(self, message: str, group: str) -> None:
        super().__init__(message)
        self.group = group


def query(archive: str | os.PathLike[str], sql: str, *, spark: SparkSession | None = None,
          master: str | None = None, conf: Mapping[str, str] | None = None,
          timeout: float = 0.0) -> pa.Table:
    """One checked read-only query over the archive's views, on Spark SQL, as Arrow.

    ``timeout`` seconds (0: none) stop it with :class:`QueryTimeout`. It runs in its own job
    group (in its own thread, which inherits the caller's other Spark settings): at the
    timeout, or when the caller's thread is interrupted (Ctrl-C), that group's jobs are
    cancelled, those running and those still to come, so a session shared with other work
    is left idle, not busy with an abandoned query (``cancelAllJobs`` would stop the
    others' jobs too)."""
    spark = spark or session(master, conf)
    return _in_group(spark, lambda: _query(spark, archive, sql), timeout, "query")


def _query(spark: SparkSession, archive: str | os.PathLike[str], sql: str) -> pa.Table:
    # the readers' lock, shared, as the local engine's query holds it: a compact or drop in
    # another process removed the files this one was reading
    with store.reading(store.check_archive(str(archive))):
        return _query_locked(spark, archive, sql)


def _query_locked(spark: SparkSession, archive: str | os.PathLike[str], sql: str) -> pa.Table:
    _views(spark, archive, "query")
    checked = check_sql(spark, sql)
    fields = checked.schema.fields
    df = _arrow_ready(checked)
    try:
        # Optimized and planned here, in a call that returns Java's error: inside toArrow
        # that work runs on Spark's "serve-Arrow" thread, whose OutOfMemoryError (folding
        # `repeat('x', 1500000000)` into a constant) ended that thread only, and the read
        # of its socket waited forever.
        df._jdf.queryExecution().executedPlan()
        return _intervals(df.toArrow(), fields)
    except Exception as exc:
        raise ArchiveError(f"query: {_failure(spark, exc)}") from None


def _in_group(spark: SparkSession, call: Any, timeout: float, what: str) -> Any:
    """``call()`` in a job group of its own, in a thread; past ``timeout`` seconds (0, or
    none that a thread can wait: no limit) the group is cancelled, and :class:`QueryTimeout`
    is raised once its jobs have ended or :data:`QUERY_GRACE` seconds have passed."""
    from pyspark import InheritableThread

    sc = spark.sparkContext
    group = f"buraco-log-{what}-{secrets.token_hex(8)}"
    done: list[Any] = []

    def run() -> None:
        try:
            sc.setJobGroup(group, f"buraco-log {what}", interruptOnCancel=True)
            done.append(call())
        except BaseException as exc:  # handed to the caller's thread
            done.append(exc)

    worker = InheritableThread(run, daemon=True, name=f"spark-{what}", session=spark)
    worker.start()
    limited = 0 < timeout <= threading.TIMEOUT_MAX
    deadline = time.monotonic() + timeout if limited else math.inf
    try:
        while worker.is_alive() and time.monotonic() < deadline:
            worker.join(POLL)
    except BaseException:  # Ctrl-C, or SIGTERM through the CLI's handler: its jobs stop too
        _cancel_group(sc, group, worker)
        raise
    if worker.is_alive():
        _cancel_group(sc, group, worker)
        _wait_group(sc, group, worker, time.monotonic() + QUERY_GRACE)
        raise QueryTimeout(f"{what}: stopped after the {timeout:g} s timeout", group)
    if isinstance(done[0], store.GateTimeout):  # its time ran out at the readers' gate
        raise QueryTimeout(f"{what}: stopped after the {timeout:g} s timeout", group)
    if isinstance(done[0], BaseException):
        raise done[0]
    return done[0]


REAP = 0.5
"""Seconds between cancellations of a stopped query's job group while its thread still runs."""


def _cancel_group(sc: Any, group: str, worker: threading.Thread) -> None:
    """Cancel ``group``'s jobs and those it starts from now on (the query may still be in
    the driver, before its first job: a plain ``cancelJobGroup`` missed that job), and again
    every :data:`REAP` seconds, from a thread of its own, while ``worker`` runs: adaptive
    execution submits each shuffle stage as a job of its own, which Spark's cancelling of
    future jobs does not reach (one ran on after the timeout)."""
    def cancel() -> None:
        with contextlib.suppress(Exception):  # the JVM may be gone
            sc._jsc.sc().cancelJobGroupAndFutureJobs(group)

    def reap() -> None:
        while worker.is_alive():
            worker.join(REAP)
            cancel()

    cancel()
    threading.Thread(target=reap, daemon=True, name=f"{group}-reaper").start()


def _wait_group(sc: Any, group: str, worker: threading.Thread, deadline: float) -> None:
    """Wait, until ``deadline``, while the cancelled ``worker`` runs and a job of ``group``
    still runs (a cancelled job's tasks take a moment to stop). A worker still in the driver
    with no job is not waited for: what it starts later is cancelled by the reaper."""
    with contextlib.suppress(Exception):
        tracker = sc.statusTracker()
        while time.monotonic() < deadline and worker.is_alive() and _running(tracker, group):
            worker.join(0.1)


def _running(tracker: Any, group: str) -> list[int]:
    """The jobs of ``group`` still running."""
    out = []
    for job in tracker.getJobIdsForGroup(group):
        info = tracker.getJobInfo(job)
        if info is None or info.status in ("RUNNING", "UNKNOWN"):
            out.append(job)
    return out


def _arrow_ready(df: DataFrame) -> DataFrame:
    """The result's columns in forms Arrow holds, as DuckDB gives them: a VARIANT as its
    JSON text (it came out as its raw struct of binary value and metadata, and a NULL one
    failed the conversion), and ``array()`` or ``map()`` as an empty list, DuckDB's ``[]``
    (Spark types their elements NULL in a container that holds no nulls, which Arrow refuses:
    "A null type field may not be non-nullable"); a year-month interval as its months and a
    calendar interval as its text, which :func:`_intervals` makes Arrow intervals (Spark
    refused both: "not supported in conversion to Arrow"). Other columns are left as they
    are."""
    from pyspark.sql import functions as F

    fields = df.schema.fields
    if not any(_to_fix(f.dataType, False) for f in fields):
        return df
    names = [f"_c{i}" for i in range(len(fields))]  # by position: names may repeat
    cols = []
    for name, f in zip(names, fields, strict=True):
        col = _arrow_col(F.col(name), f.dataType)
        cols.append(col.cast(_loose(f.dataType)).alias(f.name) if _to_fix(f.dataType, False)
                    else col.alias(f.name))
    return df.toDF(*names).select(*cols)


def _to_fix(t: Any, nested: bool) -> bool:
    """Whether type ``t`` holds a VARIANT, an interval Arrow does not take, or (``nested``)
    Spark's NULL type."""
    from pyspark.sql import types as T

    if isinstance(t, T.NullType):
        return nested
    return _has(t, _CONVERTED) or (isinstance(t, (T.ArrayType, T.MapType, T.StructType))
                                   and _has_null(t))


def _has_null(t: Any) -> bool:
    from pyspark.sql import types as T

    if isinstance(t, T.NullType):
        return True
    if isinstance(t, T.ArrayType):
        return _has_null(t.elementType)
    if isinstance(t, T.MapType):
        return _has_null(t.keyType) or _has_null(t.valueType)
    if isinstance(t, T.StructType):
        return any(_has_null(f.dataType) for f in t.fields)
    return False


_CONVERTED = ("VariantType", "YearMonthIntervalType", "CalendarIntervalType")
"""The Spark types :func:`_arrow_col` turns into others before the conversion to Arrow."""
_INTERVALS = ("YearMonthIntervalType", "CalendarIntervalType", "DayTimeIntervalType")


def _has(t: Any, kinds: tuple[str, ...]) -> bool:
    """Whether Spark type ``t`` is, or holds at any depth, a type named in ``kinds``."""
    from pyspark.sql import types as T

    if type(t).__name__ in kinds:
        return True
    if isinstance(t, T.ArrayType):
        return _has(t.elementType, kinds)
    if isinstance(t, T.MapType):
        return _has(t.keyType, kinds) or _has(t.valueType, kinds)
    if isinstance(t, T.StructType):
        return any(_has(f.dataType, kinds) for f in t.fields)
    return False


def _arrow_col(col: Any, t: Any) -> Any:
    """``col`` with every VARIANT in it as its JSON text (``to_json``: a string value
    quoted, as DuckDB's cast to JSON gives it; a JSON ``null`` at the top of a VARIANT is
    SQL NULL, as DuckDB reads it, and ``null`` inside an array or object), every year-month
    interval as its months and every calendar interval as its text."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    if not _has(t, _CONVERTED):
        return col
    if isinstance(t, T.VariantType):
        return F.when(~F.is_variant_null(col), F.to_json(col))
    if isinstance(t, T.YearMonthIntervalType):
        return col.cast(T.YearMonthIntervalType(T.YearMonthIntervalType.MONTH,
                                                T.YearMonthIntervalType.MONTH)).cast("bigint")
    if isinstance(t, T.CalendarIntervalType):
        return col.cast("string")
    if isinstance(t, T.ArrayType):
        return F.transform(col, lambda x: _arrow_col(x, t.elementType))
    if isinstance(t, T.MapType):
        if _has(t.keyType, _CONVERTED):
            col = F.transform_keys(col, lambda k, _v: _arrow_col(k, t.keyType))
        return F.transform_values(col, lambda _k, v: _arrow_col(v, t.valueType))
    fields = [_arrow_col(col[f.name], f.dataType).alias(f.name) for f in t.fields]
    return F.when(col.isNull(), F.lit(None)).otherwise(F.struct(*fields))


def _loose(t: Any) -> Any:
    """``t`` with VARIANT and calendar intervals as STRING, year-month intervals as BIGINT,
    everything nullable, and a map's NULL-typed key a STRING (Arrow's map keys cannot be
    null): a cast to it only widens."""
    from pyspark.sql import types as T

    if isinstance(t, (T.VariantType, T.CalendarIntervalType)):
        return T.StringType()
    if isinstance(t, T.YearMonthIntervalType):
        return T.LongType()
    if isinstance(t, T.ArrayType):
        return T.ArrayType(_loose(t.elementType), True)
    if isinstance(t, T.MapType):
        key = T.StringType() if isinstance(t.keyType, T.NullType) else _loose(t.keyType)
        return T.MapType(key, _loose(t.valueType), True)
    if isinstance(t, T.StructType):
        return T.StructType([T.StructField(f.name, _loose(f.dataType), True, f.metadata)
                             for f in t.fields])
    return t


DAY_US = 86_400_000_000
_CALENDAR_PART = re.compile(r"(-?\d+(?:\.\d+)?) (years|months|days|hours|minutes|seconds)")
_CALENDAR_US = {"hours": 3_600_000_000, "minutes": 60_000_000, "seconds": 1_000_000}


def _intervals(table: pa.Table, fields: Sequence[Any]) -> pa.Table:
    """``table`` (the Arrow result of :func:`_arrow_ready`) with every interval of the Spark
    ``fields`` an Arrow month-day-nano interval, DuckDB's type for its INTERVAL. A day-time
    interval (Arrow's duration; the difference of two timestamps) is split into whole days
    and the rest, as DuckDB splits a difference of timestamps; Spark keeps no days apart, so
    ``INTERVAL 36 HOUR`` is 1 day and 12 hours here, 36 hours in DuckDB."""
    if not any(_has(f.dataType, _INTERVALS) for f in fields):
        return table
    cols = []
    for i, f in enumerate(fields):
        col = table.column(i)
        if _has(f.dataType, _INTERVALS):
            col = _interval_array(col.combine_chunks(), f.dataType)
        cols.append(col)
    names = table.column_names
    return pa.Table.from_arrays(cols, names=names)


def _interval_array(arr: pa.Array, t: Any) -> pa.Array:
    from pyspark.sql import types as T

    if not _has(t, _INTERVALS):
        return arr
    mdn = pa.month_day_nano_interval()
    if isinstance(t, T.YearMonthIntervalType):
        return pa.array([None if m is None else (m, 0, 0) for m in arr.to_pylist()], mdn)
    if isinstance(t, T.DayTimeIntervalType):
        return pa.array([None if us is None else _day_time(us)
                         for us in arr.cast(pa.int64()).to_pylist()], mdn)
    if isinstance(t, T.CalendarIntervalType):
        return pa.array([None if s is None else _calendar(s)
                         for s in arr.to_pylist()], mdn)
    mask = arr.is_null() if arr.null_count else None
    if isinstance(t, T.ArrayType):
        return pa.ListArray.from_arrays(arr.offsets, _interval_array(
            arr.values, t.elementType), mask=mask)
    if isinstance(t, T.MapType):
        return pa.MapArray.from_arrays(
            arr.offsets, _interval_array(arr.keys, t.keyType),
            _interval_array(arr.items, t.valueType), mask=mask)
    children = [_interval_array(arr.field(i), f.dataType)
                for i, f in enumerate(t.fields)]
    return pa.StructArray.from_arrays(children, names=[f.name for f in t.fields], mask=mask)


def _day_time(us: int) -> tuple[int, int, int]:
    """Microseconds as (months, days, nanoseconds), the days cut toward zero as DuckDB's."""
    days = abs(us) // DAY_US * (1 if us >= 0 else -1)
    return 0, days, (us - days * DAY_US) * 1000


def _calendar(text: str) -> tuple[int, int, int]:
    """Spark's text of a calendar interval (``1 years 2 months 3 days 4 hours 5.5 seconds``)
    as (months, days, nanoseconds)."""
    months = days = us = 0
    for number, unit in _CALENDAR_PART.findall(text):
        if unit == "years":
            months += int(number) * 12
        elif unit == "months":
            months += int(number)
        elif unit == "days":
            days += int(number)
        else:
            us += int(decimal.Decimal(number) * _CALENDAR_US[unit])
    return months, days, us * 1000


ROUND_UDF = "_duckdb_round"


def spark_sql(sql: str) -> str:
    """A canned report's DuckDB SQL in Spark's dialect (the few words that differ).

    ``round`` becomes :func:`duckdb_round`: Spark rounds a double by its shortest decimal
    text (127.35 -> 127.4), DuckDB by its exact binary value (127.349999... -> 127.3), and the
    reports must agree to the last digit."""
    return re.sub(r"\bround\(", f"{ROUND_UDF}(", sql.replace("unnest(", "explode("))


def duckdb_round(x: Any, digits: int) -> float | None:
    """DuckDB's ``round`` of a number: the exact value (a double's binary value, a decimal's
    digits), half away from zero."""
    import decimal

    if x is None:
        return None
    exact = x if isinstance(x, decimal.Decimal) else decimal.Decimal(float(x))
    if not exact.is_finite():
        return float(exact)
    return float(exact.quantize(decimal.Decimal(1).scaleb(-int(digits)),
                                rounding=decimal.ROUND_HALF_UP))


def _register_round(spark: SparkSession) -> None:
    spark.udf.register(ROUND_UDF, duckdb_round, "double")


class _Con:
    """Just enough of a DuckDB connection for :func:`buraco_log.archive.report.ratings`."""

    def __init__(self, spark: SparkSession) -> None:
        self.spark = spark

    def sql(self, text: str) -> _Con._Result:
        return _Con._Result(self.spark.sql(spark_sql(text)).toArrow())

    class _Result:
        def __init__(self, table: pa.Table) -> None:
            self.table = table

        def to_arrow_table(self) -> pa.Table:
            return self.table


def report(archive: str | os.PathLike[str], *, top: int = 20, spark: SparkSession | None = None,
           master: str | None = None, conf: Mapping[str, str] | None = None,
           timeout: float = 0.0) -> Any:
    """The canned report (:func:`buraco_log.archive.report.report`) computed on Spark SQL.
    ``timeout`` seconds (0: none) bound the whole report, the wait for the readers' lock
    included, as :func:`query`'s bound a query: its jobs run in a group of their own, which
    is cancelled then, and it raises :class:`QueryTimeout`."""
    spark = spark or session(master, conf)
    return _in_group(spark, lambda: _report(spark, archive, top, timeout), timeout, "report")


def _report(spark: SparkSession, archive: str | os.PathLike[str], top: int,
            timeout: float) -> Any:
    with store.reading(store.check_archive(str(archive)), within=timeout):  # as _query
        return _report_locked(spark, archive, top)


def _report_locked(spark: SparkSession, archive: str | os.PathLike[str], top: int) -> Any:
    import pyarrow.parquet as pq  # type: ignore[import-untyped]

    from buraco_log.archive import report as _  # noqa: F401  (the module, for rep below)
    rep = sys.modules["buraco_log.archive.report"]

    root = _views(spark, archive, "report")
    _register_round(spark)
    sections = []
    try:  # a damaged committed file fails here: one line naming it
        head = spark.sql("SELECT count(*) AS n, coalesce(sum(events), 0) AS e FROM matches"
                         ).first()
        for name, (title, sql) in rep.CANNED.items():
            t = time.perf_counter()
            df = spark.sql(spark_sql(sql))
            rows = [list(r) for r in df.collect()]
            sections.append(rep.Section(name, title, list(df.columns), rows,
                                        (time.perf_counter() - t) * 1000))
    except Exception as exc:
        raise ArchiveError(f"report: {_failure(spark, exc)}") from None
    t = time.perf_counter()
    stored = store.current_ratings(root)
    table = pq.read_table(stored) if stored else rep.ratings(_Con(spark))
    table = table.sort_by([("elo", "descending"), ("player", "ascending")])
    if top:
        table = table.slice(0, top)
    sections.append(_leaderboard(rep, table, t))
    return rep.Report(root, int(head["n"]) if head else 0, int(head["e"]) if head else 0,
                      sections)


def _leaderboard(rep: Any, table: pa.Table, t: float) -> Any:
    rows: list[list[Any]] = [
        [i + 1, r["player"], round(r["elo"], 1), r["matches"], r["wins"],
         round(r["wins"] / r["matches"], 4) if r["matches"] else 0.0]
        for i, r in enumerate(table.to_pylist())
    ]
    return rep.Section("leaderboard", f"Player leaderboard: Elo (K={rep.ELO_K:g}) in match order",
                       ["rank", "player", "elo", "matches", "wins", "win_rate"], rows,
                       (time.perf_counter() - t) * 1000)


def table_checksums(archive: str | os.PathLike[str]) -> dict[str, str]:
    """SHA-256 of every table's rows, sorted, without the per-run columns (``ingested_at``,
    ``batch``): equal archives give equal checksums, whichever engine made them."""
    import pyarrow.parquet as pq

    root = store.check_archive(str(archive))
    files = store.committed_files(root)
    out: dict[str, str] = {}
    for table in TABLES:
        rows: list[str] = []
        for path in files[table]:
            t = pq.read_table(path, partitioning=None)
            t = t.drop_columns([c for c in ("ingested_at", "batch") if c in t.column_names])
            rel = os.path.relpath(os.path.dirname(path), os.path.join(root, table))
            part = "" if rel == "." else rel
            rows += [part + "|" + json.dumps(r, sort_keys=True, default=_jsonable)
                     for r in t.to_pylist()]
        rows.sort()
        out[table] = hashlib.sha256("\n".join(rows).encode()).hexdigest() + f":{len(rows)}"
    return out


def _jsonable(v: Any) -> Any:
    return v.hex() if isinstance(v, bytes) else str(v)


# -- spark-submit --------------------------------------------------------------------------------

def main(argv: Sequence[str] | None = None) -> int:
    """The entry point for ``spark-submit`` (the master and settings come from it)::

        spark-submit --master yarn "$(python -c 'import buraco_log.archive.spark as m;
            print(m.__file__)')" ingest SOURCE... --archive DIR

    ``ingest`` prints its report as JSON on stdout (exit 1 when logs were refused); ``report``
    prints the canned report as JSON. An error is one line on stderr (exit 2 when Spark
    cannot start, else 1).
    """
    import argparse

    p = argparse.ArgumentParser(prog="buraco_log.archive.spark")
    sub = p.add_subparsers(dest="cmd", required=True)
    pi = sub.add_parser("ingest", help="check logs and add the good ones to an archive")
    pi.add_argument("sources", nargs="+")
    pi.add_argument("--archive", required=True)
    pi.add_argument("--file-events", type=int, default=None,
                    help=f"events an output file aims at (default {FILE_EVENTS:,})")
    pi.add_argument("--require-commitment", action=argparse.BooleanOptionalAction,
                    default=None, help="set the archive's require_commitment setting")
    pr = sub.add_parser("report", help="the canned report, as JSON")
    pr.add_argument("archive")
    pr.add_argument("--top", type=int, default=20)
    args = p.parse_args(argv)
    try:
        if args.cmd == "report":
            out: Any = report(args.archive, top=args.top)
            sys.stdout.write(json.dumps(msgspec.to_builtins(out), indent=2, sort_keys=True)
                             + "\n")
            return 0
        rep = ingest(args.sources, args.archive, file_events=args.file_events,
                     require_commitment=args.require_commitment)
    except ArchiveError as exc:
        print(f"buraco-log: error: {exc}", file=sys.stderr)
        return int(getattr(exc, "exit_status", 1))
    sys.stdout.write(msgspec.json.encode(rep).decode() + "\n")
    return 1 if rep.errors else 0


if __name__ == "__main__":
    # Run as a file by spark-submit: call the module by its package name, so the functions
    # Spark ships to the executors are found there by reference (not pickled from __main__).
    from buraco_log.archive import spark as _this

    sys.exit(_this.main())
