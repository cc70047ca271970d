"""Instructions per event of the hot paths, counted by valgrind (callgrind).

    python benchmarks/count_instructions.py                    # every stage, 100 logs
    python benchmarks/count_instructions.py --stages replay-cold,chunk-warm --matches 40
    python benchmarks/count_instructions.py --stages transfer-warm --matches 384 --chunk 32
    python benchmarks/count_instructions.py --stages replay-cold --memo-limit 4000 \
        --corpus /tmp/corpus-2400 --matches 2400

Wall-clock and even CPU-time rates move by 20-50 % on a shared machine; the number of
instructions a stage executes does not (two runs agree to well under 1 %). Each stage runs in
its own process under ``valgrind --tool=callgrind``, which counts only inside one call of
``functools.reduce`` (``--toggle-collect``): the stage itself, not the interpreter's start or
the corpus set-up. "warm" runs the stage once uncounted first (the meld memo filled), "cold"
counts the first pass. Instructions are not time (cache misses and the SHA extensions valgrind
does not emulate weigh differently), so compare them between commits, not with wall rates.

Stages: ``read`` (``audit.read_log``), ``replay`` (``Replayer.run``), ``provenance`` (the deal
check), ``flatten`` (replay and collect the rows), ``chunk`` (one worker's ``check_chunk`` of
every log), ``transfer`` (the same in chunks of ``--chunk`` logs, each sent the way 2 jobs send
it: pickled, as Arrow IPC where the tree packs it), ``ingest`` (the whole run, 1 job) and
``imports`` (what a process's first ingest imports on first use, pyarrow.compute and pandas
where installed: done before every other stage's count, so a cold stage counts the stage).
``--memo-limit`` caps the meld memo, to see its eviction.

The corpus is the archive benchmark's (tests/archive/corpus.py, cached in --corpus), and the
engine is whatever ``buraco_log`` imports: run it from a compiled tree (``PYTHONPATH=.`` after
an editable install, or mypyc in place) to count the compiled engine.
"""

from __future__ import annotations

import argparse
import importlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
from functools import reduce
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

STAGES = ("read", "replay", "provenance", "flatten", "chunk", "transfer", "ingest", "imports")


def deferred_imports() -> None:
    """What a process's first ingest imports on first use: pyarrow.compute, and pandas where it
    is installed (the spark extra), which pyarrow imports at its first ``pa.array`` or
    ``pa.scalar``. Once a process, so done before every other stage's count and counted as a
    stage of its own (``imports``): in a cold stage it swamped the stage itself (about 40,000
    instructions an event of 100 logs)."""
    import pyarrow as pa  # type: ignore[import-untyped]
    import pyarrow.compute  # type: ignore[import-untyped]

    pa.array([0])


