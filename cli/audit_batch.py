"""``audit`` of many logs (a directory, a season's folder): each verdict printed as it is ready.

The batch was audited whole before its first line: a referee auditing a season of 100,000
logs saw nothing (no line, and off a terminal no progress) until the last log was done, a
program reading ``-f json`` could not start, and every verdict was held to the end (memory
grew with the number of logs). Here the verdicts come in the order of the files, one at a
time (:func:`buraco_log.audit.audit_iter`), each written and flushed, then dropped: what the
summary and the notes between logs need is counted as they pass (:class:`Tally`,
:class:`SameMatch`). A Ctrl-C part way leaves whole lines (a whole verdict each) behind it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import msgspec

from buraco_log import audit, signalmask
from buraco_log.cards import counted
from cli import streamout
from cli.common import answer_open, json_text

SAME_MATCH = "the match is also in "
"""How the note of a second log (another file) of a match already audited begins."""
SAME_FILE = "the same file as "
AGAIN = "the process first auditing this log died"  # audit_many's note of a log done again
_ORDER = ("integrity", "provenance", "legality", "scoring", "signing")


class SameMatch:
    """Says of a log whose match an earlier log of the batch holds too (a copy, a version of
    it in dispute, a match resumed in a new log) which log that is: a directory of copies
    read as that many matches, unsaid. Keeps only each match's first (path, head, events)."""

    def __init__(self, aliases: dict[str, str]) -> None:
        self.aliases = aliases
        self.first: dict[str, tuple[str, str | None, int]] = {}

    def __call__(self, v: audit.Verdict) -> audit.Verdict:
        if v.path in self.aliases:  # a link to one file: said by the alias note
            return msgspec.structs.replace(v, notes=(
                *v.notes, f"{SAME_FILE}{self.aliases[v.path]} (a link): one match, audited "
                "under both names"))
        if v.match_id is None:
            return v
        seen = self.first.setdefault(v.match_id, (v.path, v.integrity.head, v.events))
        if seen[0] == v.path:
            return v
        same = v.integrity.head == seen[1] and v.events == seen[2]
        how = ("an identical copy: the same events and head digest" if same else
               "another log of the same match: `buraco-log diff` compares them")
        return msgspec.structs.replace(v, notes=(*v.notes, f"{SAME_MATCH}{seen[0]} ({how})"))


class Tally:
    """The batch's summary line, counted a verdict at a time (no verdict is kept)."""

    def __init__(self, not_a_log: Callable[[audit.Integrity], bool],
                 unsigned: Callable[[audit.Verdict], bool]) -> None:
        self._not_a_log, self._unsigned = not_a_log, unsigned
        self.logs = self.bad = self.waiting = self.unchecked = self.unsigned = 0
        self.linked = self.again = self.unread = self.no_log = self.died = 0
        self.sections: dict[str, int] = {}

    def add(self, v: audit.Verdict) -> None:
        self.logs += 1
        self.waiting += v.not_started
        self.linked += any(n.startswith(SAME_FILE) for n in v.notes)
        self.again += any(n.startswith(SAME_MATCH) for n in v.notes)
        if v.ok:
            self.unchecked += bool(v.provenance.unchecked)
            self.unsigned += self._unsigned(v)
            return
        self.bad += 1
        for s in {f.section for f in v.findings}:
            self.sections[s] = self.sections.get(s, 0) + 1
        # a file the auditor may not read (no permission, a read error) is no proof of a file
        # that is not a log: counted apart, with its rule, as its integrity line says it
        if self._not_a_log(v.integrity):
            if v.integrity.kind == "unreadable":
                self.unread += 1
            else:
                self.no_log += 1
        self.died += any(f.rule == "pool.worker_died" for f in v.findings)

    def line(self) -> str:
        detail = ", ".join(f"{k} {self.sections[k]}" for k in _ORDER if k in self.sections)
        no_log, unread, died = self.no_log, self.unread, self.died
        clean = self.logs - self.bad - self.waiting
        caveats = ([f"{self.unchecked} with deals not checked"] if self.unchecked else []) + (
            [f"{self.unsigned} with events no signature covers"] if self.unsigned else [])
        return (f"audited {counted(self.logs, 'log')}: {clean} clean"
                + (f" ({', '.join(caveats)}: see their notes)" if caveats else "")
                # before the findings: after them it read as "of which 1 not started"
                + (f", {self.waiting} not started" if self.waiting else "")
                + f", {self.bad} with findings" + (f" ({detail})" if detail else "")
                + (f", of which {no_log} {'is not a log' if no_log == 1 else 'are not logs'}"
                   if no_log else "")
                + (f"{' and' if no_log else ', of which'} {unread} "
                   f"{'is' if unread == 1 else 'are'} unreadable [log.unreadable]"
                   if unread else "")
                + (f", {'of which ' if not (no_log or unread) else ''}{died} not checked (the "
                   f"process checking {'it' if died == 1 else 'them'} died)" if died else "")
                + (f"; {counted(self.linked, 'log')} the same file as another (see their "
                   "notes)" if self.linked else "")
                + (f"; {counted(self.again, 'log')} of a match an earlier log holds too (see "
                   "their notes)" if self.again else ""))


