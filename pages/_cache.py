"""The cached calls of evalcore's functions (Streamlit's ``st.cache_data``, per server), each keyed
by the fingerprints of what it reads (:mod:`pages._ui`), and the charts drawn from their cached
Vega-Lite specs; :func:`preload` imports what the pages load (app.py calls it before the server takes a request).
"""

from __future__ import annotations

import contextlib
import gc
import importlib
from collections.abc import Callable
from typing import Any, Concatenate, ParamSpec, TypeVar

import streamlit as st

import evalcore
from pages._ui import fingerprint, open_store, state_fingerprint, store, suite_fingerprint

P = ParamSpec("P")
R = TypeVar("R")


def _resolve(module: str, name: str) -> Callable[..., Any]:
    """A function of evalcore by where it is defined (the cached calls below are keyed by these
    two strings, which Streamlit hashes cheaply; the pages pass the function itself)."""
    return getattr(importlib.import_module(module), name)


def summary(fn: Callable[Concatenate[evalcore.Store, P], R], *args: P.args, **kwargs: P.kwargs) -> R:
    """One of the store-wide summaries (``evalcore.runs_summary``, ``generations_summary``,
    ``suites_summary``, ``data_overview``), cached until the data directory or the suite versions
    in the state directory change: widgets rerun the page, and these scan every run. ``kwargs``:
    e.g. ``include_holdout`` for runs and generations."""
    s = store()
    if fn.__name__ in ("runs_summary", "generations_summary"):
        # one cache entry whether a page says include_holdout=False or nothing (the default)
        kwargs["include_holdout"] = bool(kwargs.get("include_holdout", False))
    fp = fingerprint(s) + suite_fingerprint(s)
    return _call(fn.__module__, fn.__name__, str(s.data), str(s.state), fp, tuple(args), tuple(sorted(kwargs.items())))


@st.cache_data(show_spinner=False, max_entries=160)
def _call(module: str, name: str, data: str, state: str, fp: tuple, args: tuple, kwargs: tuple) -> Any:
    """``module.name(store, *args, **kwargs)``, cached per server by the fingerprint its caller
    chose (:func:`summary`, :func:`analysis_call`, :func:`suite_call`); each entity it reads is
    read once (evalcore.pinned)."""
    with evalcore.pinned():
        return _resolve(module, name)(open_store(data, state), *args, **dict(kwargs))


def analysis_call(fn: Callable[Concatenate[evalcore.Store, P], R], *args: P.args, **kwargs: P.kwargs) -> R:
    """``fn(store, *args, **kwargs)`` (a figure or drill-down of evalcore's public door, e.g.
    ``analysis.attribution``), cached until the data or the label store changes, so that a widget
    click does not recompute an 18M-row aggregate (arguments must be hashable)."""
    s = store()
    fp = fingerprint(s) + state_fingerprint(s)
    return _call(fn.__module__, fn.__name__, str(s.data), str(s.state), fp, tuple(args), tuple(sorted(kwargs.items())))


def suite_call(fn: Callable[Concatenate[evalcore.Store, P], R], *args: P.args, **kwargs: P.kwargs) -> R:
    """``fn(store, *args, **kwargs)`` of suite upkeep (e.g. ``review.check``), cached until the
    data, the label store or the suite versions change."""
    s = store()
    fp = fingerprint(s) + state_fingerprint(s) + suite_fingerprint(s)
    return _call(fn.__module__, fn.__name__, str(s.data), str(s.state), fp, tuple(args), tuple(sorted(kwargs.items())))


@st.cache_data(show_spinner=False, max_entries=128)
def _pure(module: str, name: str, args: tuple, kwargs: tuple, spec: bool) -> Any:
    out = _resolve(module, name)(*args, **dict(kwargs))
    return out.to_dict(validate=False) if spec else out


def pure_call(fn: Callable[P, R], *args: P.args, **kwargs: P.kwargs) -> R:
    """``fn(*args, **kwargs)`` for a function of its arguments alone (no store: e.g. the power of a
    comparison, statsmodels' root finding, 0.02 s a call), cached by them."""
    return _pure(fn.__module__, fn.__name__, args, tuple(sorted(kwargs.items())), False)


def chart_spec(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> dict[str, Any]:
    """The Vega-Lite spec of the chart ``fn(*args, **kwargs)`` (a chart of
    :mod:`evalcore.analysis.charts`), cached by its arguments: altair's constructors copy and check
    every channel (0.02-0.05 s a chart), and a page's rerun or a new session draws the same charts
    from the same (cached) figures."""
    return _pure(fn.__module__, fn.__name__, args, tuple(sorted(kwargs.items())), True)


def chart(where: Any, c: Any, **kw: Any) -> Any:
    """Draw a chart of :mod:`evalcore.analysis.charts` (its spec from :func:`chart_spec`, or the
    chart itself) in ``where`` (``st`` or a column) as its Vega-Lite spec: ``st.altair_chart``
    validates every spec against the Vega-Lite JSON schema on every rerun (0.05-0.1 s a chart);
    evalcore's charts are validated by their tests instead (tests/test_charts.py). ``kw``:
    st.vega_lite_chart's (width, key, on_select, selection_mode)."""
    kw.setdefault("width", "stretch")
    return where.vega_lite_chart(c if isinstance(c, dict) else c.to_dict(validate=False), **kw)


def chart_points(event: Any, name: str) -> list[dict[str, Any]]:
    """The points of the selection ``name`` of a chart drawn with ``on_select="rerun"``."""
    return [x for x in (((event or {}).get("selection") or {}).get(name) or []) if isinstance(x, dict)]


#: What the pages import, beyond Streamlit itself: the data stack (pandas, pyarrow, DuckDB), Altair
#: (the charts), scipy's and statsmodels' tests, krippendorff, and the analysis modules `evalcore`
#: loads on first use (lazily). :func:`preload` imports them before the server takes a request (app.py).
PRELOAD = (
    "pandas",
    "pyarrow",
    "pyarrow.compute",  # (the report card encodes people's labels with it)
    "duckdb",
    "evalcore.analysis.charts",
    "scipy.stats",
    "scipy.optimize",
    "statsmodels.stats.power",
    "krippendorff",
    "evalcore.analysis.failures",
    "evalcore.analysis.summary",
    "evalcore.analysis.comparison",
    "evalcore.analysis.instruments",
    "evalcore.analysis.harness",
    "evalcore.analysis.scores",
    "evalcore.analysis.gating",
    "evalcore.analysis.cost",
    "evalcore.review",
    "evalcore.review.judges",
    "evalcore.review.reportcard",
    "evalcore.pairwise",
)


def preload() -> None:
    """Import :data:`PRELOAD` and the cost projection's tokenizers. A module that fails to import
    is left to the page that needs it, which says why."""
    for name in PRELOAD:
        with contextlib.suppress(Exception):
            importlib.import_module(name)
    with contextlib.suppress(Exception):  # the cost projection's tokenizers (0.5 s)
        importlib.import_module("evalcore.llm.client").warm_encodings()
    # What is alive now (every module, class and function imported) lives as long as the server:
    # move it out of the cyclic collector's reach, so that its full collections, which a page
    # building many objects (the report card's 36,000 labels) triggers several times, traverse only
    # what the pages made (0.1 s of the Agreement page's first render at 18M).
    gc.freeze()
