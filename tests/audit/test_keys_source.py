"""A trusted-keys path that cannot be read names where it came from when the user did not type
it on the command line (`BURACO_LOG_KEYS`, the config file's `[audit] keys`), as a config
file named by `BURACO_LOG_CONFIG` is named; `--keys` is the user's own words."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

EXE = shutil.which("buraco-log")
LOG = Path(__file__).resolve().parents[2] / "examples" / "golden" / "classic.jsonl"


@pytest.mark.skipif(EXE is None, reason="the buraco-log command is not installed")
def test_a_missing_keys_path_names_its_source(tmp_path: Path) -> None:
    assert EXE is not None
    missing = tmp_path / "nokeys"
    config = tmp_path / "c.toml"
    config.write_text(f'[audit]\nkeys = "{missing}"\n')
    base = {k: v for k, v in os.environ.items() if not k.startswith("BURACO_LOG_")}
    cases = [({"BURACO_LOG_KEYS": str(missing)}, [], f"named by BURACO_LOG_KEYS={missing})"),
             ({"BURACO_LOG_CONFIG": str(config)}, [], f"named by {config}: [audit] keys)"),
             ({}, ["--keys", str(missing)], "No such file or directory")]
    for env, args, tail in cases:
        r = subprocess.run([EXE, "audit", *args, str(LOG)], capture_output=True, text=True,
                           env={**base, **env})
        assert r.returncode == 2, r.stderr
        lines = r.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith(f"buraco-log: error: {missing}: "), lines
        assert lines[0].endswith(tail), lines
