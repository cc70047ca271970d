"""Fault probes of simulation (round 56): a player who wants to review one match of a batch.

- ``simulate`` had no way to make match k of a batch alone: to review match 137 of a
  1,000-match batch a player re-simulated the whole batch (``--index`` was a usage error).
  ``--index K`` now makes the matches from index K on, each the same bytes, under the same
  name, as in the batch; ``simulate_many(first=K)`` from Python.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from buraco_log.rules import PRESETS
from buraco_log.simulate import match_file, simulate_many

ROOT = Path(__file__).resolve().parents[2]


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "cli.main", "simulate", "--no-progress", *args],
                          capture_output=True, text=True, env=env, cwd=ROOT, timeout=300)


def _bytes(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def test_index_remakes_one_match_of_a_batch_as_the_same_bytes(tmp_path: Path) -> None:
    rules = PRESETS["thirteen-quick"]
    simulate_many(rules, 2, 2, seed="batch", out_dir=tmp_path / "batch")
    from cli.main import app  # in process: the slow twin runs the command as a process

    done = CliRunner().invoke(app, ["simulate", "--rules", "thirteen-quick", "--seed", "batch",
                                    "--index", "1", "-o", str(tmp_path / "one"),
                                    "--no-progress"])
    assert done.exit_code == 0, done.output
    assert "1 match (index 1) of thirteen-quick" in done.stdout
    one = _bytes(tmp_path / "one")
    assert list(one) == [match_file(rules, 2, 1)]  # that match alone, under its batch name
    assert one == {k: v for k, v in _bytes(tmp_path / "batch").items() if k in one}


def test_index_from_python_plays_only_those_matches(tmp_path: Path) -> None:
    rules = PRESETS["thirteen-quick"]
    got = simulate_many(rules, 2, 1, seed="py", out_dir=tmp_path, first=3)
    assert [s.index for s in got] == [3]
    assert sorted(os.listdir(tmp_path)) == [match_file(rules, 2, 3)]
    with pytest.raises(ValueError, match="first index -1"):
        simulate_many(rules, 2, 1, seed="py", out_dir=tmp_path / "no", first=-1)


@pytest.mark.slow
def test_index_with_workers_and_experts_matches_the_batch(tmp_path: Path) -> None:
    """A range from the middle of a batch of 12 (heuristic and expert seats), with 2 workers,
    is the batch's bytes; a name already there is refused as in the batch; an index below 0 is
    a usage error."""
    bots = ["--bot", "expert:2x2r1", "--bot", "heuristic"]
    batch = _cli("--rules", "classic", "--seed", "b12", "--matches", "12", "-j", "2", *bots,
                 "-o", str(tmp_path / "batch"))
    assert batch.returncode == 0, batch.stderr
    part = _cli("--rules", "classic", "--seed", "b12", "--matches", "4", "--index", "7",
                "-j", "2", *bots, "-o", str(tmp_path / "part"), "-f", "json")
    assert part.returncode == 0, part.stderr
    got = _bytes(tmp_path / "part")
    assert list(got) == [f"classic-2p-{i:06d}.blog" for i in range(7, 11)]
    assert got == {k: v for k, v in _bytes(tmp_path / "batch").items() if k in got}
    again = _cli("--seed", "b12", "--index", "8", "-o", str(tmp_path / "part"))
    assert again.returncode == 2 and "classic-2p-000008.blog: exists" in again.stderr
    below = _cli("--index", "-1", "-o", str(tmp_path / "below"))
    assert below.returncode == 2 and "--index" in below.stderr
    assert not (tmp_path / "below").exists()
