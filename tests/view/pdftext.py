"""The text of a PDF that Chromium prints (Skia's writer), read with the standard library alone:
no pypdf or pdftotext in the test environment or in CI.

Enough of PDF for Skia's output: uncompressed object tables, Flate streams, Type0 fonts with a
ToUnicode map and glyph widths (``/W``), and a content stream's ``q Q cm BT Tf Tm Td TJ Tj``.
Each run of text comes with where it is drawn on its page, in points from the page's top left,
so a test can also tell text cut at the paper's right edge.
"""

from __future__ import annotations

import itertools
import re
import zlib
from dataclasses import dataclass, field
from typing import Any

_OBJ = re.compile(rb"(\d+) 0 obj\s*(.*?)\s*endobj", re.S)
_STREAM = re.compile(rb"stream\r?\n(.*)endstream", re.S)
_TOKEN = re.compile(rb"""
    (?P<ws>\s+|%[^\r\n]*)
  | (?P<hex><[0-9A-Fa-f\s]*>)
  | (?P<lit>\()
  | (?P<open><<|\[)
  | (?P<close>>>|\])
  | (?P<name>/[^\s/\[\]()<>{}%]*)
  | (?P<num>[+-]?(?:\d+\.?\d*|\.\d+))
  | (?P<word>[^\s/\[\]()<>{}%]+)
""", re.X)


@dataclass
class Run:
    """One string a content stream shows: where it starts and ends, and its text."""

    x0: float
    x1: float
    y: float
    text: str
    colour: tuple[float, float, float] = (0.0, 0.0, 0.0)  # its fill colour, RGB 0-1


@dataclass
class Page:
    width: float
    height: float
    runs: list[Run] = field(default_factory=list)

    def lines(self) -> list[str]:
        """The page's text as lines, top to bottom: runs whose baselines are within 2 points
        are one line, left to right, a space between runs that a gap parts."""
        out: list[list[Run]] = []
        for r in sorted(self.runs, key=lambda r: (round(r.y, 0), r.x0)):
            if out and abs(out[-1][0].y - r.y) < 2:
                out[-1].append(r)
            else:
                out.append([r])
        text = []
        for line in out:
            line.sort(key=lambda r: r.x0)
            s = line[0].text
            for a, b in itertools.pairwise(line):
                s += (" " if b.x0 - a.x1 > 1.5 else "") + b.text
            text.append(s)
        return text

    def text(self) -> str:
        return "\n".join(self.lines())


class Name(str):
    pass


class Op(str):
    pass


def _literal(data: bytes, i: int) -> tuple[bytes, int]:
    """A literal string starting after its ``(`` at ``i``: its bytes, and the index after it."""
    out, depth = bytearray(), 1
    esc = {ord("n"): b"\n", ord("r"): b"\r", ord("t"): b"\t", ord("b"): b"\b",
           ord("f"): b"\f"}
    while i < len(data):
        c = data[i]
        if c == 0x5C:  # backslash
            i += 1
            d = data[i]
            if d in esc:
                out += esc[d]
            elif 0x30 <= d <= 0x37:
                m = re.match(rb"[0-7]{1,3}", data[i:i + 3])
                assert m is not None
                out.append(int(m[0], 8) & 0xFF)
                i += len(m[0]) - 1
            elif d not in (0x0A, 0x0D):
                out.append(d)
        elif c == 0x28:
            depth += 1
            out.append(c)
        elif c == 0x29:
            depth -= 1
            if depth == 0:
                return bytes(out), i + 1
            out.append(c)
        else:
            out.append(c)
        i += 1
    return bytes(out), i


def tokens(data: bytes) -> list[Any]:
    """The objects of ``data``: numbers, names, strings (bytes), arrays, dicts, references
    (``("R", n)``) and operators; nested as PDF nests them."""
    stack: list[list[Any]] = [[]]
    i = 0
    while i < len(data):
        m = _TOKEN.match(data, i)
        if m is None:
            i += 1
            continue
        kind, text = m.lastgroup, m[0]
        i = m.end()
        if kind == "ws":
            continue
        if kind == "hex":
            digits = re.sub(rb"\s", b"", text[1:-1])
            stack[-1].append(bytes.fromhex((digits + b"0" * (len(digits) % 2)).decode()))
        elif kind == "lit":
            s, i = _literal(data, i)
            stack[-1].append(s)
        elif kind == "open":
            stack.append([text])
        elif kind == "close":
            items = stack.pop()
            if items[0] == b"<<":
                body = items[1:]
                stack[-1].append({str(body[k]): body[k + 1] for k in range(0, len(body) - 1, 2)})
            else:
                stack[-1].append(items[1:])
        elif kind == "name":
            stack[-1].append(Name(text[1:].decode("latin-1")))
        elif kind == "num":
            stack[-1].append(float(text))
        elif text == b"R" and len(stack[-1]) >= 2:
            stack[-1][-2:] = [("R", int(stack[-1][-2]))]
        else:
            stack[-1].append(Op(text.decode("latin-1")))
    while len(stack) > 1:  # an unclosed array: keep what it holds
        stack[-2].extend(stack.pop()[1:])
    return stack[0]