def child(stage: str, temp: str, paths: list[str], memo_limit: int | None = None,
          chunk_size: int = 128) -> None:
    """Run one stage (counted by the parent's valgrind); print the events it covered."""
    import pickle

    from buraco_log import audit
    from buraco_log.archive import ingest
    from buraco_log.archive.flatten import file_sha256
    from buraco_log.archive.ingest import check_chunk
    from buraco_log.columns import replay_columns
    from buraco_log.events import MatchStarted
    from buraco_log.melds import cache_for
    from buraco_log.reducer import Replayer

    items = [(p, *file_sha256(p)) for p in paths]
    logs = [audit.read_log(p)[0] for p in paths]
    if memo_limit is not None:  # a smaller meld memo: how its eviction behaves
        for events in logs:
            if isinstance(events[0], MatchStarted):
                cache_for(events[0].rules).limit = memo_limit
    work = tempfile.mkdtemp(prefix="count-instr-")
    runs = [0]

    def read() -> None:
        for p in paths:
            audit.read_log(p)

    def replay() -> None:
        for events in logs:
            Replayer().run(events)

    def provenance() -> None:
        for events in logs:
            audit.provenance(events)

    def flatten() -> None:
        for events in logs:
            replay_columns(events, 1)

    def chunk() -> None:
        check_chunk(items)

    def transfer() -> None:
        """What 2 jobs add to a worker's check: its chunks go to the coordinator by pickle,
        packed as Arrow IPC where the tree can (older trees pickled the tables themselves)."""
        # The module, not the package's ``ingest`` function of the same name.
        mod = importlib.import_module("buraco_log.archive.ingest")
        packed = getattr(mod, "check_chunk_packed", None)
        print("transfer: " + ("Arrow IPC" if packed else "pickled tables"), file=sys.stderr)
        for k in range(0, len(items), chunk_size):
            part = items[k:k + chunk_size]
            if packed is None:
                pickle.loads(pickle.dumps(check_chunk(part)))
            else:
                pickle.loads(pickle.dumps(packed(part))).unpack()

    def ingest_all() -> None:
        runs[0] += 1
        ingest(paths, os.path.join(work, str(runs[0])), jobs=1)

    fn = {"read": read, "replay": replay, "provenance": provenance, "flatten": flatten,
          "chunk": chunk, "transfer": transfer, "ingest": ingest_all,
          "imports": deferred_imports}[stage]
    if stage != "imports":
        deferred_imports()
    if temp == "warm":
        fn()
    reduce(lambda _a, _b: fn() or 0, [0, 0])  # the counted call: see --toggle-collect below
    shutil.rmtree(work, ignore_errors=True)
    print(sum(map(len, logs)))


def count(stage: str, temp: str, paths_file: str, memo_limit: int | None = None,
          chunk_size: int = 128) -> tuple[int, int]:
    limit = [] if memo_limit is None else ["--memo-limit", str(memo_limit)]
    limit += ["--chunk", str(chunk_size)]
    with tempfile.TemporaryDirectory() as d:
        out = subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={d}/cg.out",
             "--collect-atstart=no", "--toggle-collect=functools_reduce",
             sys.executable, __file__, "--child", stage, temp, paths_file, *limit],
            capture_output=True, text=True, check=True)
    events = int(out.stdout.strip().splitlines()[-1])
    collected = re.search(r"Collected : (\d+)", out.stderr)
    if collected is None:
        raise SystemExit(f"callgrind printed no count for {stage}: {out.stderr[-500:]}")
    return int(collected.group(1)), events


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--matches", type=int, default=100, help="logs of the corpus to use")
    ap.add_argument("--corpus", default="/tmp/buraco-bench-corpus")
    ap.add_argument("--stages", default=",".join(f"{s}-{t}" for s in STAGES
                                                 for t in ("cold", "warm")),
                    help="comma-separated STAGE-cold or STAGE-warm; stages: " + ", ".join(STAGES))
    ap.add_argument("--memo-limit", type=int,
                    help="cap the meld memo at this many readings (default: the library's)")
    ap.add_argument("--chunk", type=int, default=128,
                    help="logs a chunk of the transfer stage (ingest's default: 128)")
    ap.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        stage, temp, paths_file = a.child
        child(stage, temp, Path(paths_file).read_text().split("\n"), a.memo_limit, a.chunk)
        return
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is not installed: this benchmark counts with callgrind")
    from buraco_log import reducer
    from tests.archive.corpus import make_corpus

    engine = "compiled" if not reducer.__file__.endswith(".py") else "plain Python"
    paths = sorted(make_corpus(a.corpus, max(a.matches, 600)))
    step = max(1, len(paths) // a.matches)
    paths = paths[::step][: a.matches]
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
        f.write("\n".join(paths))
    print(f"engine: {engine}; {len(paths)} logs of {a.corpus}")
    try:
        for name in a.stages.split(","):
            stage, temp = name.rsplit("-", 1)
            instructions, events = count(stage, temp, f.name, a.memo_limit, a.chunk)
            total = f"; {instructions:,} in all" if stage == "imports" else ""
            print(f"{name:18s} {instructions / events:10,.0f} instructions an event "
                  f"({events:,} events{total})", flush=True)
    finally:
        os.unlink(f.name)


if __name__ == "__main__":
    main()
