"""Streamlit-only helpers shared by app.py and the pages (evalcore itself never imports streamlit).

* where the data and state directories come from (``-- --data/--state``, ``EVALCORE_DATA`` /
  ``EVALCORE_STATE``, the defaults) and the one cached :class:`evalcore.Store` over them;
* the error boundary: a typed :class:`evalcore.EvalcoreError` becomes ``st.error`` with its
  message (as a code span, so an id from a link cannot become a link or an image), never a
  traceback;
* deep links: read and set query parameters (run, item, round, criterion, session);
* safe rendering: :func:`show_text` shows answer text, judge reasons and anything else that came
  from data as plain text (``st.code``), never as markdown or HTML; :func:`md_escape` makes any
  string inert before it goes into a markdown-rendering element (``st.error``, ``st.table``...).
"""

from __future__ import annotations

import argparse
import contextlib
import math
import re
import string
from pathlib import Path
from typing import Any, Iterator, Sequence

import streamlit as st

import evalcore
from evalcore import queries

_DIRS_KEY = "_evalcore_dirs"
_MD_SPECIAL = frozenset(string.punctuation)


# --------------------------------------------------------------------------- directories and store


def resolve_dirs(argv: Sequence[str] | None) -> tuple[Path, Path]:
    """Data and state directories: ``--data`` / ``--state`` after ``--`` on the ``streamlit run``
    line, else ``EVALCORE_DATA`` / ``EVALCORE_STATE``, else the bundled demo and
    ``./.evalcore-state``."""
    parser = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    parser.add_argument("--data")
    parser.add_argument("--state")
    args, _unknown = parser.parse_known_args(list(argv or []))
    data = Path(args.data) if args.data else evalcore.default_data_dir()
    state = Path(args.state) if args.state else evalcore.default_state_dir()
    return data.expanduser().resolve(), state.expanduser().resolve()


