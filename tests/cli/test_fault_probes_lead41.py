"""Fault probes (lead, round 41): a JSON error names a file whose name is not UTF-8 with each
such byte as ``\\xNN``, as its line on stderr does (it held a lone surrogate)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path


def test_a_json_error_names_a_non_utf8_file_as_its_stderr_line_does(tmp_path: Path) -> None:
    name = bytes(tmp_path) + b"/gone\xfd.blog"
    p = subprocess.run([sys.executable.encode(), b"-m", b"cli", b"verify", name, b"-f",
                        b"json"], capture_output=True, check=False)
    assert p.returncode == 2, p.stderr
    error = json.loads(p.stdout)["error"]
    assert error["message"].endswith("gone\\xfd.blog: No such file or directory"), error
    assert error["path"].endswith("gone\\xfd.blog"), error
    # every string is UTF-8 now: a lone surrogate cannot be encoded
    json.dumps(error, ensure_ascii=False).encode("utf-8")
    assert b"gone\\xfd.blog" in p.stderr and b"\\udcfd" not in p.stderr, p.stderr
