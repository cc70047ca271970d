"""One self-contained HTML page for a match: template, styles, script and data inline.

The template is ``template/page.html`` (with ``viewer.css`` and ``viewer.js``), shipped as
package data. The data is one JSON object in a ``<script type="application/json">`` element;
its ``<`` characters are written as ``\\u003c`` so no text of a log can close the element.
"""

from __future__ import annotations

import base64
import hashlib
import html
import re
from collections.abc import Mapping, Sequence
from importlib import resources
from typing import Any, NoReturn

import msgspec

from buraco_log.errors import PositionError, ReplayError
from buraco_log.events import AnyEvent, MatchStarted, TotalsCarried
from buraco_log.log import head_digest
from buraco_log.ruleids import describe
from buraco_log.safetext import UNSAFE, terminal_safe
from buraco_log.state import HandResult
from buraco_log.timeline import NO_RULES_NAME, PastIllegalError, Timeline
from buraco_log.view.frames import ID_SHOWN, SNAPSHOT_EVERY, Frames, cut, short_names

PAGE_VERSION = 2
"""Version of the page's data layout (``data.v``), for tools that read pages back. Version 2
left out what the page rebuilds itself (a 100,000-event page held 3.4 MB of it): each diff's
``s`` (its own index), each move line's ``seq N: `` and the event tags (``hands`` says
which lines start a hand)."""

_MARK_CSS = "/*@CSS@*/"
_MARK_JS = "/*@JS@*/"
_MARK_DATA = "@DATA@"
_MARK_TITLE = "@TITLE@"
_MARK_CHART = "@CHART@"
_MARK_SCRIPTS = "@SCRIPTS@"
_MARKS = re.compile("|".join(re.escape(m) for m in (_MARK_TITLE, _MARK_CSS, _MARK_JS, _MARK_CHART,
                                                      _MARK_DATA, _MARK_SCRIPTS)))


class Banner(msgspec.Struct, frozen=True):
    """Why the page stops short or what it must warn about: an illegal event, damaged bytes,
    or a recorded score that differs from the recomputed one."""

    kind: str  # "illegal", "damaged", "score"
    text: str
    seq: int | None = None
    rule: str | None = None
    offset: int | None = None


_MARK_KIND = re.compile(r"[a-z][a-z0-9-]{0,31}")


class Mark(msgspec.Struct, frozen=True):
    """A note pinned to one event of the page, for tools that judge the moves (a review).

    The move list flags the event's line with the class ``mk-<kind>``, and at that seq the
    page shows ``text`` under the event, with ``cards`` (card codes) drawn beside it, for
    example the better move a review found. Marks are drawn as given: on a seat's page they
    must name only cards that seat could see."""

    kind: str  # a CSS-safe word: "mistake", "best", "note", ...
    text: str
    cards: tuple[int, ...] = ()


class LogHead(msgspec.Struct, frozen=True):
    """Which log a page is of: the head digest ``show`` and ``verify`` print for it, over its
    first ``events`` events (those read intact); ``""`` on a seat's page. The page prints it
    under its heading: a sheet printed in a dispute named the match id alone, which two
    copies of a log share."""

    digest: str
    events: int


def _template(name: str) -> str:
    return (resources.files("buraco_log.view") / "template" / name).read_text("utf-8")


def score_sheet(results: Sequence[HandResult], carried: Sequence[int] = ()
                ) -> list[dict[str, Any]]:
    """Each ended hand, per side: the score lines of RULES.md §9 and the running total, which
    starts from the ``carried`` totals of a match resumed from them (``TotalsCarried``)."""
    running: list[int] = list(carried)
    rows: list[dict[str, Any]] = []
    for r in results:
        if not running:
            running = [0] * len(r.scores)
        sides = []
        for s in r.scores:
            running[s.side] += s.total
            sides.append({
                "table": s.table_points, "canastras": s.canastras, "bonus": s.canastra_bonus,
                "out": s.going_out, "relancinho": s.relancinho, "morto": -s.morto_penalty,
                "left": -s.hand_penalty, "total": s.total, "running": running[s.side],
            })
        rows.append({"hand": r.hand, "end": r.end_seq, "reason": r.reason,
                     "went_out": r.went_out, "sides": sides})
    return rows


