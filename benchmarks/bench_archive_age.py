"""Benchmark: what one more night costs an archive ten years old.

    python benchmarks/bench_archive_age.py                         # 10, 100, 1000, 3650 batches
    python benchmarks/bench_archive_age.py --ages 10,100,1000 --runs 3
    python benchmarks/bench_archive_age.py --ops                   # also query, report, verify...

A site ingests every night: after ten years its archive holds 3,650 nightly batches over 120
months of partitions. Ingesting 11,000 simulated logs one night at a time would take a day, so
the archive is BUILT from a template: a few hundred simulated matches (tests/archive/corpus.py,
cached in --corpus) are ingested once, and each night's batch is three of their rows copied
with new game ids, match ids, digests and file hashes, its month that night's (2016-01-01 on),
committed through the archive's own writer (store.commit: staged, fsynced, renamed, recorded).
Every batch is one more night, as an ingest commits it.

Then, at each age, on a copy of the archive (cp -a, times kept), the night's
`buraco-log ingest NIGHT --archive A -j 1` of three new logs runs in its own process: its wall
and CPU time (user + system), the best of --runs. The copy is first settled by the version
measured (--checkout) as its last night's ingest leaves an archive: ratings (and what else it
keeps) stored. Printed as ratios to the 10-batch run: a
nightly ingest that costs what its own work needs stays near 1.0 at every age. --ops times the
other commands at each age too: `query` of one month, `report`, `verify`, `compact`, and a
drop of one night's batch (store.drop_batches).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import time
from datetime import date, timedelta
from pathlib import Path

import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.compute as pc  # type: ignore[import-untyped]
import pyarrow.parquet as pq  # type: ignore[import-untyped]

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from buraco_log.archive import ingest, store  # noqa: E402
from tests.archive.corpus import make_corpus  # noqa: E402

TABLES = ("matches", "hands", "events", "melds", "players")
PER_NIGHT = 3
FIRST_NIGHT = date(2016, 1, 1)


def template(corpus: str, work: Path, n: int) -> dict[int, dict[str, pa.Table]]:
    """The rows of ``n`` simulated matches, per game id and table."""
    paths = make_corpus(corpus, n + PER_NIGHT)[:n]
    arch = work / f"template-{n}"
    if not (arch / store.MARKER).exists():
        shutil.rmtree(arch, ignore_errors=True)
        ingest(paths, arch)
    files = store.committed_files(str(arch.resolve()))
    tables = {t: pa.concat_tables([pq.ParquetFile(f).read() for f in files[t]]) for t in TABLES}
    out: dict[int, dict[str, pa.Table]] = {}
    for gid in tables["matches"].column("game_id").to_pylist():
        out[gid] = {t: tab.filter(pc.equal(tab.column("game_id"), gid))
                    for t, tab in tables.items()}
    return out


def night_parts(rows: dict[int, dict[str, pa.Table]], night: int
                ) -> dict[tuple[str, str], dict[str, pa.Table]]:
    """Night ``night``'s three matches: template rows under new ids, in that night's month."""
    gids = list(rows)
    day = FIRST_NIGHT + timedelta(days=night)
    month = f"{day.year:04d}-{day.month:02d}"
    mask = (1 << 63) - 1
    merged: dict[str, list[pa.Table]] = {t: [] for t in TABLES}
    for k in range(PER_NIGHT):
        serial = night * PER_NIGHT + k
        src = rows[gids[serial % len(gids)]]
        salt = ((serial + 1) * 0x9E3779B97F4A7C15) & mask
        for name, t in src.items():
            gid = pc.bit_wise_and(pc.bit_wise_xor(t.column("game_id"), pa.scalar(salt)),
                                  pa.scalar(mask))
            t = t.set_column(t.schema.get_field_index("game_id"), "game_id", gid)
            if name == "matches":
                for col in ("match_id", "digest", "file_sha256"):
                    t = t.set_column(t.schema.get_field_index(col), col,
                                     pc.binary_join_element_wise(t.column(col),
                                                                 pa.scalar(f"{serial:06d}"), "-"))
            merged[name].append(t)
    return {("thirteen-quick", month): {t: pa.concat_tables(v) for t, v in merged.items()}}


def build(rows: dict[int, dict[str, pa.Table]], arch: Path, start: int, end: int) -> float:
    """Commit nights ``start`` to ``end - 1`` into ``arch``; the seconds it took."""
    t0 = time.monotonic()
    root = store.create_archive(str(arch))
    for night in range(start, end):
        store.commit(root, store.new_batch_id(), night_parts(rows, night), None)
    return time.monotonic() - t0


SETTLE = """
import sys
from buraco_log.archive.ingest import _store_ratings
_store_ratings(sys.argv[1])
"""
"""What the last night's ingest did after its commit, run by the checkout measured."""

DROP = """
import sys
from buraco_log.archive import store
records = store.manifests(sys.argv[1])
store.drop_batches(sys.argv[1], [records[len(records) // 2]["batch"]])
"""
"""A drop of one night's batch, the middle one (the library's: the command line has none)."""


