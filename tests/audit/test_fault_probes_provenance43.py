"""Fault probes 43, deal provenance: each way a committed match's deals can be wrong is named by
`audit` with its rule id and the seq where it shows, and the verdict is not OK.

A wrong reveal, a missing one, the reveal of another match (a seed that hashes to that match's
commitment), the players' seeds changed in the match start, and two hands' deals swapped.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import msgspec
import pytest

from buraco_log import audit, log
from buraco_log.dealer import commitment_of
from buraco_log.events import AnyEvent, HandStarted, MatchEnded, MatchStarted
from tests.cli.probes import ROOT, cli

SIM = ROOT / "examples" / "sim" / "classic-2p-000000.blog"
OTHER = ROOT / "examples" / "disputes" / "fair-thirteen.log"

Edit = Callable[[list[AnyEvent]], list[AnyEvent]]


def _events(path: Path) -> list[AnyEvent]:
    events, integrity = audit.read_log(str(path))
    assert integrity.status == "sealed" and events
    return list(events)


def _at(events: list[AnyEvent], kind: type) -> int:
    return next(i for i, e in enumerate(events) if type(e) is kind)


def _reveal(seed: str | None) -> Edit:
    def edit(events: list[AnyEvent]) -> list[AnyEvent]:
        i = _at(events, MatchEnded)
        events[i] = msgspec.structs.replace(events[i], server_seed=seed)
        return events
    return edit


def _other_reveal(events: list[AnyEvent]) -> list[AnyEvent]:
    theirs = next(e for e in _events(OTHER) if isinstance(e, MatchEnded))
    start = next(e for e in _events(OTHER) if isinstance(e, MatchStarted))
    assert theirs.server_seed is not None and start.commitment is not None
    assert commitment_of(theirs.server_seed) == start.commitment  # a true reveal, of that match
    return _reveal(theirs.server_seed)(events)


def _seeds_changed(events: list[AnyEvent]) -> list[AnyEvent]:
    start = events[0]
    assert isinstance(start, MatchStarted) and start.player_seeds
    events[0] = msgspec.structs.replace(
        start, player_seeds=(start.player_seeds[1], start.player_seeds[0]))
    return events


def _deals_swapped(events: list[AnyEvent]) -> list[AnyEvent]:
    """Hands 0 and 1 dealt each other's cards, their numbers and seqs kept."""
    i, j = [k for k, e in enumerate(events) if type(e) is HandStarted][:2]
    a, b = events[i], events[j]
    assert isinstance(a, HandStarted) and isinstance(b, HandStarted)
    fields = ("hands", "mortos", "stock", "upcard")
    events[i] = msgspec.structs.replace(a, **{f: getattr(b, f) for f in fields})
    events[j] = msgspec.structs.replace(b, **{f: getattr(a, f) for f in fields})
    return events


def _seq(events: list[AnyEvent], kind: type, nth: int = 0) -> int:
    return [e.seq for e in events if type(e) is kind][nth]


CASES: dict[str, tuple[Edit, str, Callable[[list[AnyEvent]], list[int]]]] = {
    "wrong reveal": (_reveal("00" * 32), "deal.seed_mismatch",
                     lambda ev: [_seq(ev, MatchEnded)]),
    "missing reveal": (_reveal(None), "deal.not_revealed", lambda ev: [_seq(ev, MatchEnded)]),
    "another match's reveal": (_other_reveal, "deal.seed_mismatch",
                               lambda ev: [_seq(ev, MatchEnded)]),
    "player seeds changed": (_seeds_changed, "deal.mismatch",
                             lambda ev: [e.seq for e in ev if type(e) is HandStarted]),
    "deals swapped": (_deals_swapped, "deal.mismatch",
                      lambda ev: [_seq(ev, HandStarted, 0), _seq(ev, HandStarted, 1)]),
}


@pytest.mark.parametrize("case", list(CASES))
def test_each_wrong_deal_is_named_with_its_rule_and_seq(tmp_path: Path, case: str) -> None:
    edit, rule, seqs = CASES[case]
    events = edit(_events(SIM))
    path = tmp_path / "edited.blog"
    log.write_log(path, events, validate=False)  # sealed anew: only provenance can tell
    verdict = audit.audit_log(str(path))
    assert not verdict.ok and verdict.integrity.status == "sealed"
    found = [(f.rule, f.seq) for f in verdict.provenance.findings]
    assert found == [(rule, s) for s in seqs(events)], found
    assert verdict.provenance.unchecked == (verdict.provenance.deals
                                            if rule != "deal.mismatch" else 0)


def test_the_command_line_names_them_as_the_library_does(tmp_path: Path) -> None:
    events = _other_reveal(_events(SIM))
    path = tmp_path / "edited.blog"
    log.write_log(path, events, validate=False)
    done = cli("audit", path)
    assert done.returncode == 1, done.stderr
    end = _seq(events, MatchEnded)
    assert (f"    seq {end} [deal.seed_mismatch] revealed server seed does not hash to the "
            "published commitment") in done.stdout.splitlines()
    js = json.loads(cli("audit", path, "-f", "json").stdout)
    assert [(f["rule"], f["seq"]) for f in js["findings"]] == [("deal.seed_mismatch", end)]


def test_the_untouched_match_is_clean() -> None:
    """The probes above find what they change, not something already there."""
    verdict = audit.audit_log(str(SIM))
    assert verdict.ok and verdict.provenance.status == "committed"
    assert verdict.provenance.unchecked == 0 and verdict.provenance.deals > 1
