"""Blinding: the normalisation that strips formatting tells, and length matching. The
identifiability check that measures whether the arms can still be told apart is
:mod:`evalcore.pairwise.leakage`; its settings (:data:`FEATURES`, :data:`RIDGE`,
:data:`DEFAULT_FOLDS`, :data:`DEFAULT_PERMUTATIONS`, :data:`DEFAULT_BOOT`, :data:`LEVEL`) are
defined here.

Normalisation (:func:`normalise`) is the transform a blinded session applies to both arms'
answers before anyone sees them. Each step is named (:data:`NORMALISATIONS`;
:func:`check_steps` puts them in canonical order and refuses unknown ones), and a session records
the steps it used:

* ``headings``     heading markers go (``## Title`` -> ``Title``; a setext ``===`` / ``---``
  underline goes), the heading's words stay;
* ``bullets``      bullet glyphs and list numbers at the start of a line go (``- x``, ``* x``,
  ``• x``, ``1. x``, ``2) x``), with the indentation in front of them;
* ``blank-lines``  trailing spaces go, runs of blank lines become one blank line, and blank lines
  at either end go.

What is code is decided by a Markdown parser (markdown-it-py, CommonMark: :func:`structure`), not
by the line rules: fenced code blocks (```` ``` ```` and ``~~~``, any language tag, the fence
lines included), indented code blocks and inline code spans are left byte for byte as written,
so ``# install first`` inside a fence stays a comment and a diff keeps its ``-`` and ``+``
lines; only the prose around them is normalised. Which lines are headings (ATX or setext) is the
parser's answer too. List markers are a line rule on prose lines, because a reader sees ``•`` or a
``2)`` after a sentence as a bullet whether or not CommonMark makes it a list item.

Length passes straight through normalisation: that is what the identifiability check measures.
:func:`length_match` trims the longer answer of a pair to about the shorter's word count
(:func:`word_count`; :func:`trim_to_words` cuts at the nearest sentence end), which removes the
length tell at the price of the trimmed text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
from markdown_it import MarkdownIt
from markdown_it.token import Token

NORMALISATIONS = ("headings", "bullets", "blank-lines")
FEATURES = ("length", "headings", "bullets", "blank_lines", "marker")
#: the longest opening of an answer a marker may be (a tag glued to the text: ``v2:Here``)
MARKER_PREFIX = 12
RIDGE = 0.1
DEFAULT_FOLDS = 5
DEFAULT_PERMUTATIONS = 199
DEFAULT_BOOT = 2000
LEVEL = 0.95

_ATX = re.compile(r"^ {0,3}#{1,6}(?:[ \t]+|$)")
_BULLET = re.compile(r"^[ \t]*(?:[-*+\u2022\u2023\u25e6\u25aa\u25cf\u2013]|\d{1,3}[.)])[ \t]+")
_SENTENCE_END = re.compile(r"[.!?][\"')\]\u201d\u2019]*$")


# --------------------------------------------------------------------------- normalisation


def check_steps(steps: Iterable[str]) -> list[str]:
    """The normalisation steps in their canonical order; unknown names raise ValueError."""
    steps = [s.strip() for s in steps if s and s.strip()]
    bad = [s for s in steps if s not in NORMALISATIONS]
    if bad:
        raise ValueError(f"unknown normalisation {', '.join(bad)} (known: {', '.join(NORMALISATIONS)})")
    return [s for s in NORMALISATIONS if s in steps]


_MD = MarkdownIt("commonmark")


@dataclass(frozen=True)
class Structure:
    """What the Markdown parser says about each line of a text (lines split on ``\n`` after
    ``\r\n`` and ``\r`` become ``\n``): ``code`` lines belong to a fenced or indented code
    block (left as written); ``atx`` lines are ATX headings; ``underlines`` are setext heading
    underlines; a line in ``starts_in_code`` begins inside an inline code span that started on an
    earlier line, one in ``ends_in_code`` ends inside one (its start or its end is then code)."""

    lines: list[str]
    code: frozenset[int]
    atx: frozenset[int]
    underlines: frozenset[int]
    starts_in_code: frozenset[int]
    ends_in_code: frozenset[int]

    def prose(self, i: int) -> bool:
        """Line i's start is prose (neither a code block's line nor inside inline code)."""
        return i not in self.code and i not in self.starts_in_code


def _split(text: str) -> list[str]:
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def _inline_spans(token: Token, offsets: list[int], lines: list[str]) -> list[tuple[int, int]]:
    """Character ranges (in the whole text) of the inline code spans of one inline token, found by
    the parser (``code_inline`` children) and located in the source lines of the token: the next
    backtick run of the span's own length whose enclosed text is the span's content."""
    codes = [c for c in token.children or [] if c.type == "code_inline"]
    if not codes or token.map is None:
        return []
    lo, hi = token.map
    base = offsets[lo]
    block = "\n".join(lines[lo:hi])
    runs = [(m.start(), m.end()) for m in re.finditer(r"`+", block)]
    out, at = [], 0
    for c in codes:
        n = len(c.markup)
        same = [r for r in runs if r[1] - r[0] == n and r[0] >= at]
        for i, (s0, e0) in enumerate(same):
            close = next(((s1, e1) for s1, e1 in same[i + 1 :]), None)
            if close is None:
                break
            if " ".join(block[e0 : close[0]].split()) == " ".join(c.content.split()):
                out.append((base + s0, base + close[1]))
                at = close[1]
                break
    return out


def structure(text: str) -> Structure:
    """Parse ``text`` as CommonMark (markdown-it-py) and say which lines are code or headings."""
    lines = _split(text)
    source = "\n".join(lines)
    offsets = [0]
    for ln in lines:
        offsets.append(offsets[-1] + len(ln) + 1)
    code: set[int] = set()
    atx: set[int] = set()
    under: set[int] = set()
    spans: list[tuple[int, int]] = []
    for t in _MD.parse(source):
        if t.map is None:
            continue
        lo, hi = t.map
        if t.type in ("fence", "code_block"):
            code.update(range(lo, min(hi, len(lines))))
        elif t.type == "heading_open":
            if t.markup.startswith("#"):
                atx.add(lo)
            else:
                under.add(hi - 1)
        elif t.type == "inline":
            spans += _inline_spans(t, offsets, lines)
    starts, ends = set(), set()
    for s0, e0 in spans:
        for i in range(len(lines)):
            if s0 < offsets[i] < e0:
                starts.add(i)
            if s0 < offsets[i] + len(lines[i]) < e0:
                ends.add(i)
    return Structure(lines, frozenset(code), frozenset(atx), frozenset(under), frozenset(starts), frozenset(ends))


def normalise(text: str, steps: Iterable[str] = NORMALISATIONS) -> str:
    """``text`` with the named formatting tells removed from its prose, its code left as written
    (see the module docstring). With no steps the text is returned unchanged; the steps are
    idempotent."""
    steps = check_steps(steps)
    if not steps:
        return text
    st = structure(text)
    out: list[tuple[str, bool]] = []  # (line, is it prose for the blank-line rule)
    for i, line in enumerate(st.lines):
        prose = st.prose(i)
        if "headings" in steps:
            if i in st.underlines:
                continue
            if i in st.atx and prose:
                shown = _ATX.sub("", line, count=1)
                if shown != line and i not in st.ends_in_code:
                    shown = re.sub(r"[ \t]+#+[ \t]*$", "", shown)  # closing #s
                line = shown
        if "bullets" in steps and prose:
            line = _BULLET.sub("", line, count=1)
        out.append((line, i not in st.code and i not in st.ends_in_code))
    if "blank-lines" in steps:
        kept: list[tuple[str, bool]] = []
        for line, free in out:
            if free:
                line = line.rstrip()
                if not line and kept and kept[-1] == ("", True):
                    continue
            kept.append((line, free))
        while kept and kept[0] == ("", True):
            kept.pop(0)
        while kept and kept[-1] == ("", True):
            kept.pop()
        out = kept
    return "\n".join(line for line, _ in out)


def word_count(text: str) -> int:
    return len(text.split())


def trim_to_words(text: str, n: int, slack: float = 0.15) -> str:
    """``text`` cut to about ``n`` words, keeping its whitespace and line breaks. The cut falls at
    the sentence end nearest to word ``n`` within ``slack`` of it either way (a text that ends
    mid-sentence is a tell of its own; and always cutting short of ``n`` would make the trimmed
    answer the shorter one of its pair, a tell pointing the other way), else right after word
    ``n``."""
    tokens = list(re.finditer(r"\S+", text))
    if len(tokens) <= n:
        return text
    if n <= 0:
        return ""
    lo = max(int(np.floor((1 - slack) * n)), 1)
    hi = min(int(np.ceil((1 + slack) * n)), len(tokens))
    ends = [i + 1 for i in range(lo - 1, hi) if _SENTENCE_END.search(tokens[i].group())]
    words = min(ends, key=lambda w: (abs(w - n), w)) if ends else n
    return text[: tokens[words - 1].end()]


def length_match(a: str, b: str) -> tuple[str, str]:
    """Trim the longer of two answers to the shorter's word count (:func:`trim_to_words`)."""
    na, nb = word_count(a), word_count(b)
    if na > nb:
        return trim_to_words(a, nb), b
    if nb > na:
        return a, trim_to_words(b, na)
    return a, b
