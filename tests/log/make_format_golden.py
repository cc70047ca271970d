"""Writes the frozen golden logs of examples/format/ (run once per log format version).

    python -m tests.log.make_format_golden

The files of a released format version are never rewritten: later versions of buraco_log must
read them as they are. The script refuses to overwrite an existing file.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import msgspec

from buraco_log import events as ev
from buraco_log import jsonl, log
from buraco_log.reducer import Replayer
from buraco_log.rules import preset
from buraco_log.signing.keys import Signer
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
    # Version 2 signs the sealed log with a fixed key (published beside it as vN.pub): a
    # signature record after each durable append, then one at the end of the match.
    signer = None
    if version >= log.SIGNED_VERSION:
        signer = golden_signer(version)
        write_key_pair_public(signer, OUT / f"v{version}.pub")
        match[0] = msgspec.structs.replace(match[0], key_id=signer.key_id)
    # Durable appends (one event per segment), then a batch: both framings in one file.
    with log.Writer(sealed, signer=signer) as w:
        for event in match[:40]:
            w.append(event)
    with log.Writer(sealed, batched=True, batch_events=128, signer=signer, sign_at="end") as w:
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
        if version >= log.SIGNED_VERSION:
            expected[path.name]["signatures"] = info.signatures
    (OUT / f"v{version}.expected.json").write_text(
        json.dumps(expected, indent=2, sort_keys=True) + "\n", encoding="utf-8"
    )


def golden_signer(version: int) -> Signer:
    """The fixed key of the golden logs of ``version`` (a test key, never a site's)."""
    from cryptography.hazmat.primitives.asymmetric import ed25519

    seed = hashlib.sha256(f"buraco-log golden format v{version}".encode()).digest()
    return Signer(ed25519.Ed25519PrivateKey.from_private_bytes(seed))


def write_key_pair_public(signer: Signer, path: Path) -> None:
    with open(path, "xb") as f:
        f.write(msgspec.json.format(msgspec.json.encode(signer.public()), indent=2) + b"\n")


if __name__ == "__main__":
    main()
