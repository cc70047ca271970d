"""Fault probes (lead, round 41): `view` of a log with a repeated signature record shows the
damage banner and exits 1, as `show`, `replay` and `verify` name it (the page looked whole,
exit 0)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.log.cli_run import run

pytest.importorskip("cryptography")

from tests.signing.signed_copies import ENV, _record_span, _signed, _with_copy


def _banners(page: Path) -> list[dict[str, object]]:
    found = re.search(r'"banners":(\[.*?\]),"', page.read_text("utf-8"))
    assert found is not None, "no banners in the page's data"
    return list(json.loads(found.group(1)))


def test_a_repeated_signature_record_is_a_damage_banner_and_exit_1(tmp_path: Path) -> None:
    (tmp_path / "none.toml").write_text("")
    env = {**ENV, "BURACO_LOG_CONFIG": str(tmp_path / "none.toml")}
    path, _ = _signed(tmp_path)
    bad = tmp_path / "dup.blog"
    seq = _with_copy(path, bad, 1)
    at = _record_span(path, 1)[1]
    good = run("view", path, "-o", tmp_path / "good.html", env=env)
    assert good.code == 0 and _banners(tmp_path / "good.html") == [], good
    r = run("view", bad, "-o", tmp_path / "bad.html", env=env)
    assert r.code == 1 and "Traceback" not in r.err, r
    banners = _banners(tmp_path / "bad.html")
    assert len(banners) == 1, banners
    b = banners[0]
    assert (b["kind"], b["rule"], b["seq"], b["offset"]) == ("damaged", "sign.duplicate", seq,
                                                              at), b
    assert f"after seq {seq} repeats" in str(b["text"]) and f"after seq {seq} repeats" in r.err
    # and at the seq it signs, under the event, as a damaged log's last event read whole
    from tests.view.pages import data_of

    marks = data_of((tmp_path / "bad.html").read_bytes())["marks"]
    assert [m["kind"] for m in marks.get(str(seq), [])] == ["damaged"], marks
    assert f"after seq {seq} repeats" in marks[str(seq)][0]["text"]
