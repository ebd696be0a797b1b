"""Streamlit-only helpers shared by app.py and the pages (evalcore itself never imports streamlit).

* where the data and state directories come from (``-- --data/--state``, ``EVALCORE_DATA`` /
  ``EVALCORE_STATE``, the defaults) and the one cached :class:`evalcore.Store` over them;
* the error boundary: a typed :class:`evalcore.EvalcoreError` becomes ``st.error`` with its
  message (as a code span, so an id from a link cannot become a link or an image), never a
  traceback;
* deep links: read and set query parameters (run, item, round, criterion, session);
* safe rendering: :func:`show_text` shows answer text, judge reasons and anything else that came
  from data as plain text (``st.code``), never as markdown or HTML; :func:`md_escape` makes any
  string inert before it goes into a markdown-rendering element (``st.error``, ``st.table``...);
* identity: who is reviewing (:func:`identity`): from ``st.login`` when ``[auth]`` is configured
  in the secrets, with roles from the claims and ``<state>/roles.toml`` (:func:`login_access`),
  otherwise a name asked once per browser session and kept in the link (docs/ACCESS.md).
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import importlib
import math
import os
import re
import shlex
import string
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Concatenate, ParamSpec, TypeVar

import pandas as pd
import streamlit as st

import evalcore
from evalcore import analysis, review

_DIRS_KEY = "_evalcore_dirs"
_MD_SPECIAL = frozenset(string.punctuation)
_MD_TABLE = {ord(c): f"&#{ord(c)};" for c in _MD_SPECIAL}  # str.translate: one C pass per value
#: what GFM turns into a link without any markup: a scheme, www. and an e-mail's @ (see md_escape)
_AUTOLINK = re.compile(r"(?i)\b(https?|ftp|mailto|xmpp|www)(?=[:.])|@")


TABLE_PAGE = 500  # rows a paged table shows (the Suites page's items)


def _joined(m: re.Match) -> str:
    word = m.group(0)
    return "\u2060@" if word == "@" else word[0] + "\u2060" + word[1:]


# --------------------------------------------------------------------------- directories and store


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


# --------------------------------------------------------------------------- errors


def state_fingerprint(data_store: evalcore.Store) -> tuple:
    """Changes whenever the label store is written (WAL mode appends to the -wal file) or a
    pairwise session is closed into the state directory (its unblinded key, which ends the seal
    on its arms' answers: a cached drill-down shows them again)."""
    out: list[tuple[str, int | None]] = []
    for name in ("labels.sqlite", "labels.sqlite-wal"):
        try:
            out.append((name, (Path(data_store.state) / name).stat().st_mtime_ns))
        except FileNotFoundError:
            out.append((name, None))
    sessions = Path(data_store.state) / "sessions"  # a file written in a session's directory touches it
    with contextlib.suppress(OSError):
        out += sorted((d.name, d.stat().st_mtime_ns) for d in sessions.iterdir() if d.is_dir())
    return tuple(out)


@st.cache_data(show_spinner=False, max_entries=160)
def _call(module: str, name: str, data: str, state: str, fp: tuple, args: tuple, kwargs: tuple) -> Any:
    """``module.name(store, *args, **kwargs)``, cached per server by the fingerprint its caller
    chose (:func:`summary`, :func:`analysis_call`, :func:`suite_call`)."""
    return _resolve(module, name)(open_store(data, state), *args, **dict(kwargs))


def analysis_call(fn: Callable[Concatenate[evalcore.Store, P], R], *args: P.args, **kwargs: P.kwargs) -> R:
    """``fn(store, *args, **kwargs)`` (a figure or drill-down of evalcore's public door, e.g.
    ``analysis.attribution``), cached until the data or the label store changes, so that a widget
    click does not recompute an 18M-row aggregate (arguments must be hashable)."""
    s = store()
    fp = fingerprint(s) + state_fingerprint(s)
    return _call(fn.__module__, fn.__name__, str(s.data), str(s.state), fp, tuple(args), tuple(sorted(kwargs.items())))


def criteria_runs() -> list[dict]:
    """Runs with per-criterion verdicts (not pairwise graders) for a page's run pickers; stops the
    page with a note when there are none, and warns about the runs whose generation answered an
    older version of its suite (show them in a picker with :func:`run_label`)."""
    runs = [r for r in summary(evalcore.runs_summary) if r["kind"] == "criteria" and r["verdicts"]]
    if not runs:
        st.info("No runs with criterion verdicts in this data directory.")
        st.stop()
    suite_version_warning([r["run_id"] for r in runs])
    return runs


def md_escape(text: Any) -> str:
    """Make any string inert for a markdown-rendering element (st.error, st.warning, st.table...).

    Every ASCII punctuation character becomes a numeric character reference (``&#33;``), which
    markdown shows as that character but never reads as syntax: no links, images, emphasis, HTML,
    ``:material/...:`` icons (which would fetch from Google), ``$`` maths. GFM's literal
    autolinks (``http://...``, ``www.``, ``name@host``) are still found through the references,
    so a word joiner (U+2060, invisible) goes inside each scheme, ``www`` and before each ``@``:
    nothing that looks like an address becomes a link (tests/test_browser_injection.py)."""
    return _AUTOLINK.sub(_joined, str(text)).translate(_MD_TABLE)


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


#: What the pages import on first use, beyond what every page imports: Altair (the charts), scipy's
#: and statsmodels' tests, krippendorff, and the analysis modules `evalcore.analysis` loads on
#: first use (lazily). :func:`warm_up` imports them in the background.
WARM_MODULES = (
    "evalcore.analysis.charts",
    "scipy.stats",
    "scipy.optimize",
    "statsmodels.stats.power",
    "krippendorff",
    "evalcore.analysis.comparison",
    "evalcore.analysis.instruments",
    "evalcore.analysis.harness",
    "evalcore.analysis.scores",
    "evalcore.analysis.gating",
    "evalcore.review.judges",
    "pyarrow.compute",  # (the report card encodes people's labels with it: 0.04 s to import)
)
_warm: list[threading.Thread] = []
_WARM_LOCK = threading.Lock()


def warm_up() -> None:
    """Once per server process, after its first page is drawn: import :data:`WARM_MODULES` in a
    background thread, so that the first visit of a page with charts or tests does not wait for
    their imports (about 1 s of CPU for Altair and scipy.stats). A module that fails to import is
    left to the page that needs it, which says why."""

    def run() -> None:
        for name in WARM_MODULES:
            with contextlib.suppress(Exception):
                importlib.import_module(name)
        with contextlib.suppress(Exception):  # the cost projection's tokenizers (0.5 s)
            importlib.import_module("evalcore.llm.client").warm_encodings()
        # What is alive now (every module, class and function imported) lives as long as the
        # server: move it out of the cyclic collector's reach, so that its full collections, which
        # a page building many objects (the report card's 36,000 labels) triggers several times,
        # traverse only what the pages made (0.1 s of the Agreement page's first render at 18M).
        gc.freeze()

    with _WARM_LOCK:
        if _warm:
            return
        _warm.append(threading.Thread(target=run, name="evalcore-warm-up", daemon=True))
    _warm[0].start()


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


def new_pick(key: str, value: Any) -> bool:
    """Whether a table's or chart's selection ``value`` is a new click rather than the same
    selection shown again on a rerun; remembers it under ``key``."""
    slot = f"_picked|{key}"
    if st.session_state.get(slot) == value:
        return False
    st.session_state[slot] = value
    return True


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


def labelled_text(label: str, text: Any, *, empty: str = "(none)") -> None:
    """A caption above a block of text from the data; the caption may name ids from the data
    too, so it is made inert as well."""
    st.caption(md_escape(label))
    show_text(text, empty=empty)


# --------------------------------------------------------------------------- suites: versions, holdout, curated


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


def suite_suffix(run: dict) -> str:
    """What a run picker appends to a run on an older version of its suite: `` (⚠ suite v1,
    superseded by v2)``; nothing for a run on the current version."""
    return f" (⚠ {run['suite_mark']})" if run.get("suite_mark") else ""


def run_label(run: dict) -> str:
    """A run as a picker shows it: its id, ``(⚠ partial)`` / ``(⚠ polluted)`` when it is not
    complete, and :func:`suite_suffix`."""
    status = "" if run.get("status") in (None, "complete") else f" (⚠ {run['status']})"
    return run["run_id"] + status + suite_suffix(run)


def suite_version_warning(run_ids: Sequence[str] | None = None) -> None:
    """One st.warning naming the runs (of ``run_ids``, default all) whose generation answered an
    older version of its suite: their items were repaired since, so their figures may rest on a
    wrong test."""
    runs = evalcore.analysis.run_marks(store()).values()  # manifests only: no scan of the verdicts
    wanted = None if run_ids is None else set(run_ids)
    marked = [r for r in runs if r.get("suite_mark") and (wanted is None or r["run_id"] in wanted)]
    if marked:
        st.warning(
            "On an old suite version (items repaired since; evalcore suite versions): "
            + "; ".join(md_escape(f"{r['run_id']}: {r['suite_mark']}") for r in marked)
        )


def curated_note(suite_ids: Sequence[str]) -> None:
    """A caption beside absolute rates when they come from a curated suite."""
    cur = review.curated_suites(store(), list(dict.fromkeys(suite_ids)))
    if cur:
        st.caption(
            md_escape(
                f"From a curated suite ({', '.join(cur)}): absolute rates describe the items picked "
                "by hand, not a population."
            )
        )


def suite_call(fn: Callable[Concatenate[evalcore.Store, P], R], *args: P.args, **kwargs: P.kwargs) -> R:
    """``fn(store, *args, **kwargs)`` of suite upkeep (e.g. ``review.check``), cached until the
    data, the label store or the suite versions change."""
    s = store()
    fp = fingerprint(s) + state_fingerprint(s) + suite_fingerprint(s)
    return _call(fn.__module__, fn.__name__, str(s.data), str(s.state), fp, tuple(args), tuple(sorted(kwargs.items())))


def two_runs(
    by_id: dict[str, dict],
    defaults: tuple[str, str],
    keys: tuple[str, str],
    labels: tuple[str, str],
    columns: Sequence[Any],
) -> tuple[str, str]:
    """Two run pickers bound to the query parameters ``a`` and ``b`` (a link naming an unknown run
    is one st.error, a run without criterion verdicts one warning); each option shows the run's
    mode, generation, status and suite-version mark."""
    s = store()
    run_ids = list(by_id)
    for param in ("a", "b"):
        asked = qp(param)
        if asked is not None and asked not in by_id:
            with boundary():
                s.run(asked)  # a bad or unknown id is one st.error
                st.warning(md_escape(f"Run {asked} has no criterion verdicts."))
    for key, param, default in zip(keys, ("a", "b"), defaults):
        sync_widget(key, param, run_ids)
        st.session_state.setdefault(key, default)

    def fmt(r: str) -> str:
        run = by_id[r]
        return (
            f"{r} ({run['mode']}, {run['gen_id']})"
            + ("" if run["status"] == "complete" else f" ⚠ {run['status']}")
            + suite_suffix(run)
        )

    picked = [
        col.selectbox(label, run_ids, key=key, on_change=widget_to_qp, args=(key, param), format_func=fmt)
        for col, label, key, param in zip(columns, labels, keys, ("a", "b"))
    ]
    return picked[0], picked[1]


HOLDOUT_LABEL = "Show holdout items"
_WHO_KEYS = ("suite_by",)  # beside current_name(): the Suites page's own name field


def class_slice(page: str, suite_ids: Sequence[str]) -> tuple[str, ...]:
    """The sidebar "Only these item classes" of one page: a slice of every figure on it (empty:
    every item); kept in the link as ``?class=a,b``."""
    classes: list[str] = []
    with boundary():
        for sid in suite_ids:
            classes += [c for c in analysis_call(analysis.item_classes, sid) if c not in classes]
    if len(classes) < 2:
        return ()
    key = f"slice|{page}"
    linked = [c for c in (qp("class") or "").split(",") if c in classes]
    if key not in st.session_state and linked:
        st.session_state[key] = linked
    picked = st.sidebar.multiselect(
        "Only these item classes", classes, key=key, help="A slice: every figure on this page counts these items only."
    )
    set_qp(**{"class": ",".join(picked) or None})
    return tuple(picked)


def slice_caption(classes: Sequence[str], what: str, command: Sequence[str]) -> None:
    """The caption under a page's slice: which classes, ``what`` the slice does to the page's
    figures, and the command that gives the same figures (``command`` + ``--class C`` each)."""
    if not classes:
        return
    cmd = shlex.join(["evalcore", *command, *(x for c in classes for x in ("--class", c))])
    st.caption(
        f"Slice: items of class {md_escape(', '.join(classes))} only. {md_escape(what)} Same figures: " + code_span(cmd)
    )


def holdout_toggle(page: str, suite_ids: Sequence[str]) -> bool:
    """The sidebar toggle "Show holdout items" of one page (off by default, and off again on every
    other page). While it is on, every render of the page appends one look per suite in view
    that has holdout items to the state directory (evalcore.analysis.suites.log_look; ``evalcore suite
    looks SUITE``), with the viewer's name when known."""
    on = st.sidebar.toggle(
        HOLDOUT_LABEL, key=f"holdout|{page}", help="Holdout items are never used to tune; every look at them is logged."
    )
    if not on:
        st.sidebar.caption("Holdout items are hidden from lists and figures.")
        return False
    who = current_name() or None
    if who is None:
        typed = st.sidebar.text_input("Your name (logged with each look)", key=f"holdout_who|{page}")
        who = (typed or "").strip() or next(
            (str(st.session_state[k]).strip() for k in _WHO_KEYS if str(st.session_state.get(k) or "").strip()), None
        )
    s = store()
    logged = []
    with boundary():
        for sid in dict.fromkeys(suite_ids):
            if analysis.holdout_count(s, sid):
                analysis.log_look(s, sid, page, who)
                logged.append(sid)
    st.sidebar.caption(
        md_escape(
            "Holdout items are shown; this view is logged" + (f" for {', '.join(logged)}" if logged else "") + "."
        )
    )
    return True


def not_built(issue: int, what: str) -> None:
    """The one line a placeholder page shows."""
    st.info(f"Not built yet: {what} is built in issue {issue}.")


def pct(value: float | None, digits: int = 1) -> str:
    """A rate as a percentage string (the app's displayed precision), or a dash."""
    return "-" if value is None else f"{100 * value:.{digits}f}%"


# --------------------------------------------------------------------------- identity: who is reviewing

NAME_KEY = "_ui_name"  # the name given in this browser session (no login configured)
NAME_EPOCH = "_ui_name_epoch"  # bumped by "Change name": a fresh input; a late commit of the old one is ignored
NAME_PARAM = "reviewer"  # the query parameter that keeps the name across a reload
NAME_MAX = 80
LOCAL_ROLES = frozenset({"reviewer", "adjudicator", "admin"})  # without login: every page, as before roles


@dataclass(frozen=True)
class Identity:
    """Who is reviewing: ``name`` is what judgments and decisions are recorded under."""

    name: str
    display: str
    login: bool  # True when it comes from st.login, False for a name typed in this browser session
    roles: frozenset[str]
    sessions: tuple[str, ...] = ()  # a grader-only login's assigned pairwise sessions

    @property
    def grader_only(self) -> bool:
        return self.roles == {"grader"}

    def may_grade(self, session_id: str) -> bool:
        return session_id in self.sessions if self.grader_only else bool(self.roles)


def login_configured() -> bool:
    """True when the secrets have an ``[auth]`` section (Streamlit's st.login is then used)."""
    try:
        return "auth" in st.secrets
    except FileNotFoundError:  # no secrets file at all (StreamlitSecretNotFoundError is one)
        return False


def login_access() -> evalcore.Access | None:
    """The logged-in user's access (claims of st.user with ``<state>/roles.toml``), or None when
    login is not configured or nobody is logged in. A bad roles file raises its FormatError."""
    if not login_configured() or not st.user.is_logged_in:
        return None
    claims = {k: v for k, v in st.user.to_dict().items()}
    return evalcore.resolve_access(claims, evalcore.load_roles(store().state))


def _clean_name(value: Any) -> str:
    return " ".join(str(value or "").split())[:NAME_MAX]


def _take_name(key: str, epoch: int) -> None:
    """on_change of the name input: keep the name for this browser session and in the link. A
    commit from an input of an earlier epoch (or once a name is set) changes nothing."""
    if epoch != st.session_state.get(NAME_EPOCH, 0) or st.session_state.get(NAME_KEY):
        return
    name = _clean_name(st.session_state.get(key))
    if name:
        st.session_state[NAME_KEY] = name
        set_qp(**{NAME_PARAM: name})


def _forget_name() -> None:
    st.session_state.pop(NAME_KEY, None)
    st.session_state[NAME_EPOCH] = st.session_state.get(NAME_EPOCH, 0) + 1
    set_qp(**{NAME_PARAM: None})


def _local_name() -> str:
    """The typed name of this browser session; a link's ``?reviewer=`` (a reload, a deep link)
    sets it."""
    linked = _clean_name(qp(NAME_PARAM))
    if linked and st.session_state.get(NAME_KEY) != linked:
        st.session_state[NAME_KEY] = linked
    return str(st.session_state.get(NAME_KEY) or "")


def current_name() -> str:
    """The reviewer's name without drawing anything (for callbacks): the login's name, else the
    name typed in this browser session, else ``""``."""
    if login_configured():
        try:
            acc = login_access()
        except evalcore.EvalcoreError:
            return ""
        return acc.name if acc is not None and acc.roles else ""
    return _local_name()


def log_in_button(key: str = "login") -> None:
    st.button("Log in", key=key, type="primary", on_click=st.login)


def identity(page_key: str, *, verb: str = "Reviewing", label: str = "Your name") -> Identity | None:
    """Who is reviewing, drawn at the top of a page; None until someone is known (stop the page).

    * ``[auth]`` configured: the logged-in user, named by the provider's claims (no text box),
      with their roles; a log-in button while nobody is logged in.
    * otherwise: a name asked once per browser session. After Enter the text box is replaced by
      "VERB as NAME" and a "Change name" button, so the focus is not in a text field and no
      shortcut key can reach it; the name is kept in the link (``?reviewer=``) across a reload.
    """
    if login_configured():
        acc = login_access()
        if acc is None:
            st.info("Log in to continue.")
            log_in_button(key=f"{page_key}_login")
            return None
        shown = acc.display if acc.display == acc.name else f"{acc.display} ({acc.name})"
        st.markdown(f"{verb} as **{md_escape(shown)}**")
        return Identity(acc.name, acc.display, True, acc.roles, acc.sessions)
    name = _local_name()
    if name:
        set_qp(**{NAME_PARAM: name})  # a page switch drops the query parameters: put it back
        c_who, c_change = st.columns([4, 1], vertical_alignment="center")
        c_who.markdown(f"{verb} as **{md_escape(name)}**")
        c_change.button("Change name", key=f"{page_key}_change_name", on_click=_forget_name)
        return Identity(name, name, False, LOCAL_ROLES)
    epoch = int(st.session_state.get(NAME_EPOCH, 0))
    key = f"{page_key}_name_{epoch}"
    st.text_input(
        label,
        key=key,
        max_chars=NAME_MAX,
        placeholder="who is reviewing (press Enter)",
        on_change=_take_name,
        args=(key, epoch),
    )
    return None


def refusal() -> None:
    """What every page a role may not open shows instead of the page."""
    st.title("Not available")
    st.warning("This page is not available to your role.")


def login_page() -> None:
    """The only page while login is configured and nobody is logged in."""
    st.title("evalcore")
    st.info("Log in to continue.")
    log_in_button()


def no_role_page() -> None:
    """The only page of a login that neither the roles file nor a claim gives a role."""
    st.title("No role")
    st.warning(
        "You are logged in but have no role here: an admin gives you one in roles.toml of the state "
        "directory (docs/ACCESS.md)."
    )
    st.button("Log out", key="no_role_logout", on_click=st.logout)


#: Streamlit's version the switch below was written for and checked against (tests/test_app.py pins it)
PAGES_MODE_WRITTEN_FOR = "1.67.0"
_left_pages_mode = False


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
