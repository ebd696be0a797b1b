"""Streamlit-only helpers shared by app.py and the pages (evalcore itself never imports streamlit).

What every page imports: where the data and state directories come from (``-- --data/--state``,
``EVALCORE_DATA`` / ``EVALCORE_STATE``, the defaults), the one :class:`evalcore.Store` over them
and the fingerprints that change when it is written; deep links (the query parameters); the
page's :func:`title`. Beside it: :mod:`pages._cache` (the cached calls and charts),
:mod:`pages._text` (safe rendering, the error boundary), :mod:`pages._select` (the pickers) and
:mod:`pages._access` (who is reviewing).
"""

from __future__ import annotations

import argparse
import contextlib
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import streamlit as st

import evalcore
from evalcore import analysis

_DIRS_KEY = "_evalcore_dirs"
TABLE_PAGE = 500  # rows a paged table shows (the Suites page's items)


def resolve_dirs(argv: Sequence[str] | None) -> tuple[Path | str, Path]:
    """Data and state directories: ``--data`` / ``--state`` after ``--`` on the ``streamlit run``
    line, else ``EVALCORE_DATA`` / ``EVALCORE_STATE``, else the bundled demo and
    ``./.evalcore-state``. Data on object storage (``s3://bucket/prefix``) stays its URL."""
    parser = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    parser.add_argument("--data")
    parser.add_argument("--state")
    args, _unknown = parser.parse_known_args(list(argv or []))
    raw = args.data or os.environ.get("EVALCORE_DATA")
    state = Path(args.state) if args.state else evalcore.default_state_dir()
    if raw and "://" in raw:
        return raw.rstrip("/"), state.expanduser().resolve()
    data = Path(raw) if raw else evalcore.default_data_dir()
    return data.expanduser().resolve(), state.expanduser().resolve()


