// buraco-log review: added to the replay page by `buraco-log review --format html`. It reads
// the review (its own JSON element), marks the reviewed moves in the move list, and at each
// decision shows the move played, the best alternative found and its cards on the table.
(function () {
  "use strict";
  var R = JSON.parse(document.getElementById("bl-review").textContent);
  var $ = function (id) { return document.getElementById(id); };
  // Text from the log (a player's name, the match id) with its control and bidi characters
  // shown as escapes, as the viewer and the terminal show them, then escaped for HTML.
  var UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]/g;
  function shown(s) {
    return String(s).replace(UNSAFE, function (c) {
      var n = c.charCodeAt(0);
      return n < 256 ? "\\x" + ("0" + n.toString(16)).slice(-2) : "\\u" + ("000" + n.toString(16)).slice(-4);
    });
  }
  function esc(s) {
    return shown(s).replace(/[&<>"]/g, function (c) {
      return { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" }[c];
    });
  }
  function fmt(x) { return Math.abs(x) < 0.05 ? "0.0" : (Math.round(x * 10) / 10).toFixed(1); }
  // a cost below 0 (measured on samples that did not choose the best, it can be) is a gain
  function lost(x) { return Math.abs(x) < 0.05 ? "0" : x < 0 ? "+" + fmt(-x) : "-" + fmt(x); }
  // the ± of a move's costs: "n/a" where fewer than 2 samples measured them (no interval),
  // as the text review says it; the stored ± is then 0
  function pm(m, x) { return m.measured >= 2 ? fmt(x) : "n/a"; }
  function level(m) { return m.measured >= 2 ? ", 95%" : ""; }
  var box = document.createElement("div");
  box.id = "review";
  box.className = "box";
  // the heading's name, match id and rules isolated (R.parts, odd pieces): a right-to-left id
  // and rules' name were drawn as one right-to-left run, the rules first
  var head = R.parts && R.parts.length ? R.parts.map(function (x, k) {
    return k % 2 ? "<bdi>" + esc(x) + "</bdi>" : esc(x);
  }).join("") : esc(R.head);
  // the tooltip is plain text: its name, id and rules isolated by FSI ... PDI instead
  var tip = R.wparts && R.wparts.length ? R.wparts.map(function (x, k) {
    return k % 2 ? "\u2068" + esc(x) + "\u2069" : esc(x);
  }).join("") : esc(R.whole || R.head);
  box.innerHTML = "<h2>Review</h2><div class=\"rv-head\" title=\"" + tip +
    "\">" + head + "</div><div>" +
    esc(R.summary) + "</div>" +
    // a time cap that cut the search short, as the text's last line says it
    (R.short ? "<div class=\"rv-short\" id=\"rv-short\">" + esc(R.short) + "</div>" : "") +
    "<div class=\"rv-now\" id=\"rv-now\" aria-live=\"polite\"></div>";
  var side = $("side");
  side.insertBefore(box, side.firstChild);
  // the move list's lines by seq, found in one pass: a query for each reviewed move scanned
  // the list each time (1.8 s of a 21,000-event page's opening, growing as the square)
  var lines = {};
  Array.prototype.forEach.call(document.querySelectorAll("#moves li[data-seq]"), function (li) {
    lines[li.getAttribute("data-seq")] = li;
  });
  Object.keys(R.moves).forEach(function (s) {
    var m = R.moves[s];
    var li = lines[s];
    if (!li) { return; }
    li.className += " rv" + (m.flag ? " rv-bad" : "");
    li.setAttribute("data-rv", (m.flag ? "\u2717 " : "") + lost(m.cost));
    li.setAttribute("title", (m.verdict === "even" ? "about even with: " : "best: ") +
      shown(m.best) + " (cost " + fmt(m.cost) + " \u00b1 " + pm(m, m.pm) + level(m) + ")");
  });
  var BEST = ", in the best move found";
  // a cost whose 95% interval holds 0 names no better move, as the text says; the ± is
  // that interval's half (review data version 2; it was a standard error)
  function better(m, a, b) {
    return (m.verdict === "better" ? "; best found " : "; about even with ") + a + esc(m.best) +
      b + ", cost " + fmt(m.cost) + " \u00b1 " + pm(m, m.pm);
  }
  function show() {
    var s = +document.body.getAttribute("data-seq");
    // a hand the step did not redraw keeps its cards: their outline and words go first
    var was = document.querySelectorAll(".card.rv-alt");
    for (var j = 0; j < was.length; j++) {
      was[j].classList.remove("rv-alt");
      was[j].setAttribute("aria-label", was[j].getAttribute("aria-label").replace(BEST, ""));
    }
    var next = R.moves[String(s + 1)], here = R.moves[String(s)];
    var out = "";
    if (next) {
      // the move played scoring as well as any is the best found: said so, not named twice
      out += "<div><b" + (next.flag ? " class=\"bad\"" : "") + ">Decision at seq " + (s + 1) +
        (next.flag ? " (mistake)" : "") + "</b>: played <i>" + esc(next.played) + "</i>" +
        (next.verdict !== "best" ? better(next, "<i>", "</i>") + " points" +
          (next.measured >= 2 ? " (95%)." : ".") :
          ", the best move found.") +
        (next.cards.length ? " The best move's cards are outlined in green." : "") +
        "</div><table>" +
        next.alts.map(function (a) {
          return "<tr><td>" + esc(a[0]) + "</td><td>" + lost(a[1]) + " \u00b1 " + pm(next, a[2]) + "</td></tr>";
        }).join("") + "</table>";
      var want = next.cards.slice();
      var hand = document.querySelectorAll('[data-zone="hand-' + R.seat + '"] .card');
      for (var i = 0; i < hand.length && want.length; i++) {
        var k = want.indexOf(+hand[i].getAttribute("data-card"));
        if (k >= 0) {
          hand[i].classList.add("rv-alt");
          // the outline in words, for a screen reader: "7 of hearts, in the best move found"
          hand[i].setAttribute("aria-label", hand[i].getAttribute("aria-label") + BEST);
          want.splice(k, 1);
        }
      }
    } else if (here) {
      out += "<div><b" + (here.flag ? " class=\"bad\"" : "") + ">This move</b>: " + esc(here.played) +
        (here.verdict !== "best" ? better(here, "", "") : ", the best move found") + "</div>";
    }
    $("rv-now").innerHTML = out || "No decision of this seat here.";
  }
  new MutationObserver(show).observe(document.body, { attributes: true, attributeFilter: ["data-seq"] });
  show();
}());
