"""Two clean matches of other deals under one match id: what the local and Spark engines must
both name as a shared id."""

from __future__ import annotations

from pathlib import Path

import msgspec


def one_id_matches(src: Path) -> tuple[Path, str]:
    """``src/a.blog`` and ``src/b.blog``: two clean matches (other deals) under one match id."""
    from buraco_log.log import write_log
    from buraco_log.rules import preset
    from buraco_log.simulate import simulate_match

    src.mkdir(parents=True, exist_ok=True)
    a, b = (simulate_match(preset("thirteen-quick"), 2, seed="arch44", index=i)
            for i in (0, 1))
    b[0] = msgspec.structs.replace(b[0], match_id=a[0].match_id)
    write_log(src / "a.blog", a, validate=False)
    write_log(src / "b.blog", b, validate=False)
    return src, a[0].match_id
