"""Instructions per event of the hot paths, counted by valgrind (callgrind).

    python benchmarks/count_instructions.py                    # every stage, 100 logs
    python benchmarks/count_instructions.py --stages replay-cold,chunk-warm --matches 40

Wall-clock and even CPU-time rates move by 20-50 % on a shared machine; the number of
instructions a stage executes does not (two runs agree to well under 1 %). Each stage runs in
its own process under ``valgrind --tool=callgrind``, which counts only inside one call of
``functools.reduce`` (``--toggle-collect``): the stage itself, not the interpreter's start or
the corpus set-up. "warm" runs the stage once uncounted first (the meld memo filled), "cold"
counts the first pass. Instructions are not time (cache misses and the SHA extensions valgrind
does not emulate weigh differently), so compare them between commits, not with wall rates.

The corpus is the archive benchmark's (tests/archive/corpus.py, cached in --corpus), and the
engine is whatever ``buraco_log`` imports: run it from a compiled tree (``PYTHONPATH=.`` after
an editable install, or mypyc in place) to count the compiled engine.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from functools import reduce
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

STAGES = ("read", "replay", "provenance", "flatten", "chunk", "ingest")


def child(stage: str, temp: str, paths: list[str]) -> None:
    """Run one stage (counted by the parent's valgrind); print the events it covered."""
    from buraco_log import audit
    from buraco_log.archive import ingest
    from buraco_log.archive.flatten import _replay, file_sha256
    from buraco_log.archive.ingest import check_chunk
    from buraco_log.reducer import Replayer

    items = [(p, *file_sha256(p)) for p in paths]
    logs = [audit.read_log(p)[0] for p in paths]
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
            _replay(events, 1)

    def chunk() -> None:
        check_chunk(items)

    def ingest_all() -> None:
        runs[0] += 1
        ingest(paths, os.path.join(work, str(runs[0])), jobs=1)

    fn = {"read": read, "replay": replay, "provenance": provenance, "flatten": flatten,
          "chunk": chunk, "ingest": ingest_all}[stage]
    if temp == "warm":
        fn()
    reduce(lambda _a, _b: fn(), [0, 0])  # the counted call: see --toggle-collect below
    shutil.rmtree(work, ignore_errors=True)
    print(sum(map(len, logs)))


def count(stage: str, temp: str, paths_file: str) -> tuple[int, int]:
    with tempfile.TemporaryDirectory() as d:
        out = subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={d}/cg.out",
             "--collect-atstart=no", "--toggle-collect=functools_reduce",
             sys.executable, __file__, "--child", stage, temp, paths_file],
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
    ap.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        stage, temp, paths_file = a.child
        child(stage, temp, Path(paths_file).read_text().split("\n"))
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
            instructions, events = count(stage, temp, f.name)
            print(f"{name:18s} {instructions / events:10,.0f} instructions an event "
                  f"({events:,} events)", flush=True)
    finally:
        os.unlink(f.name)


if __name__ == "__main__":
    main()