_SIDE_COLOURS = ("#1f6fb2", "#c2410c", "#15803d", "#7e22ce", "#a16207", "#0f766e")
# Each side's line has its own dashes too, and a key names them: told apart by colour alone
# (and named nowhere), a red-green colour-blind reader could not tell side 1 (orange) from
# side 2 (green).
_SIDE_DASHES = ("", "7 3", "2 3", "9 3 2 3", "4 4", "1 2")


def score_chart(sheet: Sequence[dict[str, Any]], n_sides: int) -> str:
    """The running score over hands as an inline SVG line chart (one line per side).

    Every point carries ``data-end``, the seq its hand ended at; the page greys the hands still
    to come with the ``veil`` rectangle, drawn last."""
    if not sheet or n_sides == 0:
        return '<p class="empty">No hand has ended yet.</p>'
    w, h, pad = 320, 160, 28
    start = [s["running"] - s["total"] for s in sheet[0]["sides"]]  # carried totals, or 0
    values = [0, *start, *(s["running"] for row in sheet for s in row["sides"])]
    lo, hi = min(values), max(values)
    span = (hi - lo) or 1
    n = len(sheet)

    def x(i: int) -> float:
        return round(pad + (w - 2 * pad) * i / max(1, n), 1)

    def y(v: int) -> float:
        return float(round(h - pad - (h - 2 * pad) * (v - lo) / span, 1))

    parts = [f'<svg class="chart" viewBox="0 0 {w} {h}" role="img" '
             f'aria-label="Running score over hands">',
             f'<line class="axis" x1="{pad}" y1="{y(0)}" x2="{w - pad}" y2="{y(0)}"/>',
             f'<text x="2" y="{y(hi) + 4}">{hi}</text><text x="2" y="{y(lo) + 4}">{lo}</text>']
    for side in range(n_sides):
        colour = _SIDE_COLOURS[side % len(_SIDE_COLOURS)]
        pts = [(x(0), y(start[side]), -1)] + [
            (x(i + 1), y(row["sides"][side]["running"]), row["end"])
            for i, row in enumerate(sheet)]
        path = " ".join(f"{px},{py}" for px, py, _ in pts)
        dash = _SIDE_DASHES[side % len(_SIDE_DASHES)]
        stroke = f'stroke="{colour}" stroke-width="2"' + (
            f' stroke-dasharray="{dash}"' if dash else "")
        parts.append(f'<polyline fill="none" {stroke} points="{path}"/>')
        # the key, above the lines (the hands to come are veiled; the key tells nothing of them)
        kx, ky = pad + 72 * (side % 4), 14 + 14 * (side // 4)
        parts.append(f'<g class="key"><line x1="{kx}" y1="{ky - 4}" x2="{kx + 18}" '
                     f'y2="{ky - 4}" {stroke}/><text x="{kx + 22}" y="{ky}">side {side}'
                     "</text></g>")
        parts.extend(f'<circle data-end="{end}" cx="{px}" cy="{py}" r="3.5" fill="{colour}"/>'
                     for px, py, end in pts[1:])
    # the hands still to come at the page's seq: the script sets its x and width
    top = 14 * ((n_sides + 3) // 4) + 6  # under the key
    parts.append(f'<rect class="veil" x="{w - pad}" y="{top}" width="0" height="{h - top}" '
                 'fill="#fff" fill-opacity=".8" pointer-events="none"/>')
    parts.append("</svg>")
    return "".join(parts)


def json_text(data: Any) -> str:
    """``data`` as JSON to put in a ``<script>`` element of the page: ``<`` written as
    ``\\u003c`` (no text of a log can close the element), and every control, bidi and
    line-separator character as its ``\\u`` escape (msgspec writes DEL, C1 controls and bidi
    overrides as they are: ``view -o -`` sent them to the terminal). The data reads back the
    same."""
    blob = msgspec.json.encode(data).replace(b"<", b"\\u003c").decode("utf-8")
    return UNSAFE.sub(lambda m: f"\\u{ord(m[0]):04x}", blob)


def page_data(tl: Timeline, *, seat: int | None = None, at: int | None = None,
              banners: Sequence[Banner] = (), every: int = SNAPSHOT_EVERY,
              marks: Mapping[int, Sequence[Mark]] | None = None,
              head: LogHead | None = None, signing: str | None = None) -> dict[str, Any]:
    """Everything the page draws, as one JSON-ready dict. ``marks``: see :class:`Mark`;
    ``head``: see :class:`LogHead` (None: the page names no digest); ``signing``: the line
    on the log's signatures (:mod:`buraco_log.view.signature`; None: the page says none)."""
    frames = Frames(tl, seat, every=every)
    rules = tl.rules
    n_sides = max((p for p in (tl.final.sides or ())), default=-1) + 1
    carried = next((ev.totals for ev in tl.events if isinstance(ev, TotalsCarried)), ())
    sheet = score_sheet(tl.final.results, carried)
    last = tl.last_seq
    start = last if at is None else max(0, min(at, last))
    moves = _without_prefixes(_safe_lines(frames.moves))
    return {
        "v": PAGE_VERSION,
        # an id of blanks alone (a tab, spaces) is none: the page says "with no id", as replay
        "match": terminal_safe(tl.final.match_id) if tl.final.match_id.strip() else "",
        "rules": terminal_safe(rules.name) if rules is not None else "",
        "tiles": rules is not None and rules.rendering == "tiles",
        "viewer": seat,
        "players": [{"name": p.name, "side": tl.final.sides[i] if tl.final.sides else 0}
                    for i, p in enumerate(tl.players)],
        "sides": n_sides,
        "every": frames.every,
        "snaps": frames.snaps,
        "diffs": _without_seqs(frames.diffs),
        "moves": moves,
        "parts": _start_parts(tl, moves),
        "hands": frames.hand_starts,
        "sheet": sheet,
        "start": start,
        "banners": [msgspec.to_builtins(msgspec.structs.replace(b, text=terminal_safe(b.text)))
                    for b in banners],
        "marks": _marks(marks or {}, last),
        # added within layout 2: a page without it names no digest
        "head": msgspec.to_builtins(head) if head is not None else None,
        # added within layout 2: whether the log is signed, said beside its digest
        "signing": terminal_safe(signing) if signing is not None else None,
    }


def _without_seqs(diffs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The diffs without the seq each holds, its own index (the page sets it): a million
    bytes of a 100,000-event page. A diff whose ``s`` is not its index keeps it."""
    return [d if d.get("s") != i else {k: v for k, v in d.items() if k != "s"}
            for i, d in enumerate(diffs)]


def _without_prefixes(lines: list[str]) -> list[str]:
    """The move lines without their ``seq N: ``, which the page writes back from the line's
    index. Every line has it (:func:`buraco_log.timeline.describe_event`); one that did not
    would be shown with it all the same."""
    out = []
    for i, line in enumerate(lines):
        head = f"seq {i}: "
        out.append(line[len(head):] if line.startswith(head) else line)
    return out


def _start_parts(tl: Timeline, moves: Sequence[str]) -> dict[str, list[str]]:
    """The match start's line in pieces, the odd ones the match id, the rules' name and each
    player's name, which the page isolates (``<bdi>``): two right-to-left names side by side
    ("אבי, דנה") were drawn as one right-to-left run, the second seat's first. Only a line the
    pieces make exactly is given them; any other is drawn as the plain text it is."""
    out: dict[str, list[str]] = {}
    # a player with no name is its seat, a match with no id says so (describe_event)
    names = [terminal_safe(p.name) if p.name.strip() else f"seat {i}"
             for i, p in enumerate(short_names(tl.players))]
    for ev in tl.events:
        if not isinstance(ev, MatchStarted) or not 0 <= ev.seq < len(moves):
            continue
        parts = (["match ", terminal_safe(cut(ev.match_id, ID_SHOWN)), " started ("]
                 if ev.match_id.strip() else ["match with no id", "", " started ("])
        parts += [terminal_safe(cut(ev.rules.name, ID_SHOWN)) if ev.rules.name.strip()
                  else NO_RULES_NAME, "; "]
        for i, n in enumerate(names):
            parts += [n, ", "] if i < len(names) - 1 else [n, ")"]
        if not names:
            parts[-1] += ")"
        if "".join(parts) == moves[ev.seq]:
            out[str(ev.seq)] = parts
    return out


def _safe_lines(lines: list[str]) -> list[str]:
    """:func:`terminal_safe` of each line; one search of them all first, as a control or bidi
    character is rare (100,000 searches one by one were a twentieth of a long page's time)."""
    if UNSAFE.search("".join(lines)) is None:
        return lines
    return [terminal_safe(m) for m in lines]


def _marks(marks: Mapping[int, Sequence[Mark]], last: int) -> dict[str, list[Any]]:
    out: dict[str, list[Any]] = {}
    for seq, ms in sorted(marks.items()):
        for m in ms:
            if not _MARK_KIND.fullmatch(m.kind):
                raise ValueError(f"mark kind {m.kind!r}: a lower-case word (a-z, 0-9, -)")
            if not all(isinstance(c, int) and 0 <= c <= 64 for c in m.cards):
                raise ValueError(f"mark at seq {seq}: cards are card codes 0-64")
        if 0 <= seq <= last and ms:
            out[str(seq)] = [
                msgspec.to_builtins(msgspec.structs.replace(m, text=terminal_safe(m.text)))
                for m in ms]
    return out


def script_hash(text: str) -> str:
    """The Content-Security-Policy source that lets the inline ``<script>`` holding exactly
    ``text`` run (``'sha256-...'``)."""
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return f"'sha256-{base64.b64encode(digest).decode('ascii')}'"


def _script_sources() -> str:
    """The page's ``script-src``: the hashes of the scripts the package ships, as the page
    holds them: the viewer's (``page.html``) and the review panel's
    (:func:`buraco_log.review.review_page` adds it as ``<script>\\n{js}</script>``). Not
    ``'unsafe-inline'``, which also runs inline handlers (``onerror=``) and any ``<script>``
    element a text of the log could ever make."""
    return " ".join((script_hash(f"\n{_template('viewer.js')}\n"),
                     script_hash(f"\n{_template('review.js')}")))


def _isolated_title(text: str) -> str:
    """``text`` escaped for the page's ``<title>``, between a first-strong isolate and its
    pop (the title is plain text: no ``<bdi>`` there). ``text`` holds no bidi control of its
    own (:func:`terminal_safe`), so nothing in it can close the isolate."""
    return f"&#x2068;{html.escape(text)}&#x2069;"


def render(data: dict[str, Any], chart: str = "") -> str:
    """The HTML page for ``data`` (see :func:`page_data`)."""
    blob = json_text(data)
    who = "referee" if data["viewer"] is None else f"seat {data['viewer']}"
    # The id and the rules' name each isolated (FSI ... PDI, written as references so the
    # file's bytes hold no bidi control): a right-to-left id made the tab's title a
    # right-to-left line, "buraco-log" first and the id last.
    # an empty id made the title "match (classic, seat 1)", as if "match" were the id
    match = (_isolated_title(cut(data["match"], ID_SHOWN)) if data["match"].strip()
             else "match with no id")
    # a rules name of blanks made the title "m (⁨ ⁩, seat 1)" (none at all is "")
    rules = data["rules"] if data["rules"].strip() or not data["rules"] else NO_RULES_NAME
    title = f"{match} ({_isolated_title(cut(rules, ID_SHOWN))}, {who}) - buraco-log"
    parts = {_MARK_TITLE: title, _MARK_CSS: _template("viewer.css"),
             _MARK_JS: _template("viewer.js"), _MARK_CHART: chart, _MARK_DATA: blob,
             _MARK_SCRIPTS: _script_sources()}
    # One pass over the template: no text put in is read again for a marker (the title went
    # in first, so a match id "/*@JS@*/" took the page's script into its <title>)
    return _MARKS.sub(lambda m: parts[m[0]], _template("page.html"))


class Page(msgspec.Struct, frozen=True):
    """A written page: its HTML, its banners, and the seq it opens at."""

    html: str
    banners: tuple[Banner, ...]
    start: int


def build_page(events: Sequence[AnyEvent], *, seat: int | None = None, at: int | None = None,
               banners: Sequence[Banner] = (),
               marks: Mapping[int, Sequence[Mark]] | None = None,
               head: LogHead | None = None, signing: str | None = None) -> Page:
    """The replay page of ``events``: the referee's view, or ``seat``'s, opened at ``at``.

    An illegal event adds a banner and opens the page at the last legal table (unless ``at``
    says otherwise); ``banners`` carries what the caller knows (damaged bytes). A first event
    that is illegal leaves no table to show: :class:`ReplayError`.

    ``marks`` is where a caller adds per-event marks (a review's verdicts): seq -> the
    :class:`Mark` list shown at that event and flagged in the move list. Marks past the
    page's last seq are dropped. This signature and the page's data layout (``PAGE_VERSION``)
    are kept stable for such callers.

    ``head``: the log's head digest (:class:`LogHead`; :func:`buraco_log.view.page_for_log`
    gives the one its reader computed); by default the head a log of exactly ``events`` has in
    the current format. A seat's page names the count of events only. ``signing``: the
    line on the log's signatures (:func:`buraco_log.view.signature.status_line`), printed
    beside the digest; None says nothing of them (a page of events, not of a log file)."""
    if seat is not None:
        # a seat's copy names the count alone: the digest is computed over cards the seat did
        # not see, and a seat's page is the same for every table the seat cannot tell apart
        head = LogHead("", head.events if head is not None else len(events))
    elif head is None:
        head = LogHead(head_digest(events), len(events))
    # every event held, and a frame of each: the page draws them all (`buraco-log view` refuses
    # a log of more than 100,000 events: a page of a million was 142 MB)
    tl = Timeline(events)
    tiles = tl.style == "tiles"  # a table drawn in tiles (Burako): its rules said in tiles
    found = list(banners)
    if tl.illegal is not None and tl.illegal.seq is not None:
        exc = tl.illegal
        # A seat's copy gives the rule, not the engine's explanation: that names cards, and a
        # refused draw's explanation would name the stock's top card.
        rule = describe(exc.rule, tiles=tiles)
        why = rule if seat is not None else f"{exc.explanation}. {rule}"
        if tl.last_seq < 0:  # not a page of no table at "seq -1" (a seat's: "no seat 0")
            raise ReplayError(f"seq {exc.seq} is illegal [{exc.rule}]: {why.rstrip('.')}; no "
                              "event before it: there is no table to show", seq=exc.seq)
        found.append(Banner(
            kind="illegal", seq=exc.seq, rule=exc.rule,
            text=f"seq {exc.seq} is illegal [{exc.rule}]: {why} The page shows the match up "
                 f"to seq {tl.last_seq}, the last legal table."))
        # and at that table, under its event and flagged in the move list: the banner alone,
        # at the top of the page, was out of sight of a reader stepping down at the table
        marks = {**(marks or {})}
        marks[tl.last_seq] = [*marks.get(tl.last_seq, ()), Mark(
            "refused", f"Next, seq {exc.seq} is refused [{exc.rule}]: {why}")]
    for m in tl.score_mismatches:
        why = (m.explanation if seat is None or _numbers_only(m.explanation)
               else describe(m.rule, tiles=tiles))
        found.append(Banner(kind="score", seq=m.seq, rule=m.rule,
                            text=f"seq {m.seq}: {why} [{m.rule}]"))
        # and at that hand's end, where a reader stepping through the match stands: the
        # banner alone, at the top of the page, was out of sight there
        if m.seq is None:
            continue
        marks = {**(marks or {})}
        marks[m.seq] = [*marks.get(m.seq, ()), Mark(
            "score", f"The recorded score differs: {why} [{m.rule}]. The score sheet holds "
                     "the recomputed score.")]
    if seat is not None and not 0 <= seat < len(tl.players):
        raise ValueError(f"no seat {seat} in a {len(tl.players)}-player match")
    if at is not None and at > tl.last_seq:
        _refuse_at(tl, at)
    data = page_data(tl, seat=seat, at=at, banners=found, marks=marks, head=head,
                     signing=signing)
    return Page(render(data, score_chart(data["sheet"], data["sides"])), tuple(found),
                data["start"])


_SCORE_WORDS = frozenset({"hand", "side", "sides", "recorded", "recomputed", "totals",
                          "scores", "for"})


def _numbers_only(text: str) -> bool:
    """Whether a score mismatch's explanation names scores and nothing else ("hand 1: side 0:
    recorded 620, recomputed 520 (+100)"): a seat may read it, as it reads the score sheet.
    Any other word (a card, a tile's colour) keeps it to the referee's page."""
    return set(re.findall(r"[^\W\d_]+", text)) <= _SCORE_WORDS


def _refuse_at(tl: Timeline, at: int) -> NoReturn:
    """``--at`` past the page: a seq the log does not hold is the caller's (2, whatever else
    the log holds); one it holds past its first illegal event is a finding (1) naming the
    rule, as ``replay``, ``moves`` and ``explain`` say them."""
    if tl.illegal is None:
        raise PositionError(f"--at {at}: the page holds seqs 0 to {tl.last_seq}", seq=at)
    if at > tl.last_recorded:
        raise PositionError(f"--at {at}: the log has no seq {at} (seqs 0 to "
                            f"{tl.last_recorded})", seq=at)
    raise PastIllegalError(f"--at {at}: the page holds seqs 0 to {tl.last_seq}; seq "
                           f"{tl.illegal.seq} is illegal [{tl.illegal.rule}]", seq=at,
                           rule=tl.illegal.rule)
