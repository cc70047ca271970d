"""The keys of each command's ``--format json`` answer, said once: ``cli.docgen`` prints them
in docs/cli.md, and a test holds every answer to them (the same key set on every path: a key
that does not apply is there, null or empty). A program piping ``-f json`` into jq reads
this, not the code. The archive's answers (`ingest`, `query`, `report`, `compact`) are told in
docs/archive.md, `review`'s in docs/review.md.
"""

from __future__ import annotations

from typing import Final

ERROR: Final = {
    "code": "what failed, stable: `usage`, `log.format`, `log.io`, `illegal`, `replay`, "
            "`sign`, `archive`, `error`, ...",
    "message": "the error in words (the line on stderr, which may end with the rule too)",
    "exit_status": "the exit status (a number), the same as the process's",
    "path": "(when known) the file it is about",
    "seq": "(when known) the event's seq",
    "offset": "(when known) the byte offset of the damage",
    "line": "(when known) the line of a JSON Lines log",
    "rule": "(when known) the rule broken (`log.torn`, `discard.card_not_in_hand`, ...)",
    "kind": "(when known) the kind of damage (`torn`, `damage`, `header`, ...)",
}
"""``{"error": {...}}``: the answer of every command that fails (only the first three keys
are always there)."""

CUT_SHORT: Final = (
    "An answer streamed an item at a time (`audit` and `verify` of several logs, `query -f "
    "json`, a list; `query -f jsonl`, a line a row) that a failure or an interrupt cuts short "
    "ends with this object as its last item, `{\"error\": {...}}` (JSON Lines: its last line, "
    "the object on one line), after the whole items written before it: the list still parses, "
    "and its last item is no verdict or row. Its `exit_status` says why: `130` Ctrl-C, `143` "
    "SIGTERM, `129` SIGHUP, `1` a failure. `query -f jsonl` writes that line for any failure, "
    "before its first row too (an empty answer is a query that found no row); `-f csv` has no "
    "such row: a query that fails before its first row writes nothing on stdout (not even the "
    "header), and any failure is the line on stderr and exit 1. An answer that ends without "
    "the object is whole.")
"""How a streamed answer cut short ends (docs/cli.md prints it under the error object)."""

_TABLE: Final = {
    "match_id": "the match's id",
    "rules": "the rules' name",
    "seq": "the last event applied",
    "phase": "`draw`, `play`, `between` (hands), `over`, ...",
    "hand": "the hand (from 0)",
    "dealer": "the dealer's seat",
    "turn": "the seat to move",
    "turn_name": "its player's name",
    "viewer": "the seat whose view this is (`--seat`); null: the referee's (every card)",
    "seats": "per seat: `seat`, `name`, `side`, `count` and `cards` (null where hidden)",
    "sides": "per side: `side`, `seats`, `melds`, `opened`, `morto`, `morto_state`, "
             "`morto_taken`, `vulnerable`, `table_points`, `total`",
    "stock": "cards (tiles) left in the stock",
    "pile": "the discard pile, bottom first (the last is the top card)",
    "hand_scores": "the recomputed score of each side, per ended hand",
    "totals": "the recomputed match total of each side",
    "recent": "the last events: `seq`, `event` (its class), `seat`, `text` (in words)",
}

