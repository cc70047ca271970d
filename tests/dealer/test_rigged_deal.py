"""Issue 13 item 8: a dealer rigs one hand of a committed match with a plain seed.

The attack exactly as the probe ran it: the dealer tries plain seeds until one gives the first
player 4 wild cards, records that hand with its plain seed, deals every other hand from the
committed seed, reveals the seed at the end, and the play is legal throughout. Once a match
commits, every deal must derive from the committed seed: the rigged hand is ``deal.not_committed``
with or without ``--require-commitment``.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
from pathlib import Path

import msgspec
import pytest

from buraco_log import audit
from buraco_log.cards import JOKER, RANK
from buraco_log.dealer import FairDealer, check_deals, deal_seeded
from buraco_log.events import (
    AnyEvent,
    CardDrawn,
    CardsLaidOff,
    HandStarted,
    MatchEnded,
    MatchStarted,
    MeldLaid,
    MortoTaken,
    Player,
    WentOut,
)
from buraco_log.moves import legal_moves
from buraco_log.reducer import Replayer
from buraco_log.rules import preset, side_of
from tests import brokenlogs as bl

ROOT = Path(__file__).resolve().parents[2]
PRESET = "thirteen-quick"
PLAYERS = 2


def wilds(cards: tuple[int, ...]) -> int:
    return sum(1 for c in cards if c == JOKER or RANK[c] == 2)


def rig_seed(first_dealer: int, want: int = 4, tries: int = 300) -> tuple[str, HandStarted]:
    """The probe's search: plain seeds until the first player (the seat after the dealer)
    holds ``want`` wild cards."""
    rules = preset(PRESET)
    first = (first_dealer + 1) % PLAYERS
    for i in range(tries):
        hs = deal_seeded(rules, PLAYERS, 0, first_dealer, f"rig-{i}", seq=1)
        if wilds(hs.hands[first]) >= want:
            return f"rig-{i}", hs
    raise AssertionError(f"no seed of {tries} gives {want} wilds")


def match(rig: bool, *, commit: bool = True, seed: int = 3) -> list[AnyEvent]:
    """A complete, legally played match; with ``rig``, hand 0 is the rigged plain-seeded deal."""
    rules = preset(PRESET)
    rng = random.Random(seed)
    dealer = FairDealer(f"server-{seed}", ("ana's seed", "bruno's seed"))
    start = MatchStarted(
        "rigged" if rig else "fair", rules, (Player("ana"), Player("bruno")),
        tuple(side_of(s, PLAYERS) for s in range(PLAYERS)),
        commitment=dealer.commitment if commit else None,
        player_seeds=dealer.player_seeds if commit else (), seq=0,
    )
    events: list[AnyEvent] = [start]
    rep = Replayer()
    rep.step(start)
    while len(events) < 20_000:
        st = rep.state()
        if st.phase == "over":
            break
        ev: AnyEvent
        if st.phase == "between":
            hand = len(st.results)
            d = (st.first_dealer + hand) % PLAYERS
            if rig and hand == 0:
                ev = msgspec.structs.replace(rig_seed(d)[1], seq=st.seq + 1)
            elif not commit:
                ev = deal_seeded(rules, PLAYERS, hand, d, f"plain-{hand}", seq=st.seq + 1)
            else:
                ev = dealer.deal(rules, PLAYERS, hand, d, seq=st.seq + 1)
        else:
            moves = legal_moves(st)
            if isinstance(moves[0], MatchEnded):
                ev = msgspec.structs.replace(
                    moves[0], server_seed=dealer.server_seed if commit else None)
            else:
                laying = [m for m in moves
                          if isinstance(m, MeldLaid | CardsLaidOff | MortoTaken | WentOut)]
                draws = [m for m in moves if isinstance(m, CardDrawn)]
                if laying:
                    ev = rng.choice(laying)
                elif draws and rng.random() < 0.7:
                    ev = draws[0]
                else:
                    ev = rng.choice(moves)
        rep.step(ev)  # every event legal: the reducer accepts it
        events.append(ev)
    assert rep.state().phase == "over"
    return events


@pytest.fixture(scope="module")
def rigged() -> list[AnyEvent]:
    # A match of at least two hands, so that hands dealt from the commitment follow the rigged one.
    return next(m for seed in range(3, 40) if len(deals(m := match(rig=True, seed=seed))) >= 2)


def deals(events: list[AnyEvent]) -> list[HandStarted]:
    return [e for e in events if isinstance(e, HandStarted)]


def test_the_attack_is_real_four_wilds_to_the_first_player_and_legal_play(
        rigged: list[AnyEvent]) -> None:
    hs = deals(rigged)
    assert len(hs) >= 2  # a rigged hand and hands dealt from the commitment
    first = (hs[0].dealer + 1) % PLAYERS
    assert hs[0].seed is not None and wilds(hs[0].hands[first]) >= 4
    assert all(d.seed is None for d in hs[1:])
    # Every other hand follows the commitment: re-derived and equal.
    v = audit.audit_events(rigged, audit.Integrity("sealed", "binary", len(rigged), 1, ""))
    assert v.legality.first_illegal is None and v.legality.complete
    assert v.scoring.ok


@pytest.mark.parametrize("require", [False, True])
def test_a_hand_dealt_from_a_plain_seed_in_a_committed_match_is_a_finding(
        rigged: list[AnyEvent], require: bool) -> None:
    v = audit.audit_events(rigged, audit.Integrity("sealed", "binary", len(rigged), 1, ""),
                           require_commitment=require)
    assert not v.ok
    assert [(f.rule, f.seq) for f in v.provenance.findings] == [
        ("deal.not_committed", deals(rigged)[0].seq)]
    assert [f.rule for f in v.findings] == ["deal.not_committed"]
    assert [f.rule for f in check_deals(rigged, require_commitment=require)] == [
        "deal.not_committed"]


def test_the_same_match_dealt_wholly_from_the_commitment_is_clean() -> None:
    fair = match(rig=False)
    v = audit.audit_events(fair, audit.Integrity("sealed", "binary", len(fair), 1, ""),
                           require_commitment=True)
    assert v.ok, v.findings
    assert v.provenance.status == "committed" and v.provenance.revealed


def test_plain_seeds_in_a_match_that_never_committed_are_still_accepted() -> None:
    plain = match(rig=False, commit=False)
    v = audit.audit_events(plain, audit.Integrity("sealed", "binary", len(plain), 1, ""))
    assert v.ok, v.findings
    assert v.provenance.status == "plain_seeds"


def test_the_rigged_log_fails_the_audit_command(rigged: list[AnyEvent], tmp_path: Path) -> None:
    path = bl.write(tmp_path / "rigged.blog", rigged)
    env = {**os.environ, "BURACO_LOG_REQUIRE_COMMITMENT": "0"}
    out = subprocess.run([sys.executable, "-m", "cli.main", "audit", str(path)], cwd=ROOT,
                         capture_output=True, text=True, timeout=120, env=env, check=False)
    assert out.returncode == 1, out.stdout + out.stderr
    assert "[deal.not_committed]" in out.stdout
