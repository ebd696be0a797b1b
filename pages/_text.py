"""Safe rendering for the pages: data shown as plain text, never as markdown or HTML.

:func:`show_text` shows answer text, judge reasons and anything else that came from data as plain
text (``st.code``); :func:`md_escape` makes any string inert before it goes into a
markdown-rendering element (``st.error``, ``st.table``...). The error boundary: a typed
:class:`evalcore.EvalcoreError` becomes ``st.error`` with its message (as a code span, so an id
from a link cannot become a link or an image), never a traceback.
"""

from __future__ import annotations

import contextlib
import math
import re
import string
from collections.abc import Iterator
from typing import Any

import pandas as pd
import streamlit as st

import evalcore

_MD_SPECIAL = frozenset(string.punctuation)
_MD_TABLE = {ord(c): f"&#{ord(c)};" for c in _MD_SPECIAL}  # str.translate: one C pass per value
#: what GFM turns into a link without any markup: a scheme, www. and an e-mail's @ (see md_escape)
_AUTOLINK = re.compile(r"(?i)\b(https?|ftp|mailto|xmpp|www)(?=[:.])|@")


def _joined(m: re.Match) -> str:
    word = m.group(0)
    return "\u2060@" if word == "@" else word[0] + "\u2060" + word[1:]


class Inert(str):
    """A string :func:`md_escape` made inert: escaping it again returns it unchanged, so a label
    escaped by its page and again by :func:`labelled_text` reads ``a, b`` rather than ``a&#44; b``."""


def md_escape(text: Any) -> str:
    """Make any string inert for a markdown-rendering element (st.error, st.warning, st.table...).

    Every ASCII punctuation character becomes a numeric character reference (``&#33;``), which
    markdown shows as that character but never reads as syntax: no links, images, emphasis, HTML,
    ``:material/...:`` icons (which would fetch from Google), ``$`` maths. GFM's literal
    autolinks (``http://...``, ``www.``, ``name@host``) are still found through the references,
    so a word joiner (U+2060, invisible) goes inside each scheme, ``www`` and before each ``@``:
    nothing that looks like an address becomes a link (tests/test_browser_injection.py).

    Text is escaped once: an :class:`Inert` string (what this returns) comes back as it is, so
    escaping twice cannot show ``&#44;`` on screen (tests/test_page_findings.py)."""
    if isinstance(text, Inert):
        return text
    return Inert(_AUTOLINK.sub(_joined, str(text)).translate(_MD_TABLE))