def display_path(path: Path | str) -> str:
    """A directory as the sidebar shows it: relative to the working directory when inside it (a URL as it is)."""
    if isinstance(path, str) and "://" in path:
        return path
    try:
        return str(Path(path).relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def set_dirs(data: Path | str, state: Path) -> None:
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
    out: list[tuple[str, int | None]] = []
    for sub in ("suites", "generations", "runs", "sessions", "labels"):
        try:
            out.append((sub, (data_store.data / sub).stat().st_mtime_ns))
        except FileNotFoundError:
            out.append((sub, None))
    return tuple(out)


def state_fingerprint(data_store: evalcore.Store) -> tuple:
    """Changes whenever the label store is written (SQLite's file or WAL, or PostgreSQL's edits, queues,
    assignments and sign-offs: evalcore.labels_version) or a
    pairwise session is closed into the state directory (its unblinded key, which ends the seal
    on its arms' answers: a cached drill-down shows them again)."""
    out: list[tuple] = [evalcore.labels_version(data_store)]
    sessions = Path(data_store.state) / "sessions"  # a file written in a session's directory touches it
    with contextlib.suppress(OSError):
        out += sorted((d.name, d.stat().st_mtime_ns) for d in sessions.iterdir() if d.is_dir())
    return tuple(out)


def suite_fingerprint(data_store: evalcore.Store) -> tuple:
    """Changes whenever a suite version is written to the state directory (a repair renames a
    whole version directory into ``<state>/suites/<suite_id>/``)."""
    root = Path(data_store.state) / analysis.VERSIONS_DIR
    try:
        return (
            ("suites", root.stat().st_mtime_ns),
            *sorted((p.name, p.stat().st_mtime_ns) for p in root.iterdir() if p.is_dir()),
        )
    except FileNotFoundError:
        return (("suites", None),)


# --------------------------------------------------------------------------- deep links


#: The query parameters naming the chosen runs: ``run`` (one) and ``runs`` (a comma-separated list).
#: The browser drops the query parameters when the sidebar switches page, so the session keeps the
#: last runs picked (:func:`chosen_runs`) and :func:`carried` / :func:`sync_widget` put them back
#: into the next page's link.
CARRIED = ("run", "runs")
_CHOSEN = "_chosen_runs"


def chosen_runs() -> list[str]:
    """The runs last picked on any page, in the order picked there (empty: none yet)."""
    return list(st.session_state.get(_CHOSEN) or [])


def choose_runs(run_ids: Sequence[str]) -> None:
    """Remember the runs just picked (a row on Runs, a run picker, two pickers, a list of
    instruments): the next page that picks a run opens on them."""
    picked = [r for r in dict.fromkeys(run_ids) if r]
    if picked:
        st.session_state[_CHOSEN] = picked
    else:
        st.session_state.pop(_CHOSEN, None)


def _remembered(name: str) -> str | None:
    """What ``run`` (the first run picked) or ``runs`` (all of them, comma-separated) would say."""
    runs = chosen_runs()
    return (runs[0] if name == "run" else ",".join(runs)) if runs else None


def qp(name: str, default: str | None = None) -> str | None:
    """A query parameter, or ``default`` when absent or empty."""
    value = st.query_params.get(name)
    return value if value not in (None, "") else default


def carried(name: str) -> str | None:
    """``run`` or ``runs`` (:data:`CARRIED`) from the link, else the runs last picked, written into
    the link as they are read."""
    value = qp(name)
    if value is None:
        value = _remembered(name)
        if value is not None:
            st.query_params[name] = value
    return value


def qp_int(name: str, default: int) -> int:
    """An integer query parameter; a value that is not an integer counts as absent."""
    value = qp(name)
    try:
        return int(value) if value is not None else default
    except ValueError:
        return default


def set_qp(**params: Any) -> None:
    """Set query parameters; ``None`` removes one. Setting ``run`` or ``runs`` remembers the runs
    (:func:`choose_runs`)."""
    for name in CARRIED:
        if name in params:
            choose_runs(str(params[name] or "").split(","))
    for name, value in params.items():
        if value is None or value == "":
            if name in st.query_params:
                del st.query_params[name]
        else:
            st.query_params[name] = str(value)


def sync_widget(key: str, param: str, options: Sequence[Any] | None = None) -> None:
    """Before a widget with ``key`` is drawn: make it show the query parameter ``param`` when the
    link says something else (a pasted deep link, a click elsewhere that set the parameter); a
    ``run`` absent from the link is the run last picked (:func:`chosen_runs`) when it is an option
    here, written into the link too."""
    value = qp(param)
    if value is None and param in CARRIED:  # no run in the link: the run last picked, if shown here
        value = _remembered(param)
        if value is not None and (options is None or value in options):
            st.query_params[param] = value
    if value is None or (options is not None and value not in options):
        return
    if param in CARRIED and chosen_runs()[:1] != [value]:  # a run named by the link and shown
        choose_runs([value])
    if st.session_state.get(key) != value:
        st.session_state[key] = value


def widget_to_qp(key: str, param: str, *, clear: Sequence[str] = ()) -> None:
    """on_change callback: copy a widget's value into the query parameter (and drop others)."""
    set_qp(**{param: st.session_state.get(key)}, **{c: None for c in clear})


def keep(key: str, options: Sequence[Any]) -> None:
    """Forget a widget's value that is no longer an option (another run has other rounds)."""
    if key in st.session_state and st.session_state[key] not in options:
        del st.session_state[key]


# --------------------------------------------------------------------------- the title


#: Streamlit's version the switch below was written for and checked against (tests/test_app.py pins it)
PAGES_MODE_WRITTEN_FOR = "1.67.0"
_left_pages_mode = False
LOADING = "_ui_loading"  # app.py's "Loading evalcore…" placeholder of a session's first run


def loaded() -> None:
    """Empty app.py's "Loading evalcore…" line, if this run drew one: the page's title does it as it
    is drawn (a page that stops early, st.stop, draws nothing after), app.py after any other page."""
    placeholder = st.session_state.pop(LOADING, None)
    if placeholder is not None:
        placeholder.empty()


def title(text: str) -> None:
    """The page's title, drawn once the session is known to have gone through app.py.

    Streamlit decides at server start that an app beside a ``pages/`` folder is a v1 multipage
    app, and until app.py has called ``st.navigation`` once in the process, a first request for
    ``/attribution`` runs pages/2_attribution.py alone: no page config, no data directory from the
    command line, raw file names in the sidebar. Such a run (its session has never been through
    app.py, which sets the directories) switches the process to ``st.navigation`` mode
    (``PagesManager.uses_pages_directory``, a Streamlit internal: written for
    :data:`PAGES_MODE_WRITTEN_FOR`) and reruns, which runs app.py and resolves the same URL path to
    the same page; so does a lone run that started before another session's switch. It is a call
    and not an import side effect: a rerun raised while ``pages._ui`` is being imported fails that
    import for every other session importing it at the same moment (tests/test_browser_deeplink.py,
    tests/test_browser_concurrent.py)."""
    global _left_pages_mode
    from streamlit.runtime.pages_manager import PagesManager

    if _DIRS_KEY not in st.session_state and (PagesManager.uses_pages_directory or _left_pages_mode):
        _left_pages_mode = True
        PagesManager.uses_pages_directory = False
        st.rerun()
    st.title(text)
    loaded()
