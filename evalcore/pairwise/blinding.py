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
  underline under a line of text goes), the heading's words stay;
* ``bullets``      bullet glyphs and list numbers at the start of a line go (``- x``, ``* x``,
  ``• x``, ``1. x``, ``2) x``), with the indentation in front of them;
* ``blank-lines``  trailing spaces go, runs of blank lines become one blank line, and blank lines
  at either end go.

Length passes straight through normalisation: that is what the identifiability check measures.
:func:`length_match` trims the longer answer of a pair to about the shorter's word count
(:func:`word_count`; :func:`trim_to_words` cuts at the nearest sentence end), which removes the
length tell at the price of the trimmed text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import numpy as np

NORMALISATIONS = ("headings", "bullets", "blank-lines")
FEATURES = ("length", "headings", "bullets", "blank_lines")
RIDGE = 0.1
DEFAULT_FOLDS = 5
DEFAULT_PERMUTATIONS = 199
DEFAULT_BOOT = 2000
LEVEL = 0.95

_ATX = re.compile(r"^ {0,3}#{1,6}(?:[ \t]+|$)")
_SETEXT = re.compile(r"^ {0,3}(?:=+|-{2,})[ \t]*$")
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


def _is_setext(lines: list[str], i: int) -> bool:
    """Line i underlines the line above it (a setext heading), rather than being a rule."""
    if not _SETEXT.match(lines[i]) or i == 0:
        return False
    above = lines[i - 1]
    return bool(above.strip()) and not _BULLET.match(above) and not _SETEXT.match(above)


def normalise(text: str, steps: Iterable[str] = NORMALISATIONS) -> str:
    """``text`` with the named formatting tells removed (see the module docstring). With no
    steps the text is returned unchanged; the steps are idempotent."""
    steps = check_steps(steps)
    if not steps:
        return text
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    out: list[str] = []
    for i, line in enumerate(lines):
        if "headings" in steps:
            if _is_setext(lines, i):
                continue
            line = _ATX.sub("", line, count=1)
            line = re.sub(r"[ \t]+#+[ \t]*$", "", line) if line != lines[i] else line  # closing #s
        if "bullets" in steps:
            line = _BULLET.sub("", line, count=1)
        out.append(line)
    text = "\n".join(out)
    if "blank-lines" in steps:
        text = "\n".join(line.rstrip() for line in text.split("\n"))
        text = re.sub(r"\n{3,}", "\n\n", text).strip("\n")
    return text


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