class Document:
    """A PDF's objects, and the text of each of its pages."""

    def __init__(self, pdf: bytes) -> None:
        assert pdf.startswith(b"%PDF"), pdf[:16]
        self.raw: dict[int, bytes] = {int(n): b for n, b in _OBJ.findall(pdf)}
        self._objs: dict[int, Any] = {}
        self._fonts: dict[int, tuple[dict[int, str], dict[int, float], int]] = {}

    def obj(self, ref: Any) -> Any:
        if not (isinstance(ref, tuple) and ref[0] == "R"):
            return ref
        n = ref[1]
        if n not in self._objs:
            body = self.raw[n]
            head = body.split(b"stream", 1)[0] if b"stream" in body else body
            toks = tokens(head)
            self._objs[n] = toks[0] if toks else None
        return self._objs[n]

    def stream(self, ref: Any) -> bytes:
        n = ref[1]
        d = self.obj(ref)
        m = _STREAM.search(self.raw[n])
        assert m is not None, n
        data = m[1]
        length = self.obj(d.get("Length")) if isinstance(d, dict) else None
        if isinstance(length, float):
            data = data[: int(length)]
        filt = d.get("Filter") if isinstance(d, dict) else None
        if filt == "FlateDecode" or filt == ["FlateDecode"]:
            data = zlib.decompress(data)
        return data

    def pages(self) -> list[Page]:
        """Every page in document order (the page tree's ``Kids``, depth first)."""
        roots = [n for n, b in self.raw.items() if re.match(rb"<<\s*/Type\s*/Pages\b", b)]
        kids: list[Any] = []
        seen_kid = {k[1] for n in roots for k in self.obj(("R", n)).get("Kids", [])}
        for n in roots:
            if n in seen_kid:
                continue
            kids += self._leaves(("R", n))
        return [self._page(k) for k in kids]

    def _leaves(self, ref: Any) -> list[Any]:
        d = self.obj(ref)
        if d.get("Type") == "Pages":
            return [x for k in d.get("Kids", []) for x in self._leaves(k)]
        return [ref]

    def _font(self, ref: Any) -> tuple[dict[int, str], dict[int, float], int]:
        """A font's code -> text map, code -> width (thousandths of the size) and code bytes."""
        n = ref[1]
        if n in self._fonts:
            return self._fonts[n]
        d = self.obj(ref)
        size = 2 if d.get("Subtype") == "Type0" else 1
        cmap: dict[int, str] = {}
        if "ToUnicode" in d:
            text = self.stream(d["ToUnicode"]).decode("latin-1")
            for block in re.findall(r"beginbfchar(.*?)endbfchar", text, re.S):
                for a, b in re.findall(r"<([0-9A-Fa-f]+)>\s*<([0-9A-Fa-f]+)>", block):
                    cmap[int(a, 16)] = bytes.fromhex(b).decode("utf-16-be")
            for block in re.findall(r"beginbfrange(.*?)endbfrange", text, re.S):
                for a, b, dst in re.findall(
                        r"<([0-9A-Fa-f]+)>\s*<([0-9A-Fa-f]+)>\s*(<[0-9A-Fa-f]+>|\[[^\]]*\])",
                        block):
                    lo, hi = int(a, 16), int(b, 16)
                    if dst.startswith("["):
                        for k, x in enumerate(re.findall(r"<([0-9A-Fa-f]+)>", dst)):
                            cmap[lo + k] = bytes.fromhex(x).decode("utf-16-be")
                    else:
                        start = bytes.fromhex(dst[1:-1]).decode("utf-16-be")
                        for k in range(hi - lo + 1):
                            cmap[lo + k] = start[:-1] + chr(ord(start[-1]) + k)
        widths: dict[int, float] = {}
        default = 1000.0
        if size == 2:
            cid = self.obj(self.obj(d["DescendantFonts"])[0])
            default = float(self.obj(cid.get("DW", 1000.0)))
            w = self.obj(cid.get("W", []))
            k = 0
            while k < len(w):
                first = int(w[k])
                if isinstance(w[k + 1], list):
                    for j, x in enumerate(w[k + 1]):
                        widths[first + j] = float(x)
                    k += 2
                else:
                    for c in range(first, int(w[k + 1]) + 1):
                        widths[c] = float(w[k + 2])
                    k += 3
        else:
            first = int(self.obj(d.get("FirstChar", 0.0)))
            for j, x in enumerate(self.obj(d.get("Widths", []))):
                widths[first + j] = float(x)
        widths[-1] = default
        self._fonts[n] = (cmap, widths, size)
        return self._fonts[n]

    def _page(self, ref: Any) -> Page:
        d = self.obj(ref)
        box = [float(x) for x in self.obj(d["MediaBox"])]
        page = Page(box[2] - box[0], box[3] - box[1])
        res = self.obj(d.get("Resources", {}))
        contents = self.obj(d.get("Contents"))
        refs = contents if isinstance(contents, list) else [d["Contents"]]
        data = b"\n".join(self.stream(r) for r in refs)
        self._run(tokens(data), res, page, [1.0, 0.0, 0.0, 1.0, 0.0, 0.0])
        return page

    def _run(self, toks: list[Any], res: dict[str, Any], page: Page, ctm: list[float],
             depth: int = 0) -> None:
        """Show the text of content ``toks`` (with resources ``res``) drawn under ``ctm``;
        a form drawn by ``Do`` (Skia puts text drawn with an opacity in one) is followed."""
        fonts = {k: v for k, v in self.obj(res.get("Font", {})).items()}
        forms = {k: v for k, v in self.obj(res.get("XObject", {})).items()}
        stack: list[tuple[list[float], tuple[float, float, float]]] = []
        colour = (0.0, 0.0, 0.0)
        tm = lm = [1.0, 0.0, 0.0, 1.0, 0.0, 0.0]
        font: Any = None
        fsize = 0.0
        leading = 0.0
        args: list[Any] = []
        for t in toks:
            if not isinstance(t, Op):
                args.append(t)
                continue
            if t == "q":
                stack.append((ctm, colour))
            elif t == "Q" and stack:
                ctm, colour = stack.pop()
            elif t == "rg" and len(args) >= 3:
                colour = (float(args[-3]), float(args[-2]), float(args[-1]))
            elif t == "g" and args:
                colour = (float(args[-1]),) * 3
            elif t == "Do" and depth < 8 and str(args[-1]) in forms:
                ref = forms[str(args[-1])]
                form = self.obj(ref)
                if form.get("Subtype") == "Form":
                    matrix = [float(x) for x in self.obj(form.get("Matrix", [1, 0, 0, 1, 0, 0]))]
                    self._run(tokens(self.stream(ref)), self.obj(form.get("Resources", {})),
                              page, _mul(matrix, ctm), depth + 1)
            elif t == "cm":
                ctm = _mul([float(x) for x in args[-6:]], ctm)
            elif t == "BT":
                tm = lm = [1.0, 0.0, 0.0, 1.0, 0.0, 0.0]
            elif t == "Tf":
                font, fsize = fonts.get(str(args[-2])), float(args[-1])
            elif t == "TL":
                leading = float(args[-1])
            elif t == "Tm":
                tm = lm = [float(x) for x in args[-6:]]
            elif t in ("Td", "TD"):
                tx, ty = float(args[-2]), float(args[-1])
                if t == "TD":
                    leading = -ty
                tm = lm = _mul([1.0, 0.0, 0.0, 1.0, tx, ty], lm)
            elif t == "T*":
                tm = lm = _mul([1.0, 0.0, 0.0, 1.0, 0.0, -leading], lm)
            elif t in ("Tj", "TJ", "'", '"') and font is not None:
                if t in ("'", '"'):
                    tm = lm = _mul([1.0, 0.0, 0.0, 1.0, 0.0, -leading], lm)
                parts = args[-1] if t == "TJ" else [args[-1]]
                tm = self._show(parts, font, fsize, tm, ctm, page, colour)
            args = []

    def _show(self, parts: list[Any], font: Any, fsize: float, tm: list[float],
              ctm: list[float], page: Page, colour: tuple[float, float, float]
              ) -> list[float]:
        cmap, widths, size = self._font(font)
        text, advance = "", 0.0
        for p in parts:
            if isinstance(p, float):
                advance -= p / 1000 * fsize
                continue
            for k in range(0, len(p) - size + 1, size):
                code = int.from_bytes(p[k:k + size], "big")
                text += cmap.get(code, "\ufffd")
                advance += widths.get(code, widths[-1]) / 1000 * fsize
        m = _mul(tm, ctm)
        x0, y0 = m[4], m[5]
        end = _mul([1.0, 0.0, 0.0, 1.0, advance, 0.0], m)
        # the page's own space has its origin at the bottom left: from the top, as read
        page.runs.append(Run(min(x0, end[4]), max(x0, end[4]), page.height - y0, text,
                             colour))
        return _mul([1.0, 0.0, 0.0, 1.0, advance, 0.0], tm)


def _mul(a: list[float], b: list[float]) -> list[float]:
    """The matrix product a x b of two PDF matrices [a b c d e f]."""
    return [a[0] * b[0] + a[1] * b[2], a[0] * b[1] + a[1] * b[3],
            a[2] * b[0] + a[3] * b[2], a[2] * b[1] + a[3] * b[3],
            a[4] * b[0] + a[5] * b[2] + b[4], a[4] * b[1] + a[5] * b[3] + b[5]]


def pdf_pages(pdf: bytes) -> list[Page]:
    """Each page of ``pdf`` with its runs of text."""
    return Document(pdf).pages()
