"""Every rule id buraco_log reports, documented once, in plain language.

Rule ids are stable strings: the reducer and meld reader raise them (``IllegalMoveError.rule``,
``MeldError.rule``), the dealer's audit reports ``deal.*`` findings, the log reader reports
integrity problems by kind (``LogFormatError.kind``, listed here as ``log.<kind>``), and the
audit adds the few ids of its own. ``buraco-log explain`` prints these texts; a test scans the
source so an id raised anywhere is documented here.
"""

from __future__ import annotations

RULES: dict[str, str] = {
    # -- the order of events
    "seq.out_of_order": "Events are numbered 0, 1, 2, ... with no gap or repeat; this event's "
    "seq does not follow the previous one.",
    "event.invalid": "The event holds values the rules engine cannot read, such as a card "
    "code that is no card.",
    # -- the match
    "match.not_started": "A log opens with the match start (players, sides, rules); nothing can "
    "happen before it.",
    "match.already_started": "A match starts once; a second match start is not allowed.",
    "match.rules": "The rules recorded at the start are impossible, or do not allow this many "
    "players.",
    "match.sides": "Seats form sides by the seating rule (partners sit opposite); the recorded "
    "sides do not match it.",
    "match.first_dealer": "The first dealer must be one of the seats at the table.",
    "match.over": "The match has ended (or is decided); no more hands or moves are possible.",
    "match.decided": "A side has won the match: only the match end may follow.",
    "match.not_over": "The match ends only when a side has reached the target score with a "
    "unique highest total.",
    "match.carried_totals": "Carried-over totals come right after the match start, before the "
    "first hand, one per side, and must leave the match undecided.",
    "match.wrong_winner": "The recorded winner is not the side that won by the recomputed "
    "totals.",
    # -- hands and deals
    "hand.not_expected": "A new hand starts only between hands, after the previous one ended.",
    "hand.number": "Hands are numbered 0, 1, 2, ... in order; this deal carries the wrong "
    "number.",
    "hand.not_over": "A hand ends when a player goes out, or when a turn begins with the stock "
    "down to the preset's floor (empty in most presets; 2 left in mega) and the player does "
    "not take the pile; neither happened.",
    "hand.over": "A player went out: only the hand's end may follow.",
    "deal.dealer_rotation": "The deal passes one seat to the left each hand; this hand names the "
    "wrong dealer.",
    "deal.hand_size": "Every player is dealt exactly the preset's hand size.",
    "deal.morto_size": "With a morto, each side gets one morto of the preset's size; without, "
    "none.",
    "deal.upcard": "Some presets turn one card face up to start the pile and others do not; the "
    "deal does not follow its preset.",
    "deal.material": "Hands, mortos, upcard and stock together must be exactly the preset's "
    "material (two decks plus its jokers).",
    "deal.commitment_missing": "The deal came from no committed seed and no plain seed: nothing "
    "proves it was not chosen.",
    "deal.commitment_late": "The dealer's commitment (hash of the secret seed) must be published "
    "before the first deal, in order and by clock.",
    "deal.not_revealed": "The secret seed behind the commitment must be revealed at the match "
    "end so the deals can be re-derived.",
    "deal.seed_mismatch": "The revealed seed does not hash to the commitment published at the "
    "start.",
    "deal.not_committed": "Once a match publishes a commitment, every deal must derive from "
    "the committed seed; this deal carries a plain seed the dealer chose instead.",
    "deal.unknown_shuffle": "The deal names a shuffle algorithm this buraco_log cannot "
    "re-derive.",
    "deal.mismatch": "The recorded deal differs from the one derived from the seeds.",
    # -- turns
    "turn.no_such_seat": "The event names a seat that is not at the table.",
    "turn.not_your_turn": "Only the player whose turn it is may move.",
    "turn.must_draw_first": "A turn begins by drawing from the stock or taking the pile; this "
    "move came before that.",
    "turn.already_drew": "A player draws (or takes the pile) once per turn.",
    "turn.hand_emptied": "The player's hand is empty: taking the morto or going out comes next.",
    "turn.wrong_phase": "This kind of event is not possible at this point of the hand.",
    # -- drawing
    "draw.wrong_card": "A draw takes the top card of the stock (or rejects exactly the card "
    "drawn); the recorded card is a different one.",
    "draw.redraw_not_allowed": "This preset has no first-turn redraw.",
    "draw.redraw_only_first": "Only the first card drawn in the hand's first turn may be "
    "rejected, once, right after drawing it.",
    "draw.redraw_from_stock": "After rejecting the first card, the player draws again from the "
    "stock, not the pile.",
    "stock.pile_can_be_taken": "Under must-use-top the hand ends at the stock floor only when "
    "the player to move cannot take the pile; here its top card can be used.",
    "stock.floor_reached": "The stock is down to the preset's floor: the player must take the "
    "pile, or the hand ends.",
    # -- the discard pile
    "pile.empty": "The discard pile is empty: there is nothing to take.",
    "pile.whole_pile": "Taking the pile means taking all of it, never part.",
    "pile.wrong_top": "The pile was taken naming a top card that is not the top card.",
    "pile.must_use_top": "In this preset the pile may be taken only if its top card can be used "
    "(melded with two cards from the hand or laid off), and it must be laid in that same turn: "
    "nothing laid before it may leave it unusable, and the turn cannot end without it.",
    # -- melds and lay-offs
    "meld.cards_not_in_hand": "Cards are melded or laid off from the player's own hand; the "
    "player does not hold these.",
    "meld.wrong_id": "New melds are numbered in order per side; this one has the wrong number.",
    "meld.too_few_cards": "A meld has at least three cards.",
    "meld.not_a_card": "The event holds a value that is not a card of the preset (a joker "
    "where the preset has none).",
    "meld.set_of_twos": "There is no set of twos: 2s alone, or with one joker as its wild, "
    "are not a meld.",
    "meld.too_many_wilds": "A meld holds at most one wild card (joker, or a two not standing "
    "in its own place in a run).",
    "meld.not_a_meld": "A meld is a set (one rank) or a run (one suit, consecutive ranks); these "
    "cards are neither.",
    "meld.duplicate_in_run": "A run holds each rank once (an ace at one end only, unless the "
    "preset allows ace to ace).",
    "meld.run_too_long": "A run cannot be longer than the ranks allow (13 cards, 14 from ace to "
    "ace).",
    "meld.run_wraps": "A run never turns the corner at the ace (Q-K-A-2 is not a run).",
    "meld.run_not_consecutive": "A run's ranks must be consecutive; one wild card may fill one "
    "gap.",
    "meld.second_set_of_rank": "This preset allows one set per rank per side; the side already "
    "has a set of this rank.",
    "layoff.no_such_meld": "Cards are laid off only on a meld of the player's own side that "
    "exists.",
    "layoff.no_cards": "A lay-off adds at least one card.",
    "discard.card_not_in_hand": "A player discards a card from their own hand; the player does "
    "not hold this one.",
    # -- vulnerability (opening minimum)
    "vulnerable.opening_too_low": "A vulnerable side's first melds in a hand must reach the "
    "opening minimum in card points in one turn.",
    "vulnerable.retract_not_needed": "Melds are taken back only by a vulnerable side whose "
    "opening this turn falls short of the minimum.",
    "vulnerable.retract_cards": "Taking back an opening returns exactly the cards laid this "
    "turn.",
    # -- the morto and going out
    "morto.not_available": "The side has no morto to take: the preset has none, or the side "
    "already took it.",
    "morto.needs_canastra": "In this preset a side takes its morto only once it has a "
    "canastra.",
    "morto.indirect_only": "In this preset the morto is taken only by discarding the last card, "
    "not by melding it.",
    "morto.wrong_kind": "Emptying the hand by melding takes the morto directly (the turn goes "
    "on); by discarding, indirectly (the turn ends). The log records the other kind.",
    "morto.wrong_count": "The morto taken has a different number of cards than recorded.",
    "go_out.needs_canastra": "Going out (emptying the hand for good) needs a canastra on the "
    "side's table.",
    "go_out.morto_first": "A side that has not taken its morto takes it when the hand empties; "
    "it cannot go out yet.",
    # -- scores
    "score.mismatch": "The recorded score differs from the score recomputed from the table "
    "(cards on the table, canastra bonuses, going out, relancinho, cards left in hand, morto).",
    # -- log integrity (LogFormatError.kind)
    "log.header": "The file does not start with a buraco-log header.",
    "log.damage": "A checksum does not match: bytes of the log were damaged or changed.",
    "log.chain": "The integrity chain of a sealed log is broken: a record, or one before it, "
    "was changed after it was written.",
    "log.head_changed": "The head digest published for the match (given to `audit --head`) is "
    "neither the log's nor its head after any earlier event: the events were changed, cut or "
    "replaced since it was published.",
    "log.seq": "A record is missing, duplicated, reordered or inserted: seqs do not follow.",
    "log.torn": "The log ends in an incomplete record (a crash during an append); the events "
    "before it are intact.",
    "log.decode": "A record's bytes do not decode as events.",
    "log.unknown": "A record is no event this buraco_log knows: an unknown event type or "
    "field (written by a newer buraco_log?), or a field of the wrong type (1.0 for an integer).",
    "log.version": "The log was written in a format version this buraco_log cannot read.",
    "log.limit": "A record exceeds the reader's size or nesting limits.",
    "log.format": "The bytes are not a valid log.",
    "log.jsonl": "A JSON Lines log has a line that is not a valid event or log line.",
    "log.unreadable": "The file could not be opened or read.",
    "log.empty": "The log holds no events yet (a match not started): there is no table to "
    "show.",
    "log.exists": "A new log is never written over an existing file.",
    "log.locked": "Another writer holds this log: a log has one writer at a time.",
    "log.closed": "The writer was closed, or refused further events after a failed write.",
    "log.io": "A write or fsync failed, or the open log was cut, appended to or replaced by a "
    "program that ignores the writer lock; the writer stops rather than risk a silent gap.",
    "log.validate": "Validating appends needs the rules engine, which is not available.",
    "log.filetype": "Not a regular file (a directory, FIFO, device or socket): never opened as "
    "a log, since reading it could block or never end.",
    "log.range": "An integer of the event lies outside the signed 64-bit range that every log "
    "promises.",
    "log.usage": "A log was asked for in a way no reader could read back (a binary log named "
    ".jsonl, which every reader takes as JSON Lines).",
    "pool.worker_died": "A worker process of a parallel run (`-j`) ended abruptly, most "
    "likely killed by the system for lack of memory. An input that kills a fresh process "
    "checking it alone too is named; otherwise no input is at fault. What was committed or "
    "written before stays.",
    "settings.invalid": "A site setting (an environment variable or the config file's [audit] "
    "table) has a value that is not allowed.",
    "log.sign": "A signing writer cannot sign: its match start does not record the signer's "
    "key id, or nothing has been written to sign yet.",
    # -- signatures and receipts (docs/signing.md)
    "sign.unsigned": "Signatures are required and the log holds none.",
    "sign.key_mismatch": "A signature is by another key or for another match than the match "
    "start records (or the start records no key id).",
    "sign.untrusted": "The log is signed by a key that is not among the trusted keys.",
    "sign.revoked": "The log is signed by a key on the revoked list.",
    "sign.key_window": "The match started outside the signing key's validity window.",
    "sign.invalid": "A signature does not verify with the trusted key: the signed head was "
    "changed, or the key did not make it.",
    "sign.tail_unsigned": "Signatures are required and events after the last signature are "
    "covered by none.",
    "sign.end_missing": "Signatures are required and the log ends without MatchEnded: a "
    "signed match must be complete.",
    "sign.duplicate": "Two or more signature records sign the same head: a writer records one "
    "per head, so the file holds records the site's writer did not write (copied or replayed).",
    "sign.receipt_changed": "The log's head at a receipt's seq differs from the head the site "
    "signed in the receipt: the log was changed after it was receipted.",
    "sign.receipt_cut": "The log ends before a receipt's seq: it was cut after the site signed "
    "that receipt, or it is a copy taken before that seq was written.",
    "sign.receipt_invalid": "A receipt is not a valid signature by a trusted key that is not "
    "revoked (a problem of the receipt, not a proof against the log).",
    "sign.receipt_other_match": "A receipt given for this log is for another match.",
    # -- a resumed match against the log it goes on from (audit --continues)
    "continuation.totals": "A resumed match carries the side totals the earlier log reached; "
    "the totals carried (or none, which is zero) differ from them.",
    "continuation.mid_hand": "Totals carry over between hands only; the earlier log stops in the "
    "middle of a hand.",
    "continuation.ended": "The earlier log's match is decided or over: there is nothing to "
    "resume.",
    "continuation.rules": "A resumed match keeps the rules it started with; the later log "
    "records other rules.",
    "continuation.players": "A resumed match keeps its players in their seats and sides; the "
    "later log seats others, or the same in other seats.",
    "continuation.dealer": "A resumed match deals on in turn: its first dealer is the seat the "
    "deal passes to after the earlier log's hands.",
    "continuation.earlier_log": "The earlier log cannot show where the match stopped: it has "
    "no match start, its bytes are damaged, or an event in it is illegal.",
    # -- the audit's own findings
    "audit.empty": "The log holds no events.",
    "audit.error": "The audit itself failed on this log (a defect in buraco_log, to report); "
    "the other logs of the batch are still audited.",
}


