"""Compaction among ingests and drops, in any order (Hypothesis): the archive always holds
exactly the logs ingested and not dropped since, each once, as a plain reading of them says.

The model is the set of logs the archive should hold. Ingest adds logs (one batch), drop
removes a committed batch (its logs come back to "not stored"), compact merges: after every
step the matches view must name exactly the model's matches, with each match's events, and
every committed file must verify.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from buraco_log.archive import ingest, query, store
from buraco_log.archive.compact import compact
from buraco_log.archive.fixity import verify_archive
from buraco_log.log import read_events

SIM = Path(__file__).resolve().parents[2] / "examples" / "sim"
LOGS = sorted(str(p) for p in SIM.glob("*-2p-000000.blog"))[:6]
EVENTS = {p: len(read_events(p)) for p in LOGS}

Step = tuple[str, int]
STEPS = st.lists(st.one_of(
    st.tuples(st.just("ingest"), st.integers(1, 2**len(LOGS) - 1)),  # a subset, as a bitmask
    st.tuples(st.just("drop"), st.integers(0, 10)),  # the n-th committed batch (mod count)
    st.tuples(st.just("compact"), st.just(0)),
), min_size=1, max_size=8)


@settings(max_examples=int(os.environ.get("COMPACT_EXAMPLES", "10")), deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(steps=STEPS)
def test_the_archive_holds_the_logs_ingested_and_not_dropped_through_any_compaction(
        steps: list[Step]) -> None:
    work = Path(tempfile.mkdtemp(prefix="compact-prop-"))
    arch = work / "a"
    held: dict[str, str] = {}  # source path -> the batch its match is in
    try:
        for op, arg in steps:
            if op == "ingest":
                paths = [p for i, p in enumerate(LOGS) if arg >> i & 1]
                rep = ingest(paths, arch, jobs=1)
                assert not rep.errors
                for p in paths:
                    held.setdefault(p, "")
            elif op == "drop" and held:
                batches = [m["batch"] for m in store.manifests(str(arch))]
                victim = batches[arg % len(batches)]
                rows = query(arch, f"SELECT source_path FROM matches WHERE batch = '{victim}'")
                store.drop_batches(str(arch), [victim])
                for p in rows.column("source_path").to_pylist():
                    held.pop(p)
            elif op == "compact" and held:
                compact(str(arch))
            if not held:
                continue
            got = query(arch, "SELECT source_path, events FROM matches").to_pylist()
            assert sorted(r["source_path"] for r in got) == sorted(held)  # each once
            assert all(r["events"] == EVENTS[r["source_path"]] for r in got)
            n = query(arch, "SELECT count(*) AS n FROM events").to_pylist()[0]["n"]
            assert n == sum(EVENTS[p] for p in held)
            fixity = verify_archive(str(arch))
            assert fixity.ok and fixity.verified == fixity.files
    finally:
        shutil.rmtree(work, ignore_errors=True)
