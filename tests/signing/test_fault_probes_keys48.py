"""`keys new` replaces existing files with `--overwrite`, the name every other command gives that
option (it alone called it `--force`, which `repair` uses for something else); `--force` is
still read, out of the help. Real processes, real files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("cryptography")

ROOT = Path(__file__).resolve().parents[2]


def keys_new(*args: object) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, COLUMNS="200", PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "cli", "keys", "new", *map(str, args)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)


def key_id(run: subprocess.CompletedProcess[str]) -> str:
    assert run.returncode == 0 and run.stderr == "", run
    return str(json.loads(run.stdout)["key_id"])


def test_overwrite_and_its_old_name_force_both_replace_a_key_and_neither_is_needed_for_a_new_one(
        tmp_path: Path) -> None:
    first = key_id(keys_new("site", "-d", tmp_path, "-f", "json"))
    # refused without either: test_fault_probes_signing46, which names --overwrite
    seen = {first}
    for spelling in ("--overwrite", "--force"):
        new = key_id(keys_new("site", "-d", tmp_path, spelling, "-f", "json"))
        assert new not in seen, spelling  # a new pair, both files replaced
        seen.add(new)
        public = json.loads((tmp_path / "site.pub").read_text())
        assert public["key_id"] == new, spelling
    # no file there: the option changes nothing
    assert key_id(keys_new("other", "-d", tmp_path, "--overwrite", "-f", "json"))
    assert (tmp_path / "other.key").exists() and (tmp_path / "other.pub").exists()


def test_keys_new_help_shows_overwrite_alone() -> None:
    run = keys_new("--help")
    assert run.returncode == 0, run
    assert "--overwrite" in run.stdout and "Never overwrites a key without --overwrite" in " ".join(
        run.stdout.split())
    assert "--force" not in run.stdout, run.stdout