def code_span(text: Any) -> str:
    """``text`` as one markdown code span: shown verbatim (monospace) inside a markdown element.
    Unlike escaping, this also stops GFM from turning ``http://...`` into a link, because links
    are found in text nodes after parsing and a code span is not one."""
    text = " ".join(str(text).split())  # a code span is one line
    fence = "`" * (max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    return f"{fence} {text} {fence}"


def show_error(err: evalcore.EvalcoreError) -> None:
    """A typed error as one st.error line; the message may quote ids from a link, so it is shown
    as a code span (verbatim, no link, no image, no HTML)."""
    st.error(code_span(err.message))


@contextlib.contextmanager
def boundary() -> Iterator[None]:
    """Show a typed evalcore error as ``st.error`` and carry on with the rest of the page."""
    try:
        yield
    except evalcore.EvalcoreError as err:
        show_error(err)


def missing(value: Any) -> bool:
    """None, or the NaN that pandas uses for a null in a query result."""
    return value is None or (isinstance(value, float) and math.isnan(value))


def or_none(value: Any) -> Any:
    return None if missing(value) else value


def judge_not_pinned(rows: list[Any]) -> None:
    """One caption naming the runs whose judge model is a floating alias (their ``judge_alias_warning``):
    the Runs and Cost pages say it in the same words."""
    floating = [r for r in rows if r.judge_alias_warning]
    if floating:
        st.caption(
            md_escape(
                "Judge not pinned: "
                + "; ".join(f"{r.run_id}: {r.judge_alias_warning}" for r in floating)
                + " (a snapshot named without its date: re-import with --judge-pinned if it is one)."
            )
        )


def show_text(text: Any, *, empty: str = "(none)") -> None:
    """Show text from the data (answers, inputs, reasons) verbatim as plain monospace text:
    ``st.code`` never interprets markdown or HTML, so nothing in it can load remote content."""
    st.code(empty if missing(text) else str(text), language=None, wrap_lines=True)


def plain_table(rows: list[dict[str, Any]]) -> None:
    """A small table as HTML (st.table): every value shown whole and wrapped, never cut at a
    column's edge (a canvas dataframe truncates at 1024 px), made inert for markdown."""
    if rows:
        st.table(
            pd.DataFrame(
                [
                    {k: "-" if missing(v) else (md_escape(v) if isinstance(v, str) else v) for k, v in r.items()}
                    for r in rows
                ]
            ).fillna("-"),
            border="horizontal",
            hide_index=True,
        )


#: the main column's width at a 1024 px window (Streamlit's sidebar open), and the px a canvas
#: table (st.dataframe) gives a character and a cell's padding: what tells a table that cannot fit
NARROW_PX, CHAR_PX, CELL_PX = 560, 7.5, 24


def wide_table(frame: pd.DataFrame, *, pin: str, **kw: Any) -> Any:
    """``st.dataframe(frame, **kw)`` with the column that names a row (``pin``) pinned, so it stays in
    view while the table scrolls sideways; when its columns cannot fit a 1024 px window (their
    headers' and values' widths, estimated), a caption says so and names the columns it scrolls
    through, rather than cutting them at the page's edge without a word."""
    config = dict(kw.pop("column_config", None) or {})
    config.setdefault(pin, st.column_config.Column(pinned=True))
    out = st.dataframe(frame, column_config=config, hide_index=True, **kw)
    cols = [str(c) for c in frame.columns]
    widths = [
        CELL_PX + CHAR_PX * max([len(c), *(min(len(str(v)), 24) for v in frame[c].head(50))]) for c in frame.columns
    ]
    if sum(widths) > NARROW_PX:
        rest = [c for c in cols if c != pin]
        st.caption(
            md_escape(
                f"{len(cols)} columns, wider than the page on a narrow screen: {pin} stays in view while the "
                f"table scrolls sideways (shift + wheel, or drag) through {', '.join(rest)}."
            )
        )
    return out


def labelled_text(label: str, text: Any, *, empty: str = "(none)") -> None:
    """A caption above a block of text from the data; the caption may name ids from the data
    too, so it is made inert as well."""
    st.caption(md_escape(label))
    show_text(text, empty=empty)


PCT = st.column_config.NumberColumn(format="%.1f%%")  # a dataframe column of pct100 values


def pct100(rate: float | None) -> float | None:
    """A rate in percent, for a :data:`PCT` column."""
    return None if rate is None else 100 * rate


def pct_ci(ci: list[float | None] | None) -> str:
    """A 95% interval in percent, ``[36.0, 44.2]``, or a dash."""
    if not ci or ci[0] is None or ci[1] is None:
        return "-"
    return f"[{100 * ci[0]:.1f}, {100 * ci[1]:.1f}]"


def verdict_word(passed: bool | None) -> str:
    """A verdict as the pages write it: pass, FAIL or ERROR (no verdict)."""
    return "ERROR" if passed is None else ("pass" if passed else "FAIL")


def number(value: Any, digits: int = 2) -> Any:
    """A value from the data as the pages show it: a number (or a numeric string, as label values
    are) with more than ``digits`` decimals rounded to ``digits`` (a mean of three 1-5 ratings,
    ``2.6666666666666665``, is ``2.67``; it carries no more); anything else, whole numbers
    included, as it is. Downloads keep the stored value."""
    if isinstance(value, bool) or missing(value):
        return value
    try:
        x = float(value)
    except (TypeError, ValueError):
        return value
    if not math.isfinite(x) or round(x, digits) == x:
        return value
    return f"{x:.{digits}f}"


def pct(value: float | None, digits: int = 1) -> str:
    """A rate as a percentage string (the app's displayed precision), or a dash."""
    return "-" if value is None else f"{100 * value:.{digits}f}%"