# The descriptions that speak of playing cards, as a table drawn in tiles says them (Burako,
# RULES.md §1: tile 1 = ace, 11/12/13 = J/Q/K, colour = suit; only the rendering differs).
TILE_RULES: dict[str, str] = {
    "event.invalid": "The event holds values the rules engine cannot read, such as a tile code "
    "that is no tile.",
    "deal.upcard": "Some presets turn one tile face up to start the pile and others do not; "
    "the deal does not follow its preset.",
    "deal.material": "Hands, mortos, the tile turned up and stock together must be exactly the "
    "preset's material (two sets of tiles plus its jokers).",
    "draw.wrong_card": "A draw takes the top tile of the stock (or rejects exactly the tile "
    "drawn); the recorded tile is a different one.",
    "draw.redraw_only_first": "Only the first tile drawn in the hand's first turn may be "
    "rejected, once, right after drawing it.",
    "draw.redraw_from_stock": "After rejecting the first tile, the player draws again from the "
    "stock, not the pile.",
    "stock.pile_can_be_taken": "Under must-use-top the hand ends at the stock floor only when "
    "the player to move cannot take the pile; here its top tile can be used.",
    "pile.wrong_top": "The pile was taken naming a top tile that is not the top tile.",
    "pile.must_use_top": "In this preset the pile may be taken only if its top tile can be used "
    "(melded with two tiles from the hand or laid off), and it must be laid in that same turn: "
    "nothing laid before it may leave it unusable, and the turn cannot end without it.",
    "meld.cards_not_in_hand": "Tiles are melded or laid off from the player's own hand; the "
    "player does not hold these.",
    "meld.too_few_cards": "A meld has at least three tiles.",
    "meld.not_a_card": "The event holds a value that is not a tile of the preset (a joker "
    "where the preset has none).",
    "meld.too_many_wilds": "A meld holds at most one wild tile (joker, or a 2 not standing in "
    "its own place in a run).",
    "meld.not_a_meld": "A meld is a set (one number) or a run (one colour, consecutive "
    "numbers); these tiles are neither.",
    "meld.duplicate_in_run": "A run holds each number once (a 1 at one end only, unless the "
    "preset allows 1 to 1).",
    "meld.run_too_long": "A run cannot be longer than the numbers allow (13 tiles, 14 from 1 "
    "to 1).",
    "meld.run_wraps": "A run never turns the corner from 13 back to 1 (12-13-1-2 is not a run).",
    "meld.run_not_consecutive": "A run's numbers must be consecutive; one wild tile may fill "
    "one gap.",
    "meld.second_set_of_rank": "This preset allows one set per number per side; the side "
    "already has a set of this number.",
    "layoff.no_such_meld": "Tiles are laid off only on a meld of the player's own side that "
    "exists.",
    "layoff.no_cards": "A lay-off adds at least one tile.",
    "discard.card_not_in_hand": "A player discards a tile from their own hand; the player does "
    "not hold this one.",
    "vulnerable.opening_too_low": "A vulnerable side's first melds in a hand must reach the "
    "opening minimum in tile points in one turn.",
    "vulnerable.retract_cards": "Taking back an opening returns exactly the tiles laid this "
    "turn.",
    "morto.indirect_only": "In this preset the morto is taken only by discarding the last "
    "tile, not by melding it.",
    "morto.wrong_count": "The morto taken has a different number of tiles than recorded.",
    "score.mismatch": "The recorded score differs from the score recomputed from the table "
    "(tiles on the table, canastra bonuses, going out, tiles left in hand, morto).",
}


def describe(rule: str, tiles: bool = False) -> str:
    """The plain-language text of ``rule``; unknown ids say so rather than fail. ``tiles``: as
    a table drawn in tiles says it (Burako)."""
    if tiles and rule in TILE_RULES:
        return TILE_RULES[rule]
    return RULES.get(rule, f"(no description for rule id {rule!r})")
