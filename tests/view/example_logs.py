"""Every example log of the repository the viewer tests open."""

from __future__ import annotations

from pathlib import Path

from tests.view.pages import SIM

ROOT = Path(__file__).resolve().parents[2]


EXAMPLES = sorted([*SIM.glob("*.blog"), *SIM.glob("*/*.blog"),
                   *(ROOT / "examples" / "golden").glob("*.jsonl"),
                   *(ROOT / "examples" / "disputes").glob("*.log"),
                   *(ROOT / "examples" / "format").glob("*.blog"),
                   *(ROOT / "examples" / "format").glob("*.jsonl")])
