// buraco-log replay page. It only draws: every table, reading, class and score in the data
// was computed by the Python reducer when the page was written. No network, no storage.
(function () {
  "use strict";
  var D = JSON.parse(document.getElementById("bl-data").textContent);
  var last = D.diffs.length - 1;
  var cur = null, seq = -1;
  var $ = function (id) { return document.getElementById(id); };
  var SUITS = ["\u2663", "\u2666", "\u2665", "\u2660"];
  var RANKS = ["", "A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K"];
  var CLASS = { clean: "clean", semi_clean: "semi-clean", dirty: "dirty", royal: "royal",
    ace_to_ace: "ace-to-ace" };

  function esc(s) {
    return String(s).replace(/[&<>"]/g, function (c) {
      return { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" }[c];
    });
  }
  // A card code is suit * 16 + rank; 64 is the joker (see buraco_log/cards.py).
  // A screen reader reads a card by its name, "queen of hearts", as one image: its face
  // alone was read as "Q, black heart suit", or as nothing at all.
  // A tile's colour is also written under its number, in the letter the text gives it ("7r"):
  // told by its colour alone, a red 12 and a black 12 were one tile to a colour-blind player.
  function card(c, wild) {
    var w = wild ? " wild" : "";
    var said = ' role="img" aria-label="' + cardName(c) + (wild ? ", wild" : "") + '"';
    if (c === 64) {
      return '<span class="card jk' + w + '" data-card="' + c + '" title="joker"' + said + ">" +
        (D.tiles ? "\u2605<i></i>" : "JK<i>\u2605</i>") + "</span>";
    }
    var s = c >> 4, r = c & 15;
    return '<span class="card s' + s + w + '" data-card="' + c + '"' + said + ">" +
      (D.tiles ? r : RANKS[r]) + "<i>" + (D.tiles ? TILE_LETTERS : SUITS)[s] + "</i></span>";
  }
  var SUIT_NAMES = ["clubs", "diamonds", "hearts", "spades"];
  var TILE_NAMES = ["yellow", "blue", "red", "black"];
  var TILE_LETTERS = "ybrk";  // _TILE_COLOURS in cards.py
  var RANK_NAMES = ["", "ace", "2", "3", "4", "5", "6", "7", "8", "9", "10", "jack", "queen",
    "king"];
  function cardName(c) {
    if (c === 64) { return "joker"; }
    var s = c >> 4, r = c & 15;
    return D.tiles ? TILE_NAMES[s] + " " + r : RANK_NAMES[r] + " of " + SUIT_NAMES[s];
  }
  function cards(list, zone, wild) {
    var out = '<div class="cards" data-zone="' + zone + '">';
    for (var i = 0; i < list.length; i++) {
      out += card(list[i], wild !== null && wild !== undefined && list[i] === wild);
    }
    return out + "</div>";
  }
  // "1 tile", "11 cards": a table drawn in tiles (Burako) is told in tiles, one is not "1 cards"
  function many(n) {
    return n + " " + (D.tiles ? "tile" : "card") + (n === 1 ? "" : "s");
  }
  function backs(n, zone) {
    return '<div class="cards" data-zone="' + zone + '" data-count="' + n + '">' +
      (n ? '<span class="back" title="' + many(n) + ' face down" role="img" aria-label="' +
        many(n) + ' face down">' + n + "</span>" : '<span>-</span>') +
      "</div>";
  }
  // Text from the log (a name) with its control and bidi characters shown as escapes, as
  // the terminal shows them: a right-to-left override would reverse the rest of its line.
  var UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]/g;
  function shown(s) {
    return String(s).replace(UNSAFE, function (c) {
      var n = c.charCodeAt(0);
      return n < 256 ? "\\x" + ("0" + n.toString(16)).slice(-2) : "\\u" + ("000" + n.toString(16)).slice(-4);
    });
  }
  // A long name is cut, as in the move lines (NAME_IN_MOVES in frames.py): a 10,000-letter
  // name filled the screen in every panel that names a seat. The seat's heading keeps it
  // whole in its tooltip. Cut by code points, not halves of a surrogate pair, and never
  // inside a joined emoji, a flag or a letter with its accents (cut in frames.py, the same).
  var NAME_IN_MOVES = 48, ID_SHOWN = 64;
  var ATTACHES = /^(?:\p{M}|[\u200d\ufe00-\ufe0f\u{1f3fb}-\u{1f3ff}\u{e0020}-\u{e007f}\u{e0100}-\u{e01ef}])$/u;
  var REGIONAL = /^[\u{1f1e6}-\u{1f1ff}]$/u;
  var ESCAPE = /^\\(?:x[0-9a-f]{2}|u[0-9a-f]{4})/;  // as shown() writes them
  function inEscape(cps, k) {
    for (var j = k - 1; j >= Math.max(0, k - 5); j--) {
      if (cps[j] === "\\") {
        var m = ESCAPE.exec(cps.slice(j, j + 6).join(""));
        return m !== null && j + m[0].length > k;
      }
    }
    return false;
  }
  function boundary(cps, k) {
    if (cps[k - 1] === "\u200d" || ATTACHES.test(cps[k]) || inEscape(cps, k)) { return false; }
    if (REGIONAL.test(cps[k]) && REGIONAL.test(cps[k - 1])) {
      var n = 1;
      while (n < k && REGIONAL.test(cps[k - 1 - n])) { n++; }
      return n % 2 === 0;
    }
    return true;
  }
  function cut(text, most) {
    var cps = Array.from(String(text));
    if (cps.length <= most) { return String(text); }
    var k = most - 1;
    while (k > 0 && !boundary(cps, k)) { k--; }
    return cps.slice(0, k || most - 1).join("") + "\u2026";
  }
  function name(seat, whole) {
    var p = D.players[seat];
    if (!p) { return "seat " + seat; }
    return shown(whole ? p.name : cut(p.name, NAME_IN_MOVES));
  }
  // A player with no name (or only blanks) is named by the seat alone, as the move lines name
  // it (describe_event): the panels said "seat 1 ()" and "side 0 (, )".
  function unnamed(seat) { var p = D.players[seat]; return !p || !/\S/.test(p.name); }
  function seatWho(seat) {
    return "seat " + seat + (unnamed(seat) ? "" : " (" + isolated(name(seat)) + ")");
  }

  // A name in markup, isolated from the text around it: two right-to-left names side by side
  // ("side 0 (NAME0, NAME2)") were drawn as one right-to-left run, the second name first.
  function isolated(text) { return "<bdi>" + esc(text) + "</bdi>"; }

  // -- frames: a snapshot every D.every seqs, a diff for every seq ---------------------------
  // A diff holds no seq (data layout 2): the seq it leads to is its index, s.
  function patch(f, d, s) {
    var out = {}, k;
    for (k in f) { out[k] = f[k]; }
    out.s = s;
    for (k in d) {
      if (k.charAt(k.length - 1) === "+") {
        var key = k.slice(0, -1);
        out[key] = out[key].concat(d[k]);
      } else {
        out[k] = d[k];
      }
    }
    return out;
  }
  function frameAt(s) {
    if (cur && s === seq) { return cur; }
    if (cur && s === seq + 1) { return patch(cur, D.diffs[s], s); }
    var base = Math.floor(s / D.every);
    var f = D.snaps[base];
    for (var i = base * D.every + 1; i <= s; i++) { f = patch(f, D.diffs[i], i); }
    return f;
  }

  // -- drawing -------------------------------------------------------------------------------
  // Each zone keeps the markup it last drew and is only replaced when that changes: a step
  // usually touches one hand and the pile, and the browser then lays out only those.
  function put(el, html) {
    if (el.__html !== html) { el.innerHTML = html; el.__html = html; }
  }
  function attr(el, name, value) {
    value = String(value);
    if (el.getAttribute(name) !== value) { el.setAttribute(name, value); }
  }
  var seatBoxes = [], sideBoxes = [];
  function drawSeats(f) {
    for (var i = 0; i < D.players.length; i++) {
      var hand = f["h" + i];
      var box = seatBoxes[i];
      attr(box, "class", "seat box" + (f.t === i && f.ph !== "over" ? " turn" : ""));
      put(box, "<h3>seat " + i + ' <span class="n"' +
        // an unnamed seat's heading read "seat 1 side 1": the separator is said either way
        (unnamed(i) ? ">\u00b7 " : ' title="' + esc(name(i, true)) + '">' + isolated(name(i)) + " \u00b7 ") +
        "side " + D.players[i].side + " \u00b7 " + many(f.c[i]) +
        (f.dl === i ? " \u00b7 dealer" : "") + "</span></h3>" +
        (hand ? cards(hand, "hand-" + i) : backs(f.c[i], "hand-" + i)));
    }
  }
  // A side's melds are kept one element each, by meld id: a step that lays off on one meld
  // redraws that meld alone, and the others keep their boxes (and their layout).
  function meldBox(box, id, canastra, kind, html) {
    var el = box.byId[id];
    if (!el) {
      el = box.byId[id] = document.createElement("div");
      el.setAttribute("data-meld", id);
    }
    attr(el, "class", "meld" + (canastra ? " canastra" : ""));
    attr(el, "data-kind", kind);
    attr(el, "data-canastra", canastra || "");
    put(el, html);
    return el;
  }
  function place(parent, want) {
    for (var i = 0; i < want.length; i++) {
      if (parent.children[i] !== want[i]) { parent.insertBefore(want[i], parent.children[i] || null); }
    }
    while (parent.children.length > want.length) { parent.removeChild(parent.lastElementChild); }
  }
  function drawSides(f) {
    for (var s = 0; s < D.sides; s++) {
      var who = [];
      for (var i = 0; i < D.players.length; i++) {
        if (D.players[i].side === s) { who.push(unnamed(i) ? "seat " + i : isolated(name(i))); }
      }
      var melds = f["m" + s] || [];
      var box = sideBoxes[s];
      put(box.head, "side " + s + " (" + who.join(", ") + ') <span class="n">\u00b7 score ' +
        f.T[s] + " \u00b7 on the table " + f.P[s] + (f.O[s] ? " \u00b7 opened" : "") +
        (f.V[s] ? " \u00b7 vulnerable" : "") + "</span>");
      var want = [];
      for (var m = 0; m < melds.length; m++) {
        var x = melds[m];  // [id, kind, canastra class, cards, laid by, wild, wild text]
        var tag = x[1] + " \u00b7 " + (x[5] === null ? "clean" : "with wild");
        if (x[2]) { tag = x[1] + ' <span class="badge">' + CLASS[x[2]] + " canastra</span>"; }
        if (x[6]) { tag += " \u00b7 " + esc(x[6]); }
        want.push(meldBox(box, x[0], x[2], x[1], cards(x[3], "meld-" + s + "-" + x[0], x[5]) +
          '<span class="tag">' + tag + "</span>"));
      }
      if (!melds.length) { want.push(box.none); }
      place(box.melds, want);
      var by = f.mb[s];
      var mc = f.mc[s];
      var morto = box.morto, out;
      attr(morto, "data-count", mc);
      attr(morto, "data-taken", f.mt[s] ? 1 : 0);
      attr(morto, "data-by", by === null ? "" : by);
      // what the score counts it as (frames.py "ms"): taken indirectly and voided by an
      // opponent going out, it is charged as not taken, and is not called taken (as replay)
      var state = f.ms ? f.ms[s] : (f.mt[s] ? "taken" : "waiting");
      attr(morto, "data-state", state);
      var taker = by === null ? "" : " by " + seatWho(by);
      if (state === "voided") {
        out = "morto voided (taken" + taker + ", but counts as not taken)";
      } else if (f.mt[s]) {
        out = "morto taken" + taker;
      } else if (mc) {
        out = "morto: " + many(mc) + ", not taken";
      } else {
        out = "no morto";
      }
      var dead = f["d" + s];
      if (dead && dead.length) { out += '<div class="small">' + cards(dead, "morto-" + s) + "</div>"; }
      put(morto, out);
    }
  }
  function drawMiddle(f) {
    attr($("stock"), "data-stock", f.k);
    put($("stock"), String(f.k));
    var p = f.p;
    put($("pilesize"), "(" + p.length + ")");
    put($("piletop"), p.length ? card(p[p.length - 1]) : "empty");
    attr($("piletop"), "data-size", p.length);
    // its name for a screen reader: what the button does, not "9 ♦" (the card drawn on it)
    attr($("piletop"), "aria-label", "Pile of " + many(p.length) +
      (p.length ? ", " + cardName(p[p.length - 1]) + " on top" : "") + ": show the whole pile");
    put($("pile"), cards(p, "pile"));
  }
  var PHASE = { "new": "before the match", between: "between hands", draw: "draw",
    play: "play", emptied: "hand emptied", out: "went out", decided: "decided", over: "over" };
  function drawStatus(f) {
    var score = [];
    // once the hand is scored its table is in the total: "+110" read as 110 still to come
    var scored = f.n >= 0 && (f.ph === "between" || f.ph === "decided" || f.ph === "over");
    for (var s = 0; s < D.sides; s++) {
      score.push("side " + s + ": " + f.T[s] + (scored ? " (" + f.P[s] + " on the table, scored)"
        : " (+" + f.P[s] + " on the table)"));
    }
    put($("status"), "hand " + (f.n < 0 ? "-" : f.n) + " \u00b7 phase " +
      esc(PHASE[f.ph] || f.ph) + " \u00b7 turn: " + seatWho(f.t) +
      " \u00b7 " + score.join(", ") + (f.w !== null && f.w !== undefined ? " \u00b7 winner: side " + f.w : ""));
  }

  var moveItems = [];
  var sheetRows = [];
  var chartPoints = [];
  function go(s, why) {
    // not s | 0: a fragment's seq=4294967296 wrapped to 0 (and 3000000000 to a negative)
    s = Math.max(0, Math.min(last, Math.floor(+s) || 0));
    var f = frameAt(s);
    drawSeats(f);
    drawSides(f);
    drawMiddle(f);
    drawStatus(f);
    if (seq >= 0 && moveItems[seq]) {
      moveItems[seq].className = moveItems[seq].className.replace(" cur", "");
      moveItems[seq].removeAttribute("aria-current");
    }
    cur = f;
    seq = s;
    var li = moveItems[s];
    li.className += " cur";
    // the line shown is said to be the current step, not only painted yellow
    li.setAttribute("aria-current", "step");
    put($("event"), moveHtml(s));
    drawMarks(s);
    $("pos").textContent = "seq " + s + " / " + last;
    document.body.setAttribute("data-seq", s);
    controls(s);
    if (why !== "hash" && hashTimer === null) {
      if (Date.now() - hashAt >= HASH_MS) { writeHash(); } else { hashTimer = setTimeout(writeHash, HASH_MS); }
    }
    if (why !== "list") { scrollList(li); }  // it reads the layout, once
    veil(below(D.sheet.length, function (r) { return D.sheet[r].end <= s; }));
  }
  // The slider and the hand menu at seq s.
  function controls(s) {
    $("slider").value = s;
    // a screen reader said the slider's bare number, "30": it says "seq 30 of 1700"
    $("slider").setAttribute("aria-valuetext", "seq " + s + " of " + last);
    var hs = below(D.hands.length, function (h) { return D.hands[h][1] <= s; }) - 1;
    // before the first deal no hand is shown: the menu named the hand last shown (a step back
    // from a later hand to seq 0 left it there), and its arrow keys went on from that hand
    if (hs >= 0) { $("handsel").value = String(D.hands[hs][1]); } else { $("handsel").selectedIndex = -1; }
  }
  // How many of the first n items pass ok(i), for an ok that holds up to some i and then never
  // again (hands by their deal's seq, sheet rows by their end): a binary search.
  function below(n, ok) {
    var lo = 0, hi = n;
    while (lo < hi) {
      var mid = (lo + hi) >> 1;
      if (ok(mid)) { lo = mid + 1; } else { hi = mid; }
    }
    return lo;
  }
  // The hands still to come are greyed by one veil over the score sheet and one over the
  // chart, moved when the count of ended hands changes. Toggling a class on each row and
  // point made a long jump in a 100,000-event match cost 5-8 steps (each row's style, layer).
  var sheetVeil = null, handRows = [], handAt = [], chartVeil = null, chartXs = [], veiled = -1;
  function veil(done) {
    if (done === veiled || !sheetVeil) { return; }
    // The veil greys the rows to come for the eye only: a screen reader read the scores of
    // hands not yet played. They are aria-hidden, set on the rows whose side of the veil
    // changed (a step across a hand's end touches one hand's rows).
    if (veiled < 0) { hideRows(done, D.sheet.length, true); }
    else if (done > veiled) { hideRows(veiled, done, false); }
    else { hideRows(done, veiled, true); }
    veiled = done;
    var first = handRows[done], n = D.sheet.length;  // the first row still to come
    sheetVeil.setAttribute("data-done", done);
    sheetVeil.classList.toggle("hidden", !first);
    if (first) {
      sheetVeil.style.top = first.getBoundingClientRect().top -
        sheetVeil.parentNode.getBoundingClientRect().top + "px";
    }
    if (chartVeil) {
      // from halfway between the last ended hand's point and the next one's, to the end
      var x = done < n ? (chartXs[done] + chartXs[done + 1]) / 2 : chartXs[n];
      chartVeil.setAttribute("x", x);
      chartVeil.setAttribute("width", done < n ? chartXs[n] + 8 - x : 0);
    }
  }
  // The rows of hands from..to-1 hidden from a screen reader, or shown again.
  function hideRows(from, to, hidden) {
    var end = to < handAt.length ? handAt[to] : sheetRows.length;
    for (var i = from < handAt.length ? handAt[from] : end; i < end; i++) {
      if (hidden) { sheetRows[i].setAttribute("aria-hidden", "true"); }
      else { sheetRows[i].removeAttribute("aria-hidden"); }
    }
  }
  // The fragment follows the page, at most every HASH_MS: a held arrow key would otherwise
  // rewrite the URL faster than the browser accepts (it then drops the updates).
  var HASH_MS = 120, hashAt = 0, hashTimer = null;
  function writeHash() {
    hashTimer = null;
    hashAt = Date.now();
    var h2 = "#seq=" + seq;
    if (location.hash !== h2) {
      try { history.replaceState(null, "", h2); } catch (e) { location.replace(h2); }
    }
  }
  // Marks a caller pinned to events (a review's verdicts), shown at their seq.
  var MARKS = D.marks || {};
  function drawMarks(s) {
    var ms = MARKS[s] || [], out = "";
    for (var i = 0; i < ms.length; i++) {
      out += '<div class="mark mark-' + esc(ms[i].kind) + '" data-kind="' + esc(ms[i].kind) +
        '"><span>' + esc(ms[i].text) + "</span>" +
        (ms[i].cards.length ? cards(ms[i].cards, "mark-" + s + "-" + i) : "") + "</div>";
    }
    put($("marks"), out);
  }
  // Where the line stands in the list's box, not its offsetTop: a chunk of lines drawn only in
  // sight (content-visibility, viewer.css) is its lines' offsetParent, so a line of the last
  // chunk was scrolled to as if it stood in the first.
  function scrollList(li) {
    var box = $("moves"), at = li.getBoundingClientRect();
    var top = at.top - box.getBoundingClientRect().top - box.clientTop + box.scrollTop;
    if (top < box.scrollTop || top + at.height > box.scrollTop + box.clientHeight) {
      box.scrollTop = top - box.clientHeight / 2;
    }
  }
  function handStart(dir) {
    var starts = D.hands.map(function (h) { return h[1]; });
    if (dir < 0) {
      for (var i = starts.length - 1; i >= 0; i--) { if (starts[i] < seq) { return go(starts[i]); } }
      return go(0);
    }
    for (var j = 0; j < starts.length; j++) { if (starts[j] > seq) { return go(starts[j]); } }
    return go(last);
  }
  // The fragment names a seq as the page writes it, "#seq=" and digits, or nothing: a loose
  // match took "#seq=1e3" for seq 1, "#seq=0x10" for seq 0 and "#xseq=7" for seq 7.
  function fromHash() {
    var m = /^#seq=(\d+)$/.exec(location.hash);
    return m ? parseInt(m[1], 10) : null;
  }

  // -- one-time setup ------------------------------------------------------------------------
  function buildSheet() {
    if (!D.sheet.length) { $("sheet").innerHTML = '<p class="empty">No hand has ended yet.</p>'; return; }
    var head = "<tr><th>hand</th><th>side</th><th>table</th><th>canastras</th><th>bonus</th>" +
      "<th>going out</th><th>relancinho</th><th>morto</th><th>" + (D.tiles ? "tiles" : "cards") +
      " left</th><th>hand total</th>" +
      "<th>running</th></tr>";
    var body = "", at = [], rows = 0;
    D.sheet.forEach(function (row) {
      at.push(rows);
      rows += row.sides.length;
      row.sides.forEach(function (x, s) {
        var cls = Object.keys(x.canastras).map(function (k) { return CLASS[k] + " " + x.canastras[k]; });
        body += '<tr data-end="' + row.end + '" data-hand="' + row.hand + '"><td>' + row.hand +
          "</td><td>" + s + "</td><td>" + x.table + "</td><td>" + (cls.join(", ") || "-") +
          "</td><td>" + x.bonus + "</td><td>" + x.out + "</td><td>" + x.relancinho + "</td><td>" +
          x.morto + "</td><td>" + x.left + "</td><td><b>" + x.total + "</b></td><td>" + x.running +
          "</td></tr>";
      });
    });
    $("sheet").innerHTML = '<div class="veiled"><table>' + head + body + "</table>" +
      '<div class="veil hidden" aria-hidden="true"></div></div>';
    sheetRows = Array.prototype.slice.call(document.querySelectorAll("#sheet tr[data-end]"));
    sheetVeil = document.querySelector("#sheet .veil");
    handRows = at.map(function (i) { return sheetRows[i]; });
    handAt = at;
  }
  // The chart's x of each hand's point, the match's start first (score_chart in page.py).
  function buildChart() {
    var svg = document.querySelector("#chartbox .chart");
    chartVeil = svg && svg.querySelector(".veil");
    if (!chartVeil) { return; }
    chartXs = [+svg.querySelector(".axis").getAttribute("x1")];
    for (var i = 0; i < D.sheet.length; i++) { chartXs.push(+chartPoints[i].getAttribute("cx")); }
  }
  // The lines go in nested lists of CHUNK lines each: the browser restyled a line (the current
  // one) in time that grew with its siblings, 1 ms each step with 100,000 lines in one list.
  var CHUNK = 500;
  // A move line is stored without its "seq N: " (data layout 2)
  function moveText(i) { return "seq " + i + ": " + D.moves[i]; }
  // The line as markup: the match start's names, id and rules isolated (D.parts, odd pieces),
  // as its list of right-to-left names was drawn second name first; any other line as text.
  var PARTS = D.parts || {};
  function moveHtml(i) {
    var p = PARTS[i];
    if (!p) { return esc(moveText(i)); }
    return "seq " + i + ": " + p.map(function (x, k) { return k % 2 ? isolated(x) : esc(x); }).join("");
  }
  function buildMoves() {
    var ol = $("moves"), html = "", dealt = {};
    // the lines that start a hand are its deal's, the seqs D.hands names
    for (var h = 0; h < D.hands.length; h++) { dealt[D.hands[h][1]] = true; }
    for (var i = 0; i <= last; i++) {
      if (i % CHUNK === 0) {
        // its height until it is drawn (viewer.css): 1.6em a line, as a line wraps now and then
        // Named by its seqs: a chunk out of sight is not drawn, and its lines are not in the
        // accessibility tree either (Chromium: "not rendered"), so a screen reader's list of a
        // 100,000-event match was 200 items, 199 of them empty. Scrolled to (as a reader moving
        // onto it does), its lines are drawn and read.
        var to = Math.min(i + CHUNK, last + 1) - 1;
        html += (i ? "</ol></li>" : "") + '<li class="chunk" aria-label="seq ' + i + " to " + to +
          '" style="contain-intrinsic-size: auto ' + ((to + 1 - i) * 1.6).toFixed(1) +
          'em"><ol start="' + i + '">';
      }
      var mk = (MARKS[i] || []).map(function (m) { return " mk-" + esc(m.kind); }).join("");
      html += '<li data-seq="' + i + '" class="m' + (dealt[i] ? " hs" : "") +
        mk + '">' + moveHtml(i) + "</li>";
    }
    ol.innerHTML = html + "</ol></li>";
    moveItems = Array.prototype.slice.call(ol.querySelectorAll("li[data-seq]"));
    ol.addEventListener("click", function (e) {
      var t = e.target.closest ? e.target.closest("li") : e.target;
      if (t && t.hasAttribute("data-seq")) { go(+t.getAttribute("data-seq"), "list"); }
    });
  }
  // On paper, the moves of the hand shown, from its deal up to the seq shown: the list on the
  // screen, a box of every line of the match, is left out of print, and a sheet printed for a
  // dispute showed a table with no move that led to it. The hands before it are in the score
  // sheet. Built when the page is printed, not at every step.
  function printMoves() {
    if (seq < 0) { return; }
    var hs = below(D.hands.length, function (h) { return D.hands[h][1] <= seq; }) - 1;
    var from = hs >= 0 ? D.hands[hs][1] : 0, out = "";
    for (var i = from; i <= seq; i++) {
      var mk = (MARKS[i] || []).map(function (m) { return " mk-" + esc(m.kind); }).join("");
      out += '<li data-seq="' + i + '" class="m' + mk + '">' + moveHtml(i) + "</li>";
    }
    $("printed-head").textContent = (hs >= 0 ? "Moves of hand " + D.hands[hs][0] : "Moves") +
      ", seq " + from + " to " + seq + (hs > 0 ? " (the hands before it: the score sheet)" : "");
    $("printed-moves").innerHTML = out;
  }

  function buildBanners() {
    $("banners").innerHTML = D.banners.map(function (b) {
      return '<div class="banner-' + esc(b.kind) + '" data-kind="' + esc(b.kind) + '" data-seq="' +
        (b.seq === null ? "" : b.seq) + '" data-rule="' + esc(b.rule || "") + '" data-offset="' +
        (b.offset === null ? "" : b.offset) + '">' + esc(b.text) + "</div>";
    }).join("");
  }
  function buildBoxes() {
    var i, el;
    for (i = 0; i < D.players.length; i++) {
      el = document.createElement("div");
      el.setAttribute("data-seat", i);
      $("seats").appendChild(el);
      seatBoxes.push(el);
    }
    for (var s = 0; s < D.sides; s++) {
      el = document.createElement("div");
      el.className = "box sidebox";
      el.setAttribute("data-side", s);
      el.innerHTML = '<h3></h3><div class="melds" data-zone="melds-' + s + '"></div>' +
        '<div class="morto" data-morto-side="' + s + '"></div>';
      $("sides").appendChild(el);
      var none = document.createElement("span");
      none.className = "none";
      none.textContent = "no melds";
      sideBoxes.push({ head: el.children[0], melds: el.children[1], morto: el.children[2],
        byId: {}, none: none });
    }
  }
  function setup() {
    var who = D.viewer === null ? "referee view" : seatWho(D.viewer);
    // rules named by blanks alone: "match m ·   · referee view" (no rules at all is "")
    var rules = /\S/.test(D.rules) || !D.rules ? D.rules : "rules with no name";
    var noId = !/\S/.test(D.match || "");  // "match unknown" for an empty id: it has none
    // the match id and the rules' name cut as in the match start's line (ID_SHOWN in
    // frames.py): a 20,000-character id made the heading 5,900 pixels tall; whole in its tooltip
    // each of them isolated: a right-to-left id and rules' name were drawn rules first
    $("title").innerHTML = (noId ? "match with no id" : "match " + isolated(cut(D.match, ID_SHOWN))) +
      " \u00b7 " + isolated(cut(rules, ID_SHOWN)) + " \u00b7 " + who;
    // a tooltip is plain text: isolated by FSI ... PDI as the tab's title is (page.py)
    $("title").title = (noId ? "match with no id" : "match \u2068" + D.match + "\u2069") +
      " \u00b7 \u2068" + rules + "\u2069";
    if (D.tiles) { document.body.classList.add("tiles"); }
    // which log the page is of, as show and verify name it: a printed sheet named the match
    // id alone, which every copy of the log shares, edited or not
    if (D.head) {
      var n = esc(D.head.events) + " event" + (D.head.events === 1 ? "" : "s");
      // a seat's copy: the digest is computed over cards the seat did not see (page.py)
      $("loghead").innerHTML = D.head.digest ? "log head <code>" + esc(D.head.digest) +
        "</code> \u00b7 " + n : "log of " + n + " \u00b7 its head digest is on the " +
        "referee's copy, not a player's";
      $("loghead").classList.remove("hidden");
    }
    // whether the log is signed, and verified by a trusted key: a printed page of an unsigned
    // log read as one of a verified log
    if (D.signing) {
      $("logsign").textContent = D.signing;
      $("logsign").classList.remove("hidden");
    }
    buildBanners();
    buildBoxes();
    if (last < 0) { $("event").textContent = "The log holds no event that could be read."; return; }
    buildMoves();
    buildSheet();
    chartPoints = Array.prototype.slice.call(document.querySelectorAll(".chart circle[data-end]"));
    buildChart();
    var sl = $("slider");
    sl.max = last;
    sl.addEventListener("input", function () { go(+sl.value, "slider"); });
    var sel = $("handsel"), widest = 0;
    sel.innerHTML = D.hands.map(function (h) {
      var label = h[0] + " (seq " + h[1] + ")";
      widest = Math.max(widest, label.length);
      return '<option value="' + h[1] + '">' + label + "</option>";
    }).join("");
    // A width of its own: without one, each change of hand measured every option again (the
    // menu's width is its widest option's), 6 ms a jump with 260 hands.
    sel.style.width = widest + 4 + "ch";
    sel.addEventListener("change", function () { go(+sel.value); });
    $("first").onclick = function () { go(0); };
    $("prev").onclick = function () { go(seq - 1); };
    $("next").onclick = function () { go(seq + 1); };
    $("last").onclick = function () { go(last); };
    $("piletop").onclick = function () {
      var shut = $("pile").classList.toggle("hidden");
      $("piletop").setAttribute("aria-expanded", shut ? "false" : "true");
    };
    // Back on the page, the browser restores each control's state once the script has run:
    // the box came back ticked over two-colour cards, the slider and the hand menu where
    // they were when the page was left, over the table of the seq in the address.
    var four = function () { document.body.classList.toggle("four", $("four").checked); };
    $("four").addEventListener("change", four);
    window.addEventListener("pageshow", function () { four(); if (seq >= 0) { controls(seq); } });
    four();
    // and the address names the seq shown when the page is left, not one up to HASH_MS older
    window.addEventListener("pagehide", function () {
      if (hashTimer !== null) { clearTimeout(hashTimer); writeHash(); }
    });
    document.addEventListener("keydown", function (e) {
      if (e.altKey || e.ctrlKey || e.metaKey) { return; }
      var t = e.target && e.target.tagName;
      if (t === "SELECT") { return; }
      var k = e.key;
      if (k === "ArrowRight" || k === "ArrowDown") { go(seq + 1); }
      else if (k === "ArrowLeft" || k === "ArrowUp") { go(seq - 1); }
      else if (k === "Home") { go(0); }
      else if (k === "End") { go(last); }
      else if (k === "PageDown") { handStart(1); }
      else if (k === "PageUp") { handStart(-1); }
      else { return; }
      e.preventDefault();
    });
    window.addEventListener("beforeprint", printMoves);
    // a narrower window wraps the sheet's cells: its rows move, and the veil with them
    window.addEventListener("resize", function () { var d = veiled; veiled = -1; veil(d); });
    window.addEventListener("hashchange", function () {
      var h = fromHash();
      if (h === null) { writeHash(); }  // no seq: the address names the table shown again
      else if (h !== seq) { go(h, "hash"); }
    });
    var h = fromHash();
    go(h !== null ? h : D.start, "init");
  }
  // For tests and tools: read-only access to the page's position.
  window.buracoView = { go: function (s) { go(s); return seq; }, seq: function () { return seq; },
    last: last, frame: function () { return cur; } };
  setup();
}());
