"""Fault probe, round 38b: Ctrl-C (SIGINT) or SIGTERM to a Spark `query` with no timeout.
Before, the command hung: the signal reached one of Py4J's threads, and its handler waited for
the main thread, blocked in a Py4J read until the job ended (or PySpark's own SIGINT handler
made it ``[SPARK_JOB_CANCELLED]``, exit 1). Starts its own JVM: slow."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.spark.conftest import IN_CI, spark_missing

ROOT = Path(__file__).resolve().parents[2]
SLOW = ("SELECT count(*) AS n FROM events a, events b, events c, events d, events e "
        "WHERE hash(a.seq, b.seq, c.seq, d.seq, e.seq) % 7 = 0")


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["INT", "TERM"])
def test_a_signal_mid_spark_query_is_one_line_and_the_jvm_goes(
        tmp_path: Path, sig: signal.Signals) -> None:
    why = spark_missing()
    if why is not None and not IN_CI:
        pytest.skip(why)
    a, out = tmp_path / "a", tmp_path / "rows.csv"
    subprocess.run([sys.executable, "-m", "cli.main", "ingest", "--archive", str(a),
                    str(ROOT / "examples/sim/thirteen-quick-4p-000000.blog")], cwd=ROOT,
                   check=True, capture_output=True)
    p = subprocess.Popen([sys.executable, "-m", "cli.main", "query", str(a), SLOW, "--timeout",
                          "0", "--engine", "spark", "--master", "local[1]", "-f", "csv", "-o",
                          str(out)], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, start_new_session=True,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    time.sleep(25)  # the JVM is up and the job runs
    assert p.poll() is None, p.communicate()
    p.send_signal(sig)
    _, err = p.communicate(timeout=60)
    how = "interrupted" if sig == signal.SIGINT else "terminated (SIGTERM)"
    assert (p.returncode, err) == (130 if sig == signal.SIGINT else 143,
                                   f"buraco-log: error: query: {how}; nothing was written "
                                   f"to {out}\n")
    assert not out.exists()
    deadline = time.monotonic() + 30
    while subprocess.run(["pgrep", "-s", str(p.pid)], capture_output=True,
                         check=False).returncode == 0:  # the JVM reads EOF and exits
        assert time.monotonic() < deadline, "the JVM outlived the command"
        time.sleep(0.5)
