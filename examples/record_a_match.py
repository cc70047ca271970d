"""How a game server records a match with buraco_log: deal fairly, check and append every move.

Run: python examples/record_a_match.py [LOG]   (default: table-7.blog)
Here bots stand in for the players; a real server appends its players' moves the same way.
"""

import random
import sys

from buraco_log.dealer import FairDealer
from buraco_log.events import AnyEvent, MatchEnded, MatchStarted, Player
from buraco_log.log import Writer
from buraco_log.moves import legal_moves
from buraco_log.reducer import Replayer
from buraco_log.rules import preset, side_of

rules, players = preset("classic"), 2
dealer = FairDealer(player_seeds=("ana's seed", "bia's seed"))  # a fresh secret server seed
table = Replayer()  # the live table, kept by the server beside the log
rng = random.Random(7)
hand = 0
if sys.argv[1:2] and sys.argv[1].startswith("-"):  # "--help" is no log name: usage, no log
    sys.exit(__doc__)
path = sys.argv[1] if len(sys.argv) > 1 else "table-7.blog"

with Writer(path) as log:  # refuses any move the rules do not allow
    def record(event: AnyEvent) -> None:
        log.append(event)  # checked, then durable (fsync): acknowledge the move after this
        table.step(event)

    record(MatchStarted(
        match_id="club-2026-12-01-table-7", rules=rules, seq=0,
        players=(Player("ana"), Player("bia")),
        sides=tuple(side_of(i, players) for i in range(players)),
        commitment=dealer.commitment, player_seeds=dealer.player_seeds,  # published up front
    ))
    while (state := table.state()).phase != "over":
        seq = state.seq + 1
        if state.phase == "between":
            record(dealer.deal(rules, players, hand, dealer=hand % players, seq=seq))
            hand += 1
            continue
        move = rng.choice(legal_moves(state))  # a real server gets it from the player
        if isinstance(move, MatchEnded):  # reveal the server seed: anyone can check the deals
            move = MatchEnded(move.totals, move.winner, dealer.server_seed, seq=seq)
        record(move)

print(f"recorded {table.state().seq + 1} events in {path}")
