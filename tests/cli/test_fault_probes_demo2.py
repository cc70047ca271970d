"""`demo` and `simulate` write logs the way docs/cli.md says every log writer does."""

from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path


def run(*args: object, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["buraco-log", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, check=False, timeout=300)


def test_every_next_step_the_demo_suggests_runs(tmp_path: Path) -> None:
    r = run("demo", "--rules", "classic", "--players", "2", "-f", "json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    steps = json.loads(r.stdout)["next"]
    assert any(s.split()[1] == "explain" for s in steps)
    for step in steps:
        argv = shlex.split(step)
        assert argv[0] == "buraco-log"
        done = run(*argv[1:], cwd=tmp_path)
        # explain --at 40 may find the event legal or not; never a usage error
        assert done.returncode in (0, 1) and "usage" not in done.stderr, (step, done.stderr)
        assert "Traceback" not in done.stderr


def test_demo_output_dash_is_refused_and_writes_no_file_named_dash(tmp_path: Path) -> None:
    r = run("demo", "-o", "-", cwd=tmp_path)
    assert r.returncode == 2 and r.stdout == "" and r.stderr.count("\n") == 1, r
    assert "--output -" in r.stderr
    assert list(tmp_path.iterdir()) == []


def test_demo_replaces_a_file_only_with_overwrite(tmp_path: Path) -> None:
    mine = tmp_path / "mine.blog"
    mine.write_bytes(b"my notes\n")
    r = run("demo", "--rules", "burako", "--players", "2", "-o", mine, cwd=tmp_path)
    assert r.returncode == 2 and "--overwrite" in r.stderr and r.stdout == ""
    assert mine.read_bytes() == b"my notes\n"
    r = run("demo", "--rules", "burako", "--players", "2", "-o", mine, "--overwrite",
            cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    verify = run("verify", mine, "-f", "json", cwd=tmp_path)
    assert verify.returncode == 0 and json.loads(verify.stdout)["events"] > 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mine.blog"]  # no temporary left


def test_demo_into_a_directory_or_a_missing_one_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "folder").mkdir()
    for target, says in (("folder", "is a directory"),
                         ("nowhere/x.blog", "no such directory: nowhere")):
        r = run("demo", "-o", target, "-f", "json", cwd=tmp_path)
        assert r.returncode == 2 and says in r.stderr, r.stderr
        assert json.loads(r.stdout)["error"]["exit_status"] == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["folder"]


def test_simulate_output_dash_is_refused_and_output_names_the_directory(tmp_path: Path) -> None:
    r = run("simulate", "-o", "-", "--no-progress", cwd=tmp_path)
    assert r.returncode == 2 and r.stdout == "" and "--output -" in r.stderr, r
    assert list(tmp_path.iterdir()) == []
    r = run("simulate", "--output", "logs", "--no-progress", "-f", "json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["out"] == "logs"
    assert [p.suffix for p in (tmp_path / "logs").iterdir()] == [".blog"]


def test_audit_html_dash_is_refused_and_writes_no_file_named_dash(tmp_path: Path) -> None:
    log = tmp_path / "match.blog"
    log.write_bytes((Path(__file__).resolve().parents[2] / "examples" / "sim" /
                     "classic-2p-000000.blog").read_bytes())
    r = run("audit", log, "--html", "-", cwd=tmp_path)
    assert r.returncode == 2 and r.stdout == "" and r.stderr.count("\n") == 1, r
    assert "--html -" in r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["match.blog"]


def test_review_into_a_missing_directory_is_refused_before_the_search(tmp_path: Path) -> None:
    import time

    log = Path(__file__).resolve().parents[2] / "examples" / "sim" / "classic-2p-000000.blog"
    start = time.monotonic()
    # a budget that searches for minutes: the error must come before it
    r = run("review", log, "--seat", "0", "--budget", "1000x8r0", "--no-progress",
            "-o", tmp_path / "nowhere" / "review.txt", cwd=tmp_path)
    assert r.returncode == 2 and r.stdout == "" and r.stderr.count("\n") == 1, r
    assert "no such directory" in r.stderr and time.monotonic() - start < 60
    assert list(tmp_path.iterdir()) == []
