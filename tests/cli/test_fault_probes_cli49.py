"""CLI probes: one card notation in every command, one error line shape, `verify` of many logs,
and outputs that cannot be written."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from subprocess import CompletedProcess

from tests.cli.probes import ROOT

SIM = ROOT / "examples" / "sim"
CARDS_LOG = SIM / "classic-2p-000000.blog"
TILES_LOG = SIM / "burako-2p-000000.blog"

SYMBOLS = re.compile("[♣♦♥♠🃏🟡🔵🔴⚫]")
LETTER_CARD = re.compile(r"\b(?:[2-9TJQKA][cdhs]|JK)\b")
TILE = re.compile(r"\b(?:1[0-3]|[1-9])[ybrk]\b")
UTF8 = {"LANG": "C.UTF-8", "LC_ALL": "", "LC_CTYPE": "", "NO_COLOR": ""}


def _batch(runs: list[tuple[dict[str, str], list[object]]]) -> list[CompletedProcess[str]]:
    """``buraco-log ARGS`` for each (environment, ARGS), all started at once."""
    base = {**os.environ, "PYTHONPATH": str(ROOT)}
    procs = [subprocess.Popen([sys.executable, "-m", "cli", *map(str, args)], cwd=ROOT,
                              env={**base, **env}, stdin=subprocess.DEVNULL, text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
             for env, args in runs]
    done = []
    for (_, args), proc in zip(runs, procs, strict=True):
        out, err = proc.communicate(timeout=120)
        done.append(CompletedProcess([str(a) for a in args], proc.returncode, out, err))
    return done


def test_every_command_writes_cards_as_the_log_does_and_symbols_only_when_asked() -> None:
    """`moves` wrote 3♦ where `replay`, `explain`, `audit` and the log itself write 3d (and
    Burako's 12🔴 where the others write 12r), in a UTF-8 locale. `--cards symbols` asks for
    the symbols, which NO_COLOR and LC_ALL=C turn back into letters."""
    disputes = ROOT / "examples" / "disputes"
    writers: list[tuple[list[object], re.Pattern[str]]] = [
        (["show", CARDS_LOG], LETTER_CARD), (["replay", CARDS_LOG, "--at", 40], LETTER_CARD),
        (["explain", CARDS_LOG, "--at", 40], LETTER_CARD),
        (["audit", disputes / "illegal.log"], LETTER_CARD),
        (["diff", disputes / "fair-thirteen.log", disputes / "illegal.log"], LETTER_CARD),
        (["moves", CARDS_LOG, "--at", 40], LETTER_CARD),
        (["replay", TILES_LOG, "--at", 40], TILE), (["moves", TILES_LOG, "--at", 40], TILE)]
    symbols: list[object] = ["moves", CARDS_LOG, "--at", 40, "--cards", "symbols"]
    done = _batch([(UTF8, args) for args, _ in writers] + [
        (UTF8, symbols), ({**UTF8, "NO_COLOR": "1"}, symbols), ({**UTF8, "LC_ALL": "C"}, symbols),
        (UTF8, ["moves", CARDS_LOG, "--cards", "suits"])])
    for (args, card), r in zip(writers, done, strict=False):
        assert r.returncode in (0, 1), (args, r.stderr)
        assert not SYMBOLS.search(r.stdout + r.stderr), (args[0], SYMBOLS.findall(r.stdout))
        assert card.search(r.stdout), (args[0], r.stdout[:300])
    for replay, moves in ((done[1].stdout, done[5].stdout), (done[6].stdout, done[7].stdout)):
        seat = re.search(r"seat (\d+) \(.*?\) to move", moves)
        assert seat is not None, moves
        hand = re.search(rf"^  seat {seat.group(1)} .*\(\d+\): (.*)$", replay, re.M)
        discards = re.findall(r"^  discard (\S+)$", moves, re.M)
        assert hand is not None and discards, (replay, moves)
        assert set(discards) <= set(hand.group(1).split())  # the same cards, written alike
    shown, no_color, c_locale, bad = done[len(writers):]
    assert shown.returncode == 0 and SYMBOLS.search(shown.stdout), shown.stdout
    for plain in (no_color, c_locale):
        assert plain.returncode == 0 and not SYMBOLS.search(plain.stdout), plain.stdout
        assert LETTER_CARD.search(plain.stdout)
    assert bad.returncode == 2 and "--cards" in bad.stderr and not bad.stdout
