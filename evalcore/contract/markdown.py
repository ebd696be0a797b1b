r"""Data strings written into the Markdown evalcore produces for people to post (``gate
--markdown``, ``compare --markdown``, the ledger's export): shown as the text they are, never read
as markup.

:func:`md_text` turns ``& < >`` into entity references (no HTML), backslash-escapes what starts
markup inside a line (``\ ` * _ [ ] ! | ~ $``: no emphasis, code, links, images, table cells,
strikethrough or maths; the text is never at the start of a line), and puts a word
joiner (U+2060, invisible) inside ``http``, ``https``, ``ftp``, ``mailto``, ``www`` and before
``@``, because GitHub's literal autolinks find addresses in escaped text too. Our own words are
not passed through it; ids in code spans need nothing (an id holds no backtick).
"""

from __future__ import annotations

import re
from typing import Any

_ENTITIES = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}
#: what starts markup inside a line: emphasis, code, links and images, tables, strikethrough, maths
_MARKUP = "\\`*_[]!|~$"
_TABLE = {**{ord(c): "\\" + c for c in _MARKUP}, **{ord(c): e for c, e in _ENTITIES.items()}}
_AUTOLINK = re.compile(r"(?i)\b(https?|ftp|mailto|xmpp|www)(?=[:.])|@")


def _joined(m: re.Match) -> str:
    word = m.group(0)
    return "\u2060@" if word == "@" else word[0] + "\u2060" + word[1:]


def md_text(value: Any) -> str:
    """``value`` as inert Markdown text on one line (see the module docstring)."""
    text = " ".join(str(value).split())
    return _AUTOLINK.sub(_joined, text).translate(_TABLE)