KEYS: Final[dict[str, dict[str, str]]] = {
    "show": {
        "path": "the log",
        "match_id": "the match's id (null: no event read)",
        "preset": "the preset its rules are told against (null: rules unknown)",
        "nearest": "the preset the overrides are told against when the rules' name is no "
                   "preset's, else null",
        "overrides": "house-rule knobs that differ from the preset, by name",
        "players": "per seat: `seat`, `name`, `side`, `id`",
        "sides": "the number of sides",
        "events": "events read",
        "hands": "per hand: `hand`, `dealer`, `reason` it ended, `went_out` (seat) and "
                 "`went_out_name`, `scores`, `recorded`, `cumulative`, `canastras`, `turns`, "
                 "`ended`",
        "totals": "the recomputed match total of each side",
        "canastras": "per side, the match's canastras counted by class (`clean`, `dirty`, "
                     "...; a class with none is left out)",
        "went_out": "player name -> hands that player went out in",
        "winner": "the winning side (null: no winner yet)",
        "complete": "whether the match ended (MatchEnded read)",
        "first_illegal": "the first illegal event in words (`seq N [rule] ...`), or null",
        "integrity": "the integrity check (`status`, `format`, `head`, `kind`, `offset`, ...)",
        "not_started": "a match that never received an event (no finding)",
        "score_mismatches": "recorded scores that differ from the recomputed ones: `seq`, "
                            "`rule`, `message`",
        "melds": "the melds on the table at the last event read (`hand`, `seq`, `sides`), "
                 "or null",
        "stock_floor": "the rules' stock floor, or null (rules unknown)",
    },
    "replay": {**_TABLE,
               "findings": "what makes the exit status 1 where the end is shown (an illegal "
                           "event, a wrong recorded score): `seq`, `rule`, `message`; else []"},
    "explain": {
        "path": "the log",
        "seq": "the event explained",
        "event": "the event in words",
        "data": "the event as its JSON Lines object",
        "legal": "whether the rules allow it",
        "rule": "the rule it breaks (null: legal)",
        "description": "that rule in plain language (null: legal)",
        "message": "what happened, naming seat and cards (null: legal)",
        "facts": "the facts of the table that decided it",
        "before": "the table just before it, as `replay` gives it",
        "note": "e.g. an earlier illegal event, explained instead; or null",
        "findings": "what the audit finds against the event besides its legality (a changed "
                    "deal), as `audit`'s findings",
    },
    "moves": {
        "seq": "the seq after which the moves are listed",
        "phase": "the phase then",
        "seat": "the seat to move (null: nobody)",
        "name": "its player's name (null: nobody)",
        "count": "legal moves in all",
        "pile": "whether the pile may be taken, and why (`may_take`, `reason`, `count`, "
                "`top`, `pickup`, `uses`); null outside the draw phase",
        "groups": "the moves by kind: `group`, `heading`, `moves` (each `event`, `text`)",
    },
    "audit": {
        "path": "the log",
        "match_id": "the match's id (null: none read)",
        "rules": "the rules' name (null: none read)",
        "players": "the players' names, by seat",
        "events": "events read",
        "ok": "no findings (exit status 0)",
        "findings": "`section`, `rule`, `seq`, `offset`, `message`, in one order",
        "integrity": "bytes and chain: `status`, `format`, `head`, `kind`, `offset`, ...",
        "provenance": "deals re-derived from their seeds: `status`, `deals`, `findings`, ...",
        "legality": "`events_checked`, `complete`, `first_illegal` (null: none)",
        "scoring": "`hands`, `totals_recorded`, `totals_recomputed`, `ok` (and "
                   "`after_illegal` when an illegal event stops the recount)",
        "notes": "what an OK verdict does not prove",
        "not_started": "a match that never received an event (no finding)",
        "signing": "signatures: `signatures`, `verified`, `key_id`, `signers`, ...",
    },
    "verify": {
        "path": "the log",
        "version": "its format version",
        "events": "events read",
        "segments": "records read",
        "valid_bytes": "bytes that are whole and intact",
        "head": "the head digest of the intact part",
        "sealed": "whether the integrity chain is there",
        "signatures": "signature records read",
        "not_started": "a match that never received an event",
        "torn": "a torn tail (`offset`, `size`, `seq`, `reason`, `journal`), or null",
    },
    "diff": {
        "a": "the first copy", "b": "the other copy",
        "events_a": "events in A", "events_b": "events in B",
        "identical": "the same events and the same signature records",
        "diverge_seq": "the first seq where they differ (or where the shorter ends), or null",
        "event_a": "that event of A (its JSON Lines object), null past A's end",
        "event_b": "that event of B, null past B's end",
        "words_a": "A's event in words", "words_b": "B's event in words",
        "differences": "what differs there, field by field",
        "prefix": "`a` or `b`: the copy that is a strict prefix of the other, or null",
        "head_a": "A's head digest", "head_b": "B's head digest",
        "heads_equal": "whether the head digests are equal",
        "integrity_a": "A's integrity status", "integrity_b": "B's integrity status",
        "signatures_a": "signature records in A", "signatures_b": "signature records in B",
        "signatures_equal": "whether both hold the same signature records",
        "signatures_differ_at": "the first head whose signature records differ, or null",
        "signatures_difference": "how they differ there, or null",
        "not_started_a": "A is a match not started", "not_started_b": "B is one",
        "damage_a": "where damaged A stops being readable (`byte N`, `line N`), or null",
        "damage_b": "the same of B",
        "same_file": "A and B name one file (a link)",
    },
    "convert": {
        "path": "the file written (`-` for standard output)",
        "form": "`jsonl` or `binary`",
        "events": "events written",
        "head": "the head digest of what was written",
    },
    "seal": {
        "path": "the log",
        "changed": "whether the file was rewritten",
        "sealed": "whether it is sealed now",
        "events": "its events",
        "head": "its head digest",
    },
    "repair": {
        "path": "the log",
        "repaired": "whether bytes were cut",
        "events_kept": "the events left",
        "reason": "why the tail is torn, or null (nothing to repair)",
        "would_cut_offset": "`--dry-run`: the byte the cut would start at, else null",
        "would_cut_bytes": "`--dry-run`: the bytes it would cut, else null",
        "cut_offset": "the byte the cut started at, null when none was made",
        "cut_bytes": "the bytes cut, null when none",
        "backup": "the file holding the bytes cut (`--backup`), or null",
    },
    "fold": {
        "directory": "the recorder's directory",
        "journals": "the journals kept aside (`*.unfolded`) that were read",
        "written_back": "records of journals a stopped recorder left, written back first",
        "logs": "per log the journals name: `path`, `action` (`appended`, `created`, `held`: "
                "nothing missing, `refused`), `events` written (or to write, `--dry-run`), "
                "`first_seq`, `reason` and `seq` of a refusal (else null)",
        "removed": "the journals folded and removed",
        "kept": "the journals kept (a log refused, a record damaged, or `--dry-run`)",
        "damaged": "records of the journals that could not be read",
        "dry_run": "whether nothing was changed (`--dry-run`)",
    },
    "keys new": {
        "key_id": "the key's id (16 hex digits)",
        "private": "NAME.key's path",
        "public": "NAME.pub's path",
        "encrypted": "whether the private key is encrypted with a passphrase",
        "made_directory": "the directory made for the pair (full path), or null",
        "removed_leftovers": "temporary files an interrupted `keys new` left, removed",
    },
    "simulate": {
        "out": "the directory the logs went to",
        "rules": "the rules' name", "players": "players a match",
        "bots": "the bot of each seat", "matches": "matches written",
        "events": "events in all", "hands": "hands in all",
        "seconds": "how long it took", "events_per_second": "events a second",
        "matches_per_second": "matches a second",
        "wins_by_bot": "bot name -> matches its side won",
        "wins_by_side": "side -> matches won",
    },
    "demo": {
        "log": "the log written", "rules": "its rules' name", "players": "its players",
        "seed": "the seed it was simulated from", "events": "its events",
        "summary": "what `show -f json` gives of it",
        "audit": "what `audit -f json` gives of it",
        "next": "commands to try on it",
    },
}
"""Command -> key -> what it holds (a list answer, `audit` or `verify` of several logs, holds
one such object per log; `verify`'s entry of a file that is no log is ``{"path", "error"}``)."""