class JsonList:
    """A JSON list written an item at a time: the same bytes as ``emit_json(items)``, readable
    as the items come. An item is written (and flushed) when the next one comes, so that its
    comma is on its own last line. A failure or an interrupt (Ctrl-C, SIGTERM) part way ends
    the list with the error's object as its last item (:func:`cli.common.answer_open`): it
    was left open after the last whole item, and no JSON reader took the batch's output."""

    def __init__(self) -> None:
        self.pending: str | None = None
        self.closed = False

    def add(self, item: object) -> None:
        # a newline inside a string is escaped: each one here ends a line of the item
        text = "  " + json_text(item).replace("\n", "\n  ")
        if self.pending is None:
            answer_open(self._cut)
        with signalmask.held():  # what is queued and what is held agree, an interrupt or not
            streamout.put("[\n" if self.pending is None else self.pending + ",\n")
            self.pending = text
        streamout.drain()

    def close(self) -> None:
        with signalmask.held():
            streamout.put("[]\n" if self.pending is None else self.pending + "\n]\n")
            self.closed = True
        streamout.drain()
        answer_open(None)

    def _cut(self, error: dict[str, Any]) -> None:
        """End the list with ``{"error": ...}`` after the items written (one of them held),
        waiting a few seconds at most for a reader that stopped reading. A list already
        closed whole is only sent whole."""
        if not self.closed:
            with signalmask.held():
                streamout.put("[\n" if self.pending is None else self.pending + ",\n")
                streamout.put("  " + json_text({"error": error}).replace("\n", "\n  ")
                              + "\n]\n")
                self.closed = True
        streamout.drain(wait=streamout.ENDING_WAIT)


def stream(verdicts: Iterable[audit.Verdict], *, as_json: bool, quiet: bool,
           show: Callable[[audit.Verdict], None],
           tally: Tally, on_each: Callable[[audit.Verdict], None] | None = None) -> None:
    """Write each verdict as it comes (table: its lines, unless ``quiet`` and OK; JSON: an
    item of one list), flushed, and count it in ``tally``."""
    out = JsonList() if as_json else None
    for v in verdicts:
        tally.add(v)
        if on_each is not None:
            on_each(v)
        if out is not None:
            out.add(v)
        elif not (quiet and v.ok):
            show(v)  # its lines, each echoed (and flushed)
    if out is not None:
        out.close()


def passed_note(passed: list[str]) -> str:
    """The note of the files of the directories that are not logs (each file given is
    counted: audited, or passed over here), the first three named."""
    named = ", ".join(passed[:3]) + (f" and {len(passed) - 3} more" if len(passed) > 3 else "")
    return (f"buraco-log: note: {counted(len(passed), 'file')} passed over, not logs (no .blog "
            f"or .jsonl name, no log header): {named}")