def display_path(path: Path) -> str:
    """A directory as the sidebar shows it: relative to the working directory when inside it."""
    try:
        return str(Path(path).relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def set_dirs(data: Path, state: Path) -> None:
    st.session_state[_DIRS_KEY] = (str(data), str(state))


@st.cache_resource(show_spinner=False)
def open_store(data: str, state: str) -> evalcore.Store:
    """One Store per (data, state) for the whole server: it caches validated manifests and holds
    one DuckDB connection (each query takes its own cursor, so sessions can share it)."""
    return evalcore.Store(data, state)


def store() -> evalcore.Store:
    """The Store of this session (app.py sets the directories before any page runs)."""
    dirs = st.session_state.get(_DIRS_KEY)
    if dirs is None:
        data, state = resolve_dirs([])
        dirs = (str(data), str(state))
    return open_store(*dirs)


def fingerprint(data_store: evalcore.Store) -> tuple:
    """Changes whenever a suite, generation, run, session or label set is added or replaced
    (the store writes whole directories with an atomic rename, which touches the parent)."""
    out = []
    for sub in ("suites", "generations", "runs", "sessions", "labels"):
        try:
            out.append((sub, (data_store.data / sub).stat().st_mtime_ns))
        except FileNotFoundError:
            out.append((sub, None))
    return tuple(out)


_SUMMARIES = {"runs_summary": queries.runs_summary, "generations_summary": queries.generations_summary,
              "suites_summary": queries.suites_summary, "data_overview": queries.data_overview}


@st.cache_data(show_spinner=False, max_entries=32)
def _summary(name: str, data: str, state: str, fp: tuple) -> Any:
    return _SUMMARIES[name](open_store(data, state))


def summary(name: str) -> Any:
    """One of the store-wide summaries (runs, generations, suites, overview), cached until the
    data directory changes: widgets rerun the page, and these scan every run."""
    s = store()
    return _summary(name, str(s.data), str(s.state), fingerprint(s))


# --------------------------------------------------------------------------- errors


def state_fingerprint(data_store: evalcore.Store) -> tuple:
    """Changes whenever the label store is written (WAL mode appends to the -wal file)."""
    out = []
    for name in ("labels.sqlite", "labels.sqlite-wal"):
        try:
            out.append((name, (Path(data_store.state) / name).stat().st_mtime_ns))
        except FileNotFoundError:
            out.append((name, None))
    return tuple(out)


@st.cache_data(show_spinner=False, max_entries=64)
def _analysis(name: str, data: str, state: str, fp: tuple, args: tuple, kwargs: tuple) -> Any:
    from evalcore import analysis
    return getattr(analysis, name)(open_store(data, state), *args, **dict(kwargs))


def analysis_call(name: str, *args: Any, **kwargs: Any) -> Any:
    """``evalcore.analysis.<name>(store, *args, **kwargs)``, cached until the data or the label
    store changes, so that a widget click does not recompute an 18M-row aggregate."""
    s = store()
    return _analysis(name, str(s.data), str(s.state), fingerprint(s) + state_fingerprint(s), tuple(args),
                     tuple(sorted(kwargs.items())))


@st.cache_data(show_spinner=False, max_entries=64)
def _module_call(module: str, name: str, data: str, state: str, fp: tuple, args: tuple, kwargs: tuple) -> Any:
    import importlib
    return getattr(importlib.import_module(f"evalcore.{module}"), name)(open_store(data, state), *args, **dict(kwargs))


def cached_call(module: str, name: str, *args: Any, **kwargs: Any) -> Any:
    """``evalcore.<module>.<name>(store, *args, **kwargs)``, cached like :func:`analysis_call`
    (arguments must be hashable)."""
    s = store()
    return _module_call(module, name, str(s.data), str(s.state), fingerprint(s) + state_fingerprint(s), tuple(args),
                        tuple(sorted(kwargs.items())))


def criteria_runs() -> list[dict]:
    """Runs with per-criterion verdicts (not pairwise graders); stops the page with a note when
    there are none."""
    runs = [r for r in summary("runs_summary") if r["kind"] == "criteria" and r["verdicts"]]
    if not runs:
        st.info("No runs with criterion verdicts in this data directory.")
        st.stop()
    return runs


def md_escape(text: Any) -> str:
    """Make any string inert for a markdown-rendering element (st.error, st.warning, st.table...).

    Every ASCII punctuation character becomes a numeric character reference (``&#33;``), which
    markdown shows as that character but never reads as syntax: no links, images, emphasis, HTML,
    ``:material/...:`` icons (which would fetch from Google), ``$`` maths, and no GFM autolink
    (a backslash escape does not stop ``http://...`` from becoming a link)."""
    return "".join(f"&#{ord(c)};" if c in _MD_SPECIAL else c for c in str(text))


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


# --------------------------------------------------------------------------- deep links


def qp(name: str, default: str | None = None) -> str | None:
    """A query parameter, or ``default`` when absent or empty."""
    value = st.query_params.get(name)
    return value if value not in (None, "") else default


def qp_int(name: str, default: int) -> int:
    """An integer query parameter; a value that is not an integer counts as absent."""
    value = qp(name)
    try:
        return int(value) if value is not None else default
    except ValueError:
        return default


def set_qp(**params: Any) -> None:
    """Set query parameters; ``None`` removes one."""
    for name, value in params.items():
        if value is None or value == "":
            if name in st.query_params:
                del st.query_params[name]
        else:
            st.query_params[name] = str(value)


def sync_widget(key: str, param: str, options: Sequence[Any] | None = None) -> None:
    """Before a widget with ``key`` is drawn: make it show the query parameter ``param`` when the
    link says something else (a pasted deep link, a click elsewhere that set the parameter)."""
    value = qp(param)
    if value is None or (options is not None and value not in options):
        return
    if st.session_state.get(key) != value:
        st.session_state[key] = value


def widget_to_qp(key: str, param: str, *, clear: Sequence[str] = ()) -> None:
    """on_change callback: copy a widget's value into the query parameter (and drop others)."""
    set_qp(**{param: st.session_state.get(key)}, **{c: None for c in clear})


# --------------------------------------------------------------------------- safe rendering


def missing(value: Any) -> bool:
    """None, or the NaN that pandas uses for a null in a query result."""
    return value is None or (isinstance(value, float) and math.isnan(value))


def or_none(value: Any) -> Any:
    return None if missing(value) else value


def show_text(text: Any, *, empty: str = "(none)") -> None:
    """Show text from the data (answers, inputs, reasons) verbatim as plain monospace text:
    ``st.code`` never interprets markdown or HTML, so nothing in it can load remote content."""
    st.code(empty if missing(text) else str(text), language=None, wrap_lines=True)


def labelled_text(label: str, text: Any, *, empty: str = "(none)") -> None:
    """A fixed caption (our own words) above a block of text from the data."""
    st.caption(label)
    show_text(text, empty=empty)


def not_built(issue: int, what: str) -> None:
    """The one line a placeholder page shows."""
    st.info(f"Not built yet: {what} is built in issue {issue}.")


def pct(value: float | None, digits: int = 1) -> str:
    """A rate as a percentage string (the app's displayed precision), or a dash."""
    return "-" if value is None else f"{100 * value:.{digits}f}%"


def _leave_pages_directory_mode() -> None:
    """Make a deep link that is the first request of a fresh server go through app.py.

    Streamlit decides at server start that an app beside a ``pages/`` folder is a v1 multipage
    app, and until app.py has called ``st.navigation`` once in the process, a first request for
    ``/attribution`` runs pages/2_attribution.py alone: no page config, no data directory from the
    command line, raw file names in the sidebar. Every page imports this module, so the first
    such run lands here: switch the process to ``st.navigation`` mode and rerun, which runs app.py
    and resolves the same URL path to the same page. (Streamlit internals: checked by
    tests/test_browser_deeplink.py.)"""
    try:
        from streamlit.runtime.pages_manager import PagesManager
    except ImportError:  # pragma: no cover - a Streamlit without it has no v1 mode to leave
        return
    if PagesManager.uses_pages_directory:
        PagesManager.uses_pages_directory = False
        st.rerun()


_leave_pages_directory_mode()
