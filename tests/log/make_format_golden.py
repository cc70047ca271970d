"""Writes the frozen golden logs of examples/format/ (run once per log format version).

    python -m tests.log.make_format_golden

The files of a released format version are never rewritten: later versions of buraco_log must
read them as they are. The script refuses to overwrite an existing file.
"""

from __future__ import annotations

import json
from pathlib import Path

from buraco_log import events as ev
from buraco_log import jsonl, log
from buraco_log.reducer import Replayer
from buraco_log.rules import preset
from buraco_log.simulate import simulate_match

OUT = Path(__file__).resolve().parents[2] / "examples" / "format"


def main() -> None:
    version = ev.FORMAT_VERSION
    sealed = OUT / f"v{version}.blog"
    unsealed = OUT / f"v{version}-unsealed.blog"
    for path in (sealed, unsealed):
        if path.exists():
            raise SystemExit(f"{path} exists: golden logs are never rewritten")
    OUT.mkdir(parents=True, exist_ok=True)
    match = simulate_match(preset("classic"), 2, seed=f"format-v{version}")
    # Durable appends (one event per segment), then a batch: both framings in one file.
    with log.Writer(sealed) as w:
        for event in match[:40]:
            w.append(event)
    with log.Writer(sealed, batched=True, batch_events=128) as w:
        w.append_many(match[40:])
    short = simulate_match(preset("thirteen-quick"), 2, seed=f"format-v{version}-unsealed")
    log.write_log(unsealed, short, sealed=False)
    expected = {}
    for path, events in ((sealed, match), (unsealed, short)):
        jsonl.convert(path, path.with_suffix(".jsonl"), "jsonl")
        info = log.verify(path)
        r = Replayer()
        for event in events:
            r.step(event)
        state = r.state()
        expected[path.name] = {
            "events": info.events,
            "segments": info.segments,
            "sealed": info.sealed,
            "version": info.version,
            "head": info.head,
            "bytes": info.valid_bytes,
            "phase": state.phase,
            "totals": list(state.totals),
        }
    (OUT / f"v{version}.expected.json").write_text(
        json.dumps(expected, indent=2, sort_keys=True) + "\n", encoding="utf-8"
    )


if __name__ == "__main__":
    main()
