"""Write the golden match logs of tests/golden/ (committed; outputs are checked against them).

Run from the repository root: ``python -m tests.golden.make_logs``. The logs are inputs and
change only when this script does; the expected outputs are regenerated with
``UPDATE_GOLDEN=1 pytest tests/cli/test_golden.py``.
"""

from __future__ import annotations

from pathlib import Path

import msgspec

from buraco_log.events import AnyEvent, HandEnded, HandStarted
from buraco_log.reducer import Replayer
from tests.brokenlogs import fair_match, tamper, with_illegal_discard, with_wrong_score, write

HERE = Path(__file__).parent


def main() -> None:
    for old in HERE.glob("*.log"):
        old.unlink()
    clean = fair_match("thirteen-quick", 2, 1)
    write(HERE / "fair-thirteen.log", clean)
    write(HERE / "burako.log", fair_match("burako", 2, 1))
    write(HERE / "illegal.log", with_illegal_discard(clean)[0])
    write(HERE / "wrong-score.log", with_wrong_score(clean, 100)[0])
    write(HERE / "tampered.log", clean, segment=16)
    tamper(HERE / "tampered.log", 3)
    # A forged deal: the bottom two stock cards of a hand swapped (cards never drawn).
    forged = list(clean)
    i = _deal_with_untouched_stock(clean)
    deal = forged[i]
    assert isinstance(deal, HandStarted)
    stock = (*deal.stock[:-2], deal.stock[-1], deal.stock[-2])
    assert stock != deal.stock
    forged[i] = msgspec.structs.replace(deal, stock=stock)
    write(HERE / "forged-deal.log", forged)


def _deal_with_untouched_stock(events: list[AnyEvent]) -> int:
    """Index of a deal whose stock still held three cards when its hand ended."""
    rep = Replayer()
    deal_at = -1
    for i, e in enumerate(events):
        if isinstance(e, HandStarted):
            deal_at = i
        if isinstance(e, HandEnded) and len(rep.state().stock) >= 3:
            return deal_at
        rep.step(e)
    raise AssertionError("every hand drew the stock down")


if __name__ == "__main__":
    main()
