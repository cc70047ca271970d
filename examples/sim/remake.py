"""Remake every simulated example from its README line: `python examples/sim/remake.py`."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> None:
    readme = (HERE / "README.md").read_text(encoding="utf-8")
    for name, command in re.findall(r"^\| `([^`]+)` \| `buraco-log ([^`]+)` \|$", readme, re.M):
        args = shlex.split(command)
        args[args.index("--out") + 1] = str(HERE / Path(name).parent)
        subprocess.run(
            [sys.executable, "-m", "cli.main", *args, "--no-progress", "--overwrite"],
            check=True,
            stdout=subprocess.DEVNULL,
            cwd=HERE.parents[1],
        )
        print(f"made examples/sim/{name}")


if __name__ == "__main__":
    main()