def timed(cmd: list[str], runs: int, setup: list[str] | None, checkout: Path,
          env: dict[str, str]) -> tuple[float, float]:
    """Best wall and CPU seconds of ``cmd`` over ``runs`` (``setup`` first, untimed)."""
    walls, cpus = [], []
    for _ in range(runs):
        if setup:
            subprocess.run(setup, check=True)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.monotonic()
        subprocess.run(cmd, check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       cwd=checkout, env=env)
        walls.append(time.monotonic() - t0)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return min(walls), min(cpus)


def cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "cli.main", *args]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ages", default="10,100,1000,3650", help="batches (nights), ascending")
    ap.add_argument("--template", type=int, default=300, help="simulated matches to copy")
    ap.add_argument("--runs", type=int, default=3, help="best of this many runs each")
    ap.add_argument("--ops", action="store_true", help="also query, report, verify, compact")
    ap.add_argument("--corpus", default="/tmp/buraco-bench-corpus")
    ap.add_argument("--work", default="/tmp/buraco-bench-age")
    ap.add_argument("--json", help="also write the figures here")
    ap.add_argument("--rebuild", action="store_true", help="build the archives again")
    ap.add_argument("--checkout", default=str(ROOT),
                    help="the buraco_log tree whose commands are timed (another version: "
                         "`git archive REV | tar -x -C DIR`, its compiled modules copied)")
    a = ap.parse_args()
    checkout = Path(a.checkout).resolve()
    env = dict(os.environ, PYTHONPATH=str(checkout))
    ages = sorted(int(x) for x in a.ages.split(","))
    work = Path(a.work)
    work.mkdir(parents=True, exist_ok=True)
    rows = template(a.corpus, work, a.template)
    night = work / "night"
    shutil.rmtree(night, ignore_errors=True)
    night.mkdir()
    for p in make_corpus(a.corpus, a.template + PER_NIGHT)[a.template:]:
        os.link(p, night / os.path.basename(p))
    arch = work / "archive"
    figures: dict[str, dict[str, list[float]]] = {}
    built = 0
    for age in ages:
        kept = work / f"age-{a.template}-{age}"  # built once, reused by later runs
        if kept.is_dir() and not a.rebuild:
            shutil.rmtree(arch, ignore_errors=True)
            subprocess.run(["cp", "-a", str(kept), str(arch)], check=True)
        else:
            if built == 0:
                shutil.rmtree(arch, ignore_errors=True)
            secs = build(rows, arch, built, age)
            print(f"built {age} nightly batches (+{age - built} in {secs:.1f} s)", flush=True)
            shutil.rmtree(kept, ignore_errors=True)
            subprocess.run(["cp", "-a", str(arch), str(kept)], check=True)
        built = age
        settled = work / "settled"  # the archive as the last night left it: ratings stored
        subprocess.run(["sh", "-c", f"rm -rf '{settled}' && cp -a '{arch}' '{settled}'"],
                       check=True)
        subprocess.run([sys.executable, "-c", SETTLE, str(settled)], check=True,
                       cwd=checkout, env=env)
        copy = work / "copy"
        reset = ["sh", "-c", f"rm -rf '{copy}' && cp -a '{settled}' '{copy}'"]
        month = f"{FIRST_NIGHT.year}-{FIRST_NIGHT.month + 1:02d}" if age > 40 else \
            f"{FIRST_NIGHT.year}-{FIRST_NIGHT.month:02d}"
        ops: dict[str, tuple[list[str], list[str] | None]] = {
            "ingest": (cli("ingest", str(night), "--archive", str(copy), "-j", "1"), reset)}
        if a.ops:
            sql = f"SELECT count(*) FROM events WHERE month = '{month}'"
            ops.update({
                "query month": (cli("query", str(copy), sql), None),
                "report": (cli("report", str(copy)), None),
                "verify": (cli("verify", str(copy)), None),
                "compact": (cli("compact", str(copy)), reset),
                "drop a day": ([sys.executable, "-c", DROP, str(copy)], reset),
            })
            subprocess.run(reset, check=True)
        for name, (cmd, setup) in ops.items():
            wall, cpu = timed(cmd, a.runs, setup, checkout, env)
            figures.setdefault(name, {})[str(age)] = [wall, cpu]
            print(f"  {name:12} at {age:5} batches: {wall:6.2f} s wall, {cpu:6.2f} s CPU",
                  flush=True)
        shutil.rmtree(copy, ignore_errors=True)
    base = str(ages[0])
    print(f"\nratios to the {base}-batch run (wall / CPU):")
    print("operation     " + "".join(f"{age:>14}" for age in ages))
    for name, by_age in figures.items():
        w0, c0 = by_age[base]
        cells = "".join(f"{by_age[str(age)][0] / w0:>7.2f}/{by_age[str(age)][1] / c0:<6.2f}"
                        for age in ages)
        print(f"{name:14}{cells}")
    if a.json:
        Path(a.json).write_text(json.dumps(figures, indent=2) + "\n")


if __name__ == "__main__":
    main()
