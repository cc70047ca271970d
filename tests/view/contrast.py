"""The contrast a page's text must keep against its background (WCAG AA)."""

from __future__ import annotations

# WCAG's contrast ratio of two "rgb(a)" colours, and each element's colour against what is
# painted behind it: its ancestors' background colours, blended, over white. ``print``: a
# background is left out unless its element asks to print it exactly (a printer's default).
CONTRAST = r"""
var printing = arguments[0];
function rgba(s) {
  var m = /rgba?\(([^)]*)\)/.exec(s);
  if (!m) { return [0, 0, 0, 0]; }
  var p = m[1].split(/[ ,\/]+/).filter(Boolean).map(Number);
  return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1];
}
function over(top, under) {
  var a = top[3];
  return [top[0] * a + under[0] * (1 - a), top[1] * a + under[1] * (1 - a),
          top[2] * a + under[2] * (1 - a), 1];
}
function lum(c) {
  var v = c.slice(0, 3).map(function (x) {
    x /= 255; return x <= 0.03928 ? x / 12.92 : Math.pow((x + 0.055) / 1.055, 2.4);
  });
  return 0.2126 * v[0] + 0.7152 * v[1] + 0.0722 * v[2];
}
function ratio(a, b) {
  var x = lum(a), y = lum(b);
  return (Math.max(x, y) + 0.05) / (Math.min(x, y) + 0.05);
}
function behind(el) {
  var chain = [];
  for (var e = el; e && e.nodeType === 1; e = e.parentElement) { chain.push(e); }
  var bg = [255, 255, 255, 1];
  for (var i = chain.length - 1; i >= 0; i--) {
    var st = getComputedStyle(chain[i]);
    var exact = st.printColorAdjust === "exact" || st.webkitPrintColorAdjust === "exact";
    if (printing && !exact) { continue; }
    var c = rgba(st.backgroundColor);
    if (c[3] > 0) { bg = over(c, bg); }
  }
  return bg;
}
window.__contrast = {rgba: rgba, over: over, ratio: ratio, behind: behind};
var low = [];
var all = document.querySelectorAll("body *");
for (var i = 0; i < all.length; i++) {
  var el = all[i];
  var text = [].filter.call(el.childNodes, function (n) {
    return n.nodeType === 3 && n.textContent.trim();
  }).map(function (n) { return n.textContent.trim(); }).join(" ");
  if (!text || !el.getClientRects().length) { continue; }
  var st = getComputedStyle(el);
  if (st.visibility === "hidden") { continue; }
  var bg = behind(el);
  // an SVG's text is painted in its fill, not its colour
  var paint = el instanceof SVGElement && /^rgb/.test(st.fill) ? st.fill : st.color;
  var fg = over(rgba(paint), bg);
  var r = ratio(fg, bg);
  if (r < 4.5) { low.push([el.id || el.className || el.tagName, text.slice(0, 30), r]); }
}
return low;
"""
