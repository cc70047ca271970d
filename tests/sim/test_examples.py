"""examples/sim: each simulated match is remade byte for byte by its README line, and audits OK."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from typer.testing import CliRunner

from buraco_log import audit
from cli.main import app

ROOT = Path(__file__).resolve().parents[2]
SIM = ROOT / "examples" / "sim"
LINES = re.findall(
    r"^\| `([^`]+)` \| `buraco-log ([^`]+)` \|$", (SIM / "README.md").read_text(), re.MULTILINE
)


def test_every_example_log_has_its_readme_line() -> None:
    logs = sorted(str(p.relative_to(SIM)) for p in SIM.rglob("*.blog"))
    assert logs == sorted(name for name, _ in LINES)
    assert len(logs) >= 8


@pytest.mark.parametrize(("name", "command"), LINES, ids=[n for n, _ in LINES])
def test_the_readme_line_remakes_the_example_and_it_passes_the_audit(
    name: str, command: str, tmp_path: Path
) -> None:
    args = shlex.split(command)
    out = args.index("--out")
    made = tmp_path / "out"
    args[out + 1] = str(made)
    result = CliRunner().invoke(app, [*args, "--no-progress"])
    assert result.exit_code == 0, result.output
    assert (made / Path(name).name).read_bytes() == (SIM / name).read_bytes(), (
        f"examples/sim/{name} is stale: rerun its README line"
    )
    verdict = audit.audit_log(SIM / name)
    assert verdict.ok, verdict.findings
